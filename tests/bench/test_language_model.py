"""``bench/language_model.py --smoke`` on tiny WikiText-style files: the tied adaptive model
of the README's runs trains, is scored under both protocols, samples, and makes its table
and its figure."""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers.bench import bench_script
from tests.helpers.data import write_wiki_tokens
from tests.helpers.pictures import assert_not_blank, read_png

# What the README's table reads from each run.
TABLE_KEYS = (
    "settings", "epochs", "parameters", "validation_perplexity", "test_perplexity",
    "test_strided_perplexity", "train_tokens_per_second", "sampled_tokens_per_second",
    "wall_seconds",
)  # fmt: skip


@pytest.mark.slow
def test_the_smoke_run_trains_scores_samples_and_tabulates(tmp_path, monkeypatch, capsys):
    bench = bench_script("language_model", monkeypatch)
    results = tmp_path / "language_model.json"
    bench.main([
        "--smoke", "--data-dir", str(write_wiki_tokens(tmp_path / "wiki")),
        "--work-dir", str(tmp_path / "work"), "--results", str(results), "--name", "adaptive",
        "--tie-embeddings", "--adaptive-cutoffs", "4", "9",
    ])  # fmt: skip
    run = json.loads(results.read_text())["adaptive"]
    assert set(TABLE_KEYS) <= set(run)
    assert run["settings"] == {
        **bench.TINY_LANGUAGE_MODEL, "tie_embeddings": True, "adaptive_cutoffs": [4, 9]
    }  # fmt: skip
    assert run["epochs"] == len(run["validation_perplexity_by_epoch"]) == 1
    # 16 ids (14 words, padding, unknown): any sane model is between certainty and twice
    # a uniform guess's perplexity.
    for key in ("validation_perplexity", "test_perplexity", "test_strided_perplexity"):
        assert 1 < run[key] < 32, key
    for key in ("train_tokens_per_second", "sampled_tokens_per_second"):
        assert math.isfinite(run[key]) and run[key] > 0, key
    assert len(run["samples"]) == 4
    out = capsys.readouterr().out  # the training's own lines, then the table
    table = out[out.index("| run | settings |") :].splitlines()
    assert [line.split(" | ")[0] for line in table[2:]] == [
        "| adaptive", *(f"| {name}" for name, _ in bench.PUBLISHED)
    ]  # fmt: skip

    picture = tmp_path / "history.png"
    bench.main(["--results", str(results), "--plot", str(picture)])
    assert_not_blank(read_png(picture))


def test_a_smoke_run_refuses_to_write_into_bench_results(monkeypatch):
    bench = bench_script("language_model", monkeypatch)
    with pytest.raises(SystemExit, match="--results PATH outside"):
        bench.main(["--smoke"])
