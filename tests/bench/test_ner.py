"""``bench/ner.py --smoke`` on tiny CoNLL files: the memorisation baseline and both
from-scratch taggers, scored by the trainer and as served, tabled; runs already in the
results are not run again."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from tests.helpers.bench import bench_script

MODELS = ["memorise", "rnn", "transformer"]


def conll_dir(tiny_ner_files, directory):
    """The files as shared/ holds CoNLL-2003: ``train.txt`` and ``valid.txt``, the
    development split the bench reports (no ``test.txt``)."""
    directory.mkdir()
    shutil.copy(tiny_ner_files["train"], directory / "train.txt")
    shutil.copy(tiny_ner_files["test"], directory / "valid.txt")
    return directory


def test_a_smoke_run_needs_a_results_file_outside_bench_results(tmp_path, monkeypatch):
    bench = bench_script("ner", monkeypatch)
    # Were it not refused, it would stop at the empty data folder, having written nothing.
    smoke = ["--smoke", "--models", "memorise", "--data-dir", str(tmp_path)]
    for results in ([], ["--results", str(bench.RESULTS)]):
        with pytest.raises(SystemExit, match="--results PATH outside"):
            bench.main([*smoke, *results])


@pytest.mark.slow
def test_a_smoke_run_scores_serves_and_tables_each_model_once(
    tiny_ner_files, tmp_path, monkeypatch, capsys
):
    bench = bench_script("ner", monkeypatch)
    results = tmp_path / "ner.json"
    # A rate at which the BiLSTM's one epoch finds entities, so that its served F1 is
    # compared with a trainer's F1 above zero.
    argv = [
        "--smoke", "--models", *MODELS, "--batch-size", "16", "--learning-rate", "0.03",
        "--data-dir", str(conll_dir(tiny_ner_files, tmp_path / "conll2003")),
        "--work-dir", str(tmp_path), "--results", str(results),
    ]  # fmt: skip
    bench.main(argv)
    saved = results.read_text()
    runs = json.loads(saved)["runs"]
    assert [(run["model"], run["seed"]) for run in runs] == [(model, 0) for model in MODELS]
    memorised, *trained = runs
    # Every synthetic word always has the same tag: memorising them finds every entity.
    assert memorised["dev_f1"] == 1.0 and memorised["settings"] == {}
    for run in trained:
        assert run["epochs_run"] == 1 and run["parameters"] > 0
        assert run["settings"]["sizes"] == bench.SMOKE_SIZES[run["model"]]
        assert set(run["dev_per_type_f1"]) == {"LOC", "PER"}
        for key in ("dev_f1", "dev_f1_argmax", "validation_f1"):
            assert 0 <= run[key] <= 1, key
        # The taggers train on the words the export reads: served, they score the same.
        assert run["dev_f1_raw_text"] == pytest.approx(run["dev_f1"])
        assert run["dev_f1_file_words"] == pytest.approx(run["dev_f1"])
        for key in ("train_words_per_second", "served_sentences_per_second"):
            assert math.isfinite(run[key]) and run[key] > 0, key
    table = capsys.readouterr().out.strip().splitlines()[-5:]
    assert [row.split(" | ")[0] for row in table[2:]] == [f"| {model}" for model in MODELS]
    # Run again, it finds every run done: nothing trains, the same table is printed.
    bench.main(argv)
    assert results.read_text() == saved
    assert capsys.readouterr().out.strip().splitlines() == table
    bench.main(["--table", "--results", str(results)])
    assert capsys.readouterr().out.strip().splitlines() == table
