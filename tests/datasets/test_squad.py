import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from kerasformer.datasets.squad import load_squad, read_squad_file
from kerasformer.errors import KerasformerError


def squad_document(articles=10):
    """``articles`` articles with 1 to 3 paragraphs of 1 to 4 questions each."""
    data = []
    for a in range(articles):
        paragraphs = []
        for p in range(1 + a % 3):
            context = f"Article {a} paragraph {p} says the answer is {a * 10 + p}."
            answer = str(a * 10 + p)
            questions = [
                {
                    "id": f"{a}-{p}-{q}",
                    "question": f"What does paragraph {p} of article {a} say? ({q})",
                    "answers": [
                        {"text": answer, "answer_start": context.index(answer)},
                        {"text": f"is {answer}", "answer_start": context.index(f"is {answer}")},
                    ],
                }
                for q in range(1 + (a + p) % 4)
            ]
            paragraphs.append({"context": context, "qas": questions})
        data.append({"title": f"Article_{a}", "paragraphs": paragraphs})
    return {"version": "1.1", "data": data}


def write_squad(folder, document):
    folder.mkdir(exist_ok=True)
    text = document if isinstance(document, str) else json.dumps(document)
    (folder / "dev-v1.1.json").write_text(text, encoding="utf-8")
    return folder


def test_every_question_is_read_with_its_context_and_answers(tmp_path):
    document = squad_document()
    examples = read_squad_file(write_squad(tmp_path, document) / "dev-v1.1.json")
    expected = [
        (q["id"], article["title"], q["question"], paragraph["context"])
        for article in document["data"]
        for paragraph in article["paragraphs"]
        for q in paragraph["qas"]
    ]
    got = list(
        zip(examples.ids, examples.titles, examples.questions, examples.contexts, strict=True)
    )
    assert got == expected
    first = document["data"][0]["paragraphs"][0]["qas"][0]["answers"]
    assert examples.answers[0] == tuple(a["text"] for a in first)
    assert examples.answer_starts[0] == tuple(a["answer_start"] for a in first)


def test_split_is_by_article_keeps_every_question_and_is_seeded(tmp_path):
    folder = write_squad(tmp_path, squad_document(articles=20))
    data = load_squad(folder, validation_fraction=0.2, test_fraction=0.2, split_seed=3)
    titles = {name: set(part.titles) for name, part in data.splits.items()}
    assert not titles["train"] & titles["validation"]
    assert not titles["train"] & titles["test"]
    assert not titles["validation"] & titles["test"]
    all_ids = [i for part in data.splits.values() for i in part.ids]
    assert Counter(all_ids) == Counter(read_squad_file(folder / "dev-v1.1.json").ids)
    assert data.articles() == {name: len(t) for name, t in titles.items()}
    again = load_squad(folder, validation_fraction=0.2, test_fraction=0.2, split_seed=3)
    other = load_squad(folder, validation_fraction=0.2, test_fraction=0.2, split_seed=4)
    assert all(np.array_equal(data.splits[n].ids, again.splits[n].ids) for n in data.splits)
    assert any(set(data.splits[n].titles) != set(other.splits[n].titles) for n in data.splits)


def test_the_real_file_splits_by_article():
    folder = Path(__file__).resolve().parents[3] / "shared" / "data" / "squad"
    if not folder.is_dir():
        pytest.fail(f"{folder} is missing: CI runs with shared/ beside the checkout")
    data = load_squad(folder)
    assert sum(data.sizes().values()) == 10570
    assert sum(data.articles().values()) == 48
    for part in data.splits.values():
        for context, answers, starts in zip(
            part.contexts, part.answers, part.answer_starts, strict=True
        ):
            assert all(context[s : s + len(a)] == a for a, s in zip(answers, starts, strict=True))


@pytest.mark.parametrize(
    "document, message",
    [
        ("{not json", "not JSON"),
        ({"data": [{"title": "A"}]}, "not in SQuAD v1.1 form"),
        ({"data": []}, "has no questions"),
    ],
)
def test_bad_files_are_one_clear_error(tmp_path, document, message):
    folder = write_squad(tmp_path, document)
    with pytest.raises(KerasformerError, match=message):
        load_squad(folder)


def test_a_misplaced_answer_is_named(tmp_path):
    document = squad_document()
    document["data"][1]["paragraphs"][0]["qas"][0]["answers"][0]["answer_start"] += 1
    with pytest.raises(KerasformerError, match="question 1-0-0: answer '10' is not at"):
        load_squad(write_squad(tmp_path, document))


def test_too_few_articles_for_the_split(tmp_path):
    with pytest.raises(KerasformerError, match="too few .* split would be empty"):
        load_squad(write_squad(tmp_path, squad_document(articles=2)))


def test_missing_file_names_the_fix(tmp_path):
    with pytest.raises(KerasformerError, match="dev-v1.1.json is missing; pass --data-dir"):
        load_squad(tmp_path)


def with_first_question(change) -> dict:
    document = squad_document()
    change(document["data"][0]["paragraphs"][0]["qas"][0])
    return document


@pytest.mark.parametrize(
    "change, message",
    [
        # JSON strings are not booleans: "false" would have been read as unanswerable.
        (lambda q: q.update(is_impossible="false", answers=[]),
         "question 0-0-0: is_impossible is 'false', not true or false"),
        (lambda q: q.update(is_impossible=True),
         "question 0-0-0 is marked is_impossible but has 2 answer"),
        (lambda q: q.update(answers=[]),
         'question 0-0-0 has no answers; mark an unanswerable question "is_impossible": true'),
        (lambda q: q.update(question="  "), "question 0-0-0: its question is empty"),
    ],
)  # fmt: skip
def test_an_unclear_question_is_refused_naming_it_and_the_fix(tmp_path, change, message):
    folder = write_squad(tmp_path, with_first_question(change))
    with pytest.raises(KerasformerError, match=message.replace("(", r"\(")) as caught:
        load_squad(folder)
    assert "\n" not in str(caught.value)


def test_an_unanswerable_question_has_no_answers_whatever_its_plausible_ones(tmp_path):
    def unanswerable(question):
        question.update(is_impossible=True, plausible_answers=question["answers"], answers=[])

    document = with_first_question(unanswerable)
    folder = write_squad(tmp_path, document)
    examples = read_squad_file(folder / "dev-v1.1.json")
    assert examples.answers[0] == () and examples.answers[1] != ()
