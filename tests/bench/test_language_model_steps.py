"""``bench/language_model_steps.py --smoke``: one training step of the smallest model timed
with each output layer (the full softmax, the adaptive softmax's arithmetic, the package's
cluster-only loss), the epochs an hour of a tiny training file worked out from it."""

from __future__ import annotations

import json
import math

import pytest

from kerasformer.datasets.wikitext import read_tokens
from tests.helpers.bench import bench_script
from tests.helpers.data import write_wiki_tokens


@pytest.mark.parametrize("output", ["full", "adaptive", "cluster"])
def test_the_smoke_run_times_a_step_of_each_output(output, tmp_path, monkeypatch, capsys):
    bench = bench_script("language_model_steps", monkeypatch)
    train_file = write_wiki_tokens(tmp_path / "wiki") / "wiki.train.tokens"
    results = tmp_path / "steps.json"
    bench.main([
        "--smoke", "--train-file", str(train_file), "--results", str(results),
        "--output", output,
    ])  # fmt: skip
    saved = json.loads(results.read_text())
    assert saved["train_tokens_per_epoch"] == len(read_tokens(train_file))
    [row] = saved["runs"]
    assert (row["num_layers"], row["vocab_size"], row["output"]) == (1, 40, output)
    assert row["seconds_per_step"] > 0
    window = bench.SMOKE_SIZES.window
    assert math.isclose(row["tokens_per_second"], 16 * window / row["seconds_per_step"])
    assert math.isclose(
        row["epochs_per_hour"], 3600 * row["tokens_per_second"] / saved["train_tokens_per_epoch"]
    )
    assert f"| 1 | 40 | {output} | 16 |" in capsys.readouterr().out
