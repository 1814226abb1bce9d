"""``bench/language_model_levers.py --smoke`` on tiny WikiText-style files: the first setting
built from `kerasformer.layers` under Keras 3, trained for one epoch in this process, and
the row the README's lever table is made from."""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers.bench import bench_script
from tests.helpers.data import write_wiki_tokens

# What the README's table reads from each setting's row.
TABLE_KEYS = (
    "parameters", "best_epoch", "best_validation_perplexity", "test_perplexity_at_best",
    "test_strided_perplexity_at_best",
)  # fmt: skip


@pytest.mark.slow
def test_the_smoke_run_trains_the_first_setting_under_keras_3(tmp_path, monkeypatch, capsys):
    bench = bench_script("language_model_levers", monkeypatch)
    out = tmp_path / "levers.json"
    bench.main(
        ["--smoke", "--data-dir", str(write_wiki_tokens(tmp_path / "wiki")), "--out", str(out)]
    )
    results = json.loads(out.read_text())
    assert results["keras"].startswith("3.")
    [(name, row)] = results["runs"].items()
    assert name == "base (as bench/language_model.py)"
    assert set(TABLE_KEYS) <= set(row)
    assert row["settings"] == {**bench.BASE, **bench.SMOKE}
    assert row["best_epoch"] == len(row["validation_perplexity_by_epoch"]) == 1
    # 16 ids (14 words, padding, unknown): any sane model is between certainty and twice
    # a uniform guess's perplexity.
    for key in TABLE_KEYS[2:]:
        assert 1 < row[key] < 32 and math.isfinite(row[key]), key
    assert row["parameters"] > 0 and row["train_seconds"] > 0
    assert f"{name} {{" in capsys.readouterr().out
