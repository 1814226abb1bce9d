"""``bench/ner_raw_text.py``: a tagger export scored on raw text, as a user sends it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "ner_raw_text.py"


def bench_module():
    spec = importlib.util.spec_from_file_location("ner_raw_text", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gold_entities_are_at_their_offsets_in_the_words_joined_by_spaces():
    bench = bench_module()
    words = ["U.S.", "troops", "met", "Ian", "O'Neil", "."]
    tags = ["B-LOC", "O", "O", "B-PER", "I-PER", "O"]
    text = " ".join(words)
    gold = bench.gold_entities(words, tags)
    assert gold == {(0, 4, "LOC"), (16, 26, "PER")}
    assert {text[start:end] for start, end, _ in gold} == {"U.S.", "Ian O'Neil"}


def test_offset_scores_count_an_entity_right_only_at_its_type_start_and_end():
    bench = bench_module()
    gold = [{(0, 4, "LOC"), (16, 26, "PER")}, {(3, 8, "ORG")}]
    found = [{(0, 4, "LOC"), (16, 19, "PER")}, {(3, 8, "LOC"), (10, 12, "PER")}]
    scores = bench.offset_scores(gold, found)
    assert scores["precision"] == pytest.approx(1 / 4) and scores["recall"] == pytest.approx(1 / 3)
    assert scores["f1"] == pytest.approx(2 * (1 / 4) * (1 / 3) / (1 / 4 + 1 / 3))
    assert scores["entities"] == 3


def test_a_tagger_scores_the_same_on_raw_text_as_on_words_that_need_no_splitting(
    tiny_taggers, tiny_ner_files, capsys
):
    """The synthetic words hold no punctuation, so the export reads the file's own words:
    the entity offsets it returns must score as seqeval scores the tags of those words."""
    bench = bench_module()
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
