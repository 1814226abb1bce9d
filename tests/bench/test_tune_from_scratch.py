"""``bench/tune_from_scratch.py --smoke``: candidates compared on validation accuracy,
kerasformer's and seed 001's own model, and the saved results' table."""

from __future__ import annotations

import json

import pytest

from tests.helpers.bench import bench_script

pytestmark = pytest.mark.slow  # two trainings


def test_a_candidate_and_the_seed_model_are_recorded_and_tabled(
    tiny_ag_news_dir, tmp_path, monkeypatch, capsys
):
    bench = bench_script("tune_from_scratch", monkeypatch)
    results = tmp_path / "tune.json"
    common = ["--results", str(results), "--smoke"]
    bench.main(["--datasets", "ag_news", "--data-dir", str(tiny_ag_news_dir), "--seeds", "0",
                "--candidates", "batch 64", bench.SEED_MODEL, *common])  # fmt: skip
    runs = json.loads(results.read_text())
    assert [run["candidate"] for run in runs] == ["batch 64", bench.SEED_MODEL]
    for run in runs:
        assert len(run["val_accuracy"]) == 1  # one epoch
        assert 0 <= run["test_accuracy"] <= 1 and run["train_examples_per_second"] > 0
    capsys.readouterr()
    bench.main(["--table", *common])
    assert f"| ag_news | {bench.SEED_MODEL} | 1 |" in capsys.readouterr().out
