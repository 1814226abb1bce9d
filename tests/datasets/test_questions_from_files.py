"""Your own SQuAD-format questions: split by article, unanswerable ones refused by name."""

import pytest

from kerasformer.datasets import from_squad_files
from kerasformer.errors import KerasformerError
from tests.helpers.data import synthetic_squad_document, write_json


def test_questions_are_held_out_by_article(tmp_path):
    document = synthetic_squad_document(articles=20, questions_per_article=5, seed=0)
    data = from_squad_files(write_json(tmp_path / "faq.json", document))
    assert data.name == "faq"
    titles = {split: set(part.titles) for split, part in data.splits.items()}
    assert not titles["train"] & titles["test"] and not titles["train"] & titles["validation"]
    assert data.articles() == {"train": 16, "validation": 2, "test": 2}
    every_id = sorted(i for part in data.splits.values() for i in part.ids)
    assert every_id == sorted(
        q["id"] for a in document["data"] for p in a["paragraphs"] for q in p["qas"]
    )


def test_a_validation_file_is_used_whole_and_test_is_held_out(tmp_path):
    train = write_json(tmp_path / "t.json", synthetic_squad_document(10, 3, seed=0))
    valid = write_json(tmp_path / "v.json", synthetic_squad_document(2, 4, seed=1))
    data = from_squad_files(train, valid, test_fraction=0.2)
    assert len(data.splits["validation"]) == 8
    assert data.articles()["test"] == 2 and data.articles()["train"] == 8


def test_an_unanswerable_question_is_read_with_no_answers(tmp_path):
    document = synthetic_squad_document(articles=4, questions_per_article=2, seed=0)
    question = document["data"][1]["paragraphs"][0]["qas"][0]
    question.update(is_impossible=True, answers=[], plausible_answers=[{"text": "x",
                    "answer_start": 0}])  # fmt: skip
    data = from_squad_files(write_json(tmp_path / "v2.json", document), test_fraction=0.25,
                            validation_fraction=0.25)  # fmt: skip
    assert data.has_unanswerable
    found = [(part.answers[i], part.answer_starts[i]) for part in data.splits.values()
             for i in range(len(part)) if part.ids[i] == question["id"]]  # fmt: skip
    assert found == [((), ())]
    answered = sum(1 for part in data.splits.values() for answers in part.answers if answers)
    assert answered == 7


def test_a_missing_file_names_the_format(tmp_path):
    with pytest.raises(KerasformerError, match="is not a file; give a SQuAD v1.1-format JSON"):
        from_squad_files(tmp_path / "nope.json")
