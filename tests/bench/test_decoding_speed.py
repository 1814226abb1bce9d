"""``bench/decoding_speed.py`` on a tiny translator: cached and uncached greedy decoding
give the same tokens, one sentence at a time and in batches, and both are timed."""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers.bench import bench_script
from tests.helpers.data import write_spa_txt


def train_tiny_translator(spa_dir, export_dir, sizes: dict):
    from kerasformer.training import TrainingConfig, train

    config = TrainingConfig(
        task="translation", dataset="spa_eng", data_dir=str(spa_dir), epochs=1,
        model_options=sizes, export_dir=str(export_dir),
    )  # fmt: skip
    train(config, verbose=0)


@pytest.mark.slow
def test_cached_and_uncached_decoding_give_the_same_tokens(tmp_path, monkeypatch, capsys):
    bench = bench_script("decoding_speed", monkeypatch)
    spa_dir, export_dir = write_spa_txt(tmp_path / "spa-eng"), tmp_path / "translator"
    train_tiny_translator(spa_dir, export_dir, bench_script("smoke", monkeypatch).TINY_TRANSFORMER)
    results = tmp_path / "decoding_speed.json"
    bench.main([
        str(export_dir), "--tokens", "8", "--sentences", "8", "--batch-sizes", "1", "4",
        "--repeats", "1", "--data-dir", str(spa_dir), "--results", str(results),
    ])  # fmt: skip
    runs = json.loads(results.read_text())["runs"]
    assert [(run["batch_size"], run["sentences"], run["tokens"]) for run in runs] == [
        (1, 8, 8), (4, 8, 8),
    ]  # fmt: skip
    for run in runs:
        # The cache is an optimisation: any token it changes is a bug.
        assert run["identical_outputs"] is True, run
        for key in ("cached_seconds", "uncached_seconds", "speedup"):
            assert math.isfinite(run[key]) and run[key] > 0, key
    rows = capsys.readouterr().out.strip().splitlines()[-2:]
    assert [row.split(" | ")[0] for row in rows] == ["| 1", "| 4"]
    assert all(row.endswith(" | yes |") for row in rows)
