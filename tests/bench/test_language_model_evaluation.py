"""``bench/language_model_evaluation.py --smoke`` on a tiny WikiText-style split: the strided
perplexity from every word's log-probability and from the clusters agree, or the script
fails."""

from __future__ import annotations

import json
import math

import pytest

from kerasformer.datasets.wikitext import read_tokens
from kerasformer.training import language_model_metrics
from tests.helpers.bench import bench_script
from tests.helpers.data import write_wiki_tokens


def test_the_smoke_run_times_both_ways_to_one_perplexity(tmp_path, monkeypatch, capsys):
    bench = bench_script("language_model_evaluation", monkeypatch)
    split = write_wiki_tokens(tmp_path / "wiki") / "wiki.valid.tokens"
    results = tmp_path / "evaluation.json"
    # The script exits unless both ways agree: its return is the test of agreement.
    bench.main(["--smoke", "--split-file", str(split), "--results", str(results)])
    [row] = json.loads(results.read_text())["runs"]
    assert row["num_layers"] == 1 and row["tokens"] == len(read_tokens(split))
    # Untrained: neither certain nor past twice a uniform guess over the 40 ids (52 here).
    assert 1 < row["perplexity_untrained"] < 2 * bench.SMOKE_MODEL["vocab_size"]
    assert row["full_seconds"] > 0 and row["cluster_seconds"] > 0
    assert math.isclose(row["ratio"], row["cluster_seconds"] / row["full_seconds"])
    header, _, printed = capsys.readouterr().out.strip().splitlines()
    assert printed.startswith(f"| 1 | {row['tokens']} |")


def test_the_script_fails_when_the_two_ways_differ(tmp_path, monkeypatch):
    bench = bench_script("language_model_evaluation", monkeypatch)
    split = write_wiki_tokens(tmp_path / "wiki") / "wiki.valid.tokens"

    def one_percent_apart(model, ids, window, batch_size, loss_model=None):
        return 100.0 if loss_model is None else 101.0

    monkeypatch.setattr(language_model_metrics, "strided_perplexity", one_percent_apart)
    results = tmp_path / "evaluation.json"
    with pytest.raises(SystemExit, match="the two perplexities differ: 100.0 from logits"):
        bench.main(["--smoke", "--split-file", str(split), "--results", str(results)])
    assert not results.exists()
