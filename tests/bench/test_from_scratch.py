"""``bench/from_scratch.py --smoke``: kerasformer against seed 001's model, its
ablation and its scaling rows, trained, exported, served and tabled."""

from __future__ import annotations

import json

import pytest

from tests.helpers.bench import bench_script

pytestmark = pytest.mark.slow  # six tiny trainings, each exported and served


def test_every_mode_measures_both_systems_and_tables_them(
    tiny_ag_news_dir, tmp_path, monkeypatch, capsys
):
    bench = bench_script("from_scratch", monkeypatch)
    results = tmp_path / "from_scratch.json"
    common = ["--datasets", "ag_news", "--data-dir", str(tiny_ag_news_dir), "--smoke",
              "--results", str(results)]  # fmt: skip
    for mode in ("compare", "ablation", "scaling"):
        bench.main([mode, *common])
    runs = json.loads(results.read_text())
    by_mode = {mode: [(r["system"], r["label"]) for r in runs if r["mode"] == mode]
               for mode in ("compare", "ablation", "scaling")}  # fmt: skip
    assert by_mode["compare"] == [("baseline", "baseline"), ("kerasformer", "kerasformer")]
    assert by_mode["ablation"] == [("baseline", "seed 001"), ("kerasformer", "+ XLA")]
    assert by_mode["scaling"] == [("baseline", "train x0.5"), ("kerasformer", "train x0.5")]
    for run in runs:
        assert 0 <= run["test_accuracy"] <= 1 and run["train_examples_per_second"] > 0
        assert run["epochs_run"] == (2 if run["mode"] == "scaling" else 1)
        if run["mode"] != "scaling":
            assert run["inference_examples_per_second"] > 0 and run["latency_ms_median"] > 0
    printed = capsys.readouterr().out
    assert "| ag_news | **kerasformer / baseline** |" in printed
    assert "| train x0.5 |" in printed and "| ag_news | + XLA | 1 |" in printed
