"""``bench/bert_ag_news.py``'s smoke run: one recipe, one seed and one epoch of the tiny
BERT on tiny AG News, added to the runs already in its results file."""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers.bench import bench_script

# A run of another recipe, as an interrupted benchmark leaves it in --out.
EARLIER_RUN = {
    "recipe": "frozen", "seed": 0, "epochs": 3, "phases": ["frozen"] * 3,
    "validation_accuracy": 0.5, "test_accuracy": 0.5, "train_examples_per_second": 60.0,
    "wall_seconds": 360.0, "settings": {"seq_length": 64, "batch_size": 32},
}  # fmt: skip


@pytest.mark.slow
def test_a_recipe_is_fine_tuned_and_added_to_the_runs_so_far(
    tiny_hub_bert, tiny_ag_news_dir, tmp_path, monkeypatch, capsys
):
    bench = bench_script("bert_ag_news", monkeypatch)
    out = tmp_path / "bert_ag_news.json"
    out.write_text(json.dumps([EARLIER_RUN]))
    bench.main([
        "--bert-dir", str(tiny_hub_bert.preprocess.parent), "--data-dir", str(tiny_ag_news_dir),
        "--recipes", "unfrozen", "--seeds", "0", "--epochs", "1", "--out", str(out),
    ])  # fmt: skip
    earlier, run = json.loads(out.read_text())
    assert earlier == EARLIER_RUN
    assert (run["recipe"], run["seed"], run["epochs"], run["phases"]) == (
        "unfrozen", 0, 1, ["unfrozen"]
    )  # fmt: skip
    # The tiny BERT's own sequence length, not --seq-length's default for MiniLM.
    assert run["settings"] == {"seq_length": 32, "batch_size": 32}
    for name in ("validation_accuracy", "test_accuracy"):
        assert 0 <= run[name] <= 1, name
    for name in ("train_examples_per_second", "wall_seconds"):
        assert math.isfinite(run[name]) and run[name] > 0, name
    # The table printed after the run, below Keras's own progress lines.
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")][2:]
    assert [row.split("|")[1:3] for row in rows] == [[" frozen ", " 0 "], [" unfrozen ", " 0 "]]
