"""``bench/ner_raw_text.py``: a tagger export scored on raw text, as a user sends it."""

from __future__ import annotations

import pytest

from tests.helpers.bench import bench_script


def test_a_tagger_scores_the_same_on_raw_text_as_on_words_that_need_no_splitting(
    tiny_taggers, tiny_ner_files, capsys, monkeypatch
):
    """The synthetic words hold no punctuation, so the export reads the file's own words:
    the entity offsets it returns must score as seqeval scores the tags of those words."""
    bench = bench_script("ner_raw_text", monkeypatch)
    scores = bench.raw_text_scores(tiny_taggers["rnn"], tiny_ner_files["test"])
    tags = [line.split()[-1] for line in tiny_ner_files["test"].read_text().splitlines() if line]
    assert scores["sentences"] == 40
    assert scores["raw_text"]["entities"] == sum(tag.startswith("B-") for tag in tags)
    assert scores["raw_text"]["f1"] > 0.5
    for name in ("precision", "recall", "f1"):
        assert scores["raw_text"][name] == pytest.approx(scores["file_words"][name])
    assert bench.main([str(tiny_taggers["rnn"]), str(tiny_ner_files["test"])]) == 0
    printed = capsys.readouterr().out
    assert f"raw text (serving_default):     F1 {scores['raw_text']['f1']:.4f}" in printed
