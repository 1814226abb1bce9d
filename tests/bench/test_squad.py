"""``bench/squad.py``'s smoke runs on the tiny BERT and a tiny SQuAD file: the training
speed at a sequence length, and a fine-tuning run scored beside the baselines."""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers.bench import bench_script
from tests.helpers.data import write_synthetic_squad

BASELINE_ROWS = [
    "| Question-overlap sentence (test articles)", "| … without the question's words",
    "| Sliding window (SQuAD paper, dev, full train set)",
    "| Logistic regression (SQuAD paper, dev, full train set)",
]  # fmt: skip


@pytest.fixture
def tiny_squad_flags(tiny_hub_bert, tmp_path) -> list[str]:
    data_dir = write_synthetic_squad(tmp_path / "squad", articles=10, per_article=3)
    return [
        "--bert-dir", str(tiny_hub_bert.preprocess.parent), "--data-dir", str(data_dir),
        "--work-dir", str(tmp_path / "work"), "--batch-size", "8",
    ]  # fmt: skip


def positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


def score(value: float) -> bool:
    return 0 <= value <= 100


@pytest.mark.slow
def test_the_training_speed_is_measured_on_the_windows_of_each_length(
    tiny_squad_flags, tmp_path, monkeypatch
):
    bench = bench_script("squad", monkeypatch)
    speed_out = tmp_path / "squad_speed.json"
    bench.main([*tiny_squad_flags, "--speed", "--speed-lengths", "32", "--speed-steps", "1",
                "--speed-out", str(speed_out)])  # fmt: skip
    report = json.loads(speed_out.read_text())
    assert report["batch_size"] == 8 and list(report["runs"]) == ["32"]
    run = report["runs"]["32"]
    # 30-40 words of context a question: every context needs more than one window of 32.
    assert run["train_windows"] > run["train_questions"] > 0
    assert 0 < run["windows_with_answer"] < run["train_windows"] and run["doc_stride"] > 0
    assert positive(run["train_windows_per_second"]) and positive(run["estimated_epoch_minutes"])


@pytest.mark.slow
def test_a_fine_tuning_run_is_scored_and_tabled_beside_the_baselines(
    tiny_squad_flags, tmp_path, monkeypatch, capsys
):
    bench = bench_script("squad", monkeypatch)
    out = tmp_path / "squad.json"
    bench.main([*tiny_squad_flags, "--seq-length", "32", "--seeds", "0", "--out", str(out)])
    report = json.loads(out.read_text())
    assert report["settings"]["seq_length"] == 32 and report["settings"]["epochs"] == 1
    for scores in report["baselines"].values():
        assert score(scores["exact_match"]) and score(scores["f1"])
    (run,) = report["runs"]
    assert run["seed"] == 0 and len(run["history"]["loss"]) == 1
    for split in ("validation", "test"):
        assert score(run[split]["exact_match"]) and score(run[split]["f1"]), split
    assert positive(run["test"]["examples_per_second"]) and positive(run["wall_seconds"])
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    systems = [line.split(" | ")[0] for line in table[2:]]
    assert systems == ["| MiniLM-L6, seq 32, 1 epoch(s), 1 seeds (test articles)", *BASELINE_ROWS]
