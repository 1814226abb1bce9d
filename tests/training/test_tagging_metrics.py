"""Entity scores against counts made by hand from the entity lists."""

import pytest

from kerasformer.errors import KerasformerError
from kerasformer.training.tagging_metrics import entity_scores


def test_strict_scores_count_whole_entities_of_the_right_type():
    true = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O", "B-PER"]]
    predicted = [["B-PER", "O", "O", "B-LOC"], ["B-ORG", "O", "B-LOC"]]
    # True: PER(0-1) LOC(3) ORG PER; predicted: PER(0) LOC(3) ORG LOC. Right: LOC, ORG.
    scores = entity_scores(true, predicted)
    assert scores["precision"] == pytest.approx(2 / 4)
    assert scores["recall"] == pytest.approx(2 / 4)
    assert scores["entities"] == 4
    assert scores["per_type"]["PER"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "entities": 2}
    assert scores["per_type"]["LOC"]["precision"] == pytest.approx(1 / 2)
    assert scores["per_type"]["LOC"]["recall"] == pytest.approx(1.0)


def test_conlleval_reads_an_inside_tag_after_o_as_an_entity_and_strict_iob2_does_not():
    true = [["O", "B-LOC", "I-LOC"]]
    predicted = [["O", "I-LOC", "I-LOC"]]
    scores = entity_scores(true, predicted)
    assert scores["f1"] == 0.0
    assert scores["f1_conlleval"] == 1.0


def test_sentences_of_other_lengths_are_refused():
    with pytest.raises(KerasformerError, match="one predicted tag for each true tag"):
        entity_scores([["O", "O"]], [["O"]])


def test_the_confusion_matrix_matches_entities_by_exact_span():
    from kerasformer.training.tagging_metrics import entity_type_confusion

    true = [["B-PER", "I-PER", "O", "B-LOC", "O", "B-LOC"]]
    predicted = [["B-PER", "I-PER", "O", "B-PER", "B-LOC", "I-LOC"]]
    # PER(0-1) right; LOC(3) called PER; LOC(5) missed (predicted LOC is 4-5); LOC(4-5)
    # spurious.
    matrix, names = entity_type_confusion(true, predicted, ["LOC", "PER"])
    assert names == ["LOC", "PER", "(none)"]
    assert matrix == [[0, 1, 1], [0, 1, 0], [1, 0, 0]]


def test_gold_entities_are_at_their_offsets_in_the_words_joined_by_spaces():
    from kerasformer.training.tagging_metrics import entity_offsets

    words = ["U.S.", "troops", "met", "Ian", "O'Neil", "."]
    tags = ["B-LOC", "O", "O", "B-PER", "I-PER", "O"]
    text = " ".join(words)
    gold = entity_offsets(words, tags)
    assert gold == {(0, 4, "LOC"), (16, 26, "PER")}
    assert {text[start:end] for start, end, _ in gold} == {"U.S.", "Ian O'Neil"}


def test_offset_scores_count_an_entity_right_only_at_its_type_start_and_end():
    from kerasformer.training.tagging_metrics import offset_scores

    gold = [{(0, 4, "LOC"), (16, 26, "PER")}, {(3, 8, "ORG")}]
    found = [{(0, 4, "LOC"), (16, 19, "PER")}, {(3, 8, "LOC"), (10, 12, "PER")}]
    scores = offset_scores(gold, found)
    assert scores["precision"] == pytest.approx(1 / 4) and scores["recall"] == pytest.approx(1 / 3)
    assert scores["f1"] == pytest.approx(2 * (1 / 4) * (1 / 3) / (1 / 4 + 1 / 3))
    assert scores["entities"] == 3
    assert scores["per_type"]["LOC"] == {
        "precision": 0.5,
        "recall": 1.0,
        "f1": 2 / 3,
        "entities": 1,
    }
    assert scores["per_type"]["ORG"]["recall"] == 0.0 and scores["per_type"]["ORG"]["entities"] == 1
