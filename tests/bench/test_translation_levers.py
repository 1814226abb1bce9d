"""``bench/translation_levers.py``'s three steps on tiny spa-eng, all in this process:
prepare the subword ids, run the smoke setting under Keras 3, score its translations."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.helpers.bench import bench_script
from tests.helpers.data import write_spa_txt

# Scores that must read as percentages.
SCORES = ("validation_bleu_greedy", "validation_chrf_greedy", "validation_bleu_lowercase_greedy")
LIMIT = 8  # pairs to train on and validation sentences to translate


@pytest.mark.slow
def test_prepare_run_and_score_the_smoke_setting(tmp_path, monkeypatch, capsys):
    bench = bench_script("translation_levers", monkeypatch)
    ids, ran, scored = (tmp_path / name for name in ("ids.npz", "run.json", "scored.json"))
    # A refusal's data is missing: were it not refused, it would stop there, writing nothing.
    missing = str(tmp_path / "missing.npz")
    spa_dir = write_spa_txt(tmp_path / "spa-eng")  # 120 pairs: 96, 12 and 12
    bench.main(["prepare", "--data-dir", str(spa_dir), "--out", str(ids)])
    data = np.load(ids)
    for vocabulary in ("separate", "shared"):
        targets = data[f"{vocabulary}_train_target"]
        assert len(targets) == len(data[f"{vocabulary}_train_source"]) == 96
        assert (targets[:, 0] == bench.START).all() and (targets == bench.END).any(1).all()
    assert len(data["validation_references"]) == 12

    with pytest.raises(SystemExit, match="--out PATH outside"):
        bench.main(["run", "--smoke", "--data", missing, "--out", str(bench.RESULTS)])
    bench.main(["run", "--smoke", "--limit", str(LIMIT), "--data", str(ids), "--out", str(ran)])
    runs = json.loads(ran.read_text())["runs"]
    assert list(runs) == [bench.PAPER]
    row = runs[bench.PAPER]
    assert row["settings"] == {**bench.BASE, **bench.SETTINGS[bench.PAPER], **bench.SMOKE}
    assert row["smoke"] is True and row["vocabulary"] == "shared"
    assert len(row["val_accuracy_by_epoch"]) == 2
    assert all(0 <= accuracy <= 1 for accuracy in row["val_accuracy_by_epoch"])
    translations = row["validation_greedy_ids"]
    assert len(translations) == LIMIT
    vocab_size = int(data["shared_vocab_size"])
    assert all(0 <= i < vocab_size for sentence in translations for i in sentence)

    # A smoke run's scores go only where --into says, never into bench/results/.
    with pytest.raises(SystemExit, match="--into PATH outside"):
        bench.main(["score", str(ran), "--data", missing])
    bench.main(["score", str(ran), "--data", str(ids), "--into", str(scored)])
    row = json.loads(scored.read_text())["runs"][bench.PAPER]
    assert "validation_greedy_ids" not in row
    assert all(0 <= row[name] <= 100 for name in SCORES)
    assert len(row["sample"]) == 3 and all(isinstance(text, str) for text in row["sample"])
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    assert printed.startswith(f"| {bench.PAPER} | {row['parameters']:,} | ")
