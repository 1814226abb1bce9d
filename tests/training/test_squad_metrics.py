"""SQuAD metrics against cases worked out by hand from the official scripts' rules."""

import pytest

from kerasformer.errors import KerasformerError
from kerasformer.training.squad_metrics import squad_scores


def one(prediction: str, reference: str, unanswerable: bool = False) -> tuple[float, float]:
    """Exact match and F1 of one question with one reference answer."""
    scores = squad_scores([prediction], [[reference]], unanswerable=unanswerable)
    return scores["exact_match"], scores["f1"]


@pytest.mark.parametrize(
    "prediction, reference",
    [
        ("The  Denver Broncos!", "denver broncos"),
        ("an apple a day", "Apple day"),
        ("  \t50,000\n ", "50000"),
        # Punctuation goes first, so "the-end" becomes one word and keeps its "the".
        ("the-end", "theend"),
    ],
)
def test_answers_match_once_case_punctuation_articles_and_spaces_are_gone(prediction, reference):
    assert one(prediction, reference) == (100.0, 100.0)


def test_articles_go_only_as_whole_words():
    # "Theatre" keeps its letters: one shared token of two, so F1 2/3.
    assert one("Theatre Anthem", "theatre") == (0.0, pytest.approx(100 * 2 / 3))


def test_f1_is_token_overlap():
    # 1 shared token: precision 1/2, recall 1/1.
    assert one("Denver Broncos", "Broncos") == (0.0, pytest.approx(100 * 2 / 3))
    # Repeated tokens count min(2, 3) = 2 times: precision 2/4, recall 2/3.
    assert one("x y y z", "y y y")[1] == pytest.approx(
        100 * 2 * (1 / 2) * (2 / 3) / (1 / 2 + 2 / 3)
    )
    assert one("", "Broncos") == (0.0, 0.0)


def test_a_reference_that_normalises_to_nothing_scores_as_each_official_script_does():
    # evaluate-v1.1.py: equal empty strings, but no shared token.
    assert one("", "the") == (100.0, 0.0)
    assert one("The", "a") == (100.0, 0.0)
    # evaluate-v2.0.py drops such a reference: the question wants no answer, and an
    # empty one (or one that normalises to nothing) is right on both counts.
    assert one("", "the", unanswerable=True) == (100.0, 100.0)
    assert one("a", "the", unanswerable=True) == (100.0, 100.0)
    assert one("Broncos", "the", unanswerable=True) == (0.0, 0.0)


def test_squad_scores_take_the_best_reference_and_average():
    scores = squad_scores(
        ["Broncos", "Denver Broncos", "Carolina"],
        [["Denver Broncos", "Broncos"], ["the Broncos"], ["Panthers"]],
    )
    # Question 1: exact via the second answer; question 2: F1 2/3; question 3: nothing.
    assert scores["exact_match"] == pytest.approx(100 / 3)
    assert scores["f1"] == pytest.approx(100 * (1 + 2 / 3) / 3)
    assert scores["questions"] == 3


@pytest.mark.parametrize(
    "predictions, references, message",
    [
        (["a"], [["a"], ["b"]], "1 predictions for 2 questions"),
        ([], [], "no questions"),
        (["a"], ["a"], "list of one or more reference answers"),
        (["a"], [[]], "list of one or more reference answers"),
    ],
)
def test_bad_input_is_one_clear_error(predictions, references, message):
    with pytest.raises(KerasformerError, match=message):
        squad_scores(predictions, references)


def test_squad_2_unanswerable_questions_want_an_empty_answer_and_are_reported_apart():
    predictions = ["Denver Broncos", "", "the", "Panthers", "Broncos"]
    references = [["Broncos"], [], [], [], ["Denver Broncos"]]
    scores = squad_scores(predictions, references, unanswerable=True)
    # By hand, evaluate-v2.0.py's rules: question 0 EM 0, F1 2/3; 1: "" right (1, 1);
    # 2: "the" normalises to "" (1, 1); 3: an answer where none is (0, 0); 4: EM 0,
    # F1 2 * (1 * 1/2) / (1 + 1/2) = 2/3.
    assert scores["exact_match"] == pytest.approx(100 * 2 / 5)
    assert scores["f1"] == pytest.approx(100 * (2 / 3 + 1 + 1 + 0 + 2 / 3) / 5)
    assert scores["has_answer_exact_match"] == 0.0
    assert scores["has_answer_f1"] == pytest.approx(100 * 2 / 3)
    assert scores["has_answer_questions"] == 2
    assert scores["no_answer_exact_match"] == pytest.approx(100 * 2 / 3)
    assert scores["no_answer_f1"] == pytest.approx(100 * 2 / 3)
    assert scores["no_answer_questions"] == 3


def test_without_squad_2_an_unanswerable_question_is_still_refused():
    with pytest.raises(KerasformerError, match="question 1 needs a list of one or more"):
        squad_scores(["a", ""], [["a"], []])
    only_answerable = squad_scores(["Broncos"], [["Broncos"]], unanswerable=True)
    assert "no_answer_f1" not in only_answerable and only_answerable["has_answer_f1"] == 100
