"""``bench/distillation.py --smoke``: the tiny BERT fine-tuned as the teacher, and the
smallest student distilled from it and trained on the labels alone, on tiny AG News."""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers.bench import bench_script

SYSTEMS = ["distilled student", "from scratch, labels only"]


def positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


def test_a_smoke_run_refuses_to_write_into_the_measured_results(monkeypatch):
    bench = bench_script("distillation", monkeypatch)
    with pytest.raises(SystemExit, match="give --out PATH outside"):
        bench.main(["--smoke"])


@pytest.mark.slow
def test_the_teacher_and_both_students_are_trained_served_and_tabled(
    tiny_hub_bert, tiny_ag_news_dir, tmp_path, monkeypatch, capsys
):
    """Slow (about 20 s): it fine-tunes the tiny BERT, trains two students, and
    exports and serves all three, as the benchmark does."""
    bench = bench_script("distillation", monkeypatch)
    out = tmp_path / "distillation.json"
    bench.main([
        "--smoke", "--bert-dir", str(tiny_hub_bert.preprocess.parent),
        "--data-dir", str(tiny_ag_news_dir), "--work-dir", str(tmp_path / "work"),
        "--out", str(out),
    ])  # fmt: skip
    report = json.loads(out.read_text())
    teacher = report["teacher"]
    assert teacher["export"] == str(tmp_path / "work" / "teacher-bert-dir")
    assert [run["system"] for run in report["runs"]] == SYSTEMS
    for row in (teacher, *report["runs"]):
        assert 0 <= row["validation_accuracy"] <= 1 and 0 <= row["test_accuracy"] <= 1
        assert positive(row["serving_examples_per_second"])
    distilled, scratch = report["runs"]
    assert distilled["seed"] == scratch["seed"] == 0
    assert distilled["settings"] == {
        "epochs": 1, "temperature": 2.0, "teacher_weight": 0.5, "unlabelled_bbc": False,
    }  # fmt: skip
    assert scratch["settings"] == {"epochs": 1}
    assert positive(distilled["teacher_serving_examples_per_second"])
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    # The last table printed: the teacher, each student, the TF-IDF baseline.
    systems = [line.split(" | ")[0] for line in table[-4:]]
    assert systems == [
        "| MiniLM-L6 teacher (fine-tuned, seed 0)",
        f"| distilled student {json.dumps(distilled['settings'], sort_keys=True)}",
        '| from scratch, labels only {"epochs": 1}', "| TF-IDF + logistic regression",
    ]  # fmt: skip
