"""SQuAD v1.1: questions on Wikipedia paragraphs, each answered by a span of the paragraph.

Only the official development file (10,570 questions on 48 articles) is used; it is split
by article into train, validation and test, so no paragraph is seen in two splits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kerasformer.backend import keras
from kerasformer.datasets.grouped_split import SPLITS, grouped_split, require_fractions
from kerasformer.datasets.splits import Splits
from kerasformer.errors import KerasformerError
from kerasformer.files.text_files import read_utf8_text
from kerasformer.network import require_reachable

SQUAD_DEV_URL = "https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v1.1.json"
FILE_NAME = "dev-v1.1.json"


@dataclass(frozen=True)
class SquadExamples:
    """Questions, their contexts and reference answers, aligned by position.

    ``answers[i]`` holds question ``i``'s reference answer texts and ``answer_starts[i]``
    the character offset of each in ``contexts[i]`` (SQuAD dev has up to 6 per question,
    often repeated); both are empty for a question the context does not answer (SQuAD
    2.0's ``is_impossible``).

    Example:

    >>> examples = load_squad("../shared/data/squad").split("validation")
    >>> examples.questions[0], examples.answers[0]
    """

    ids: np.ndarray
    titles: np.ndarray
    questions: np.ndarray
    contexts: np.ndarray
    answers: tuple[tuple[str, ...], ...]
    answer_starts: tuple[tuple[int, ...], ...]

    def __len__(self) -> int:
        return len(self.ids)

    def take(self, indices) -> SquadExamples:
        """The examples at ``indices``, in that order."""
        indices = np.asarray(indices, dtype=int)
        return SquadExamples(
            ids=self.ids[indices],
            titles=self.titles[indices],
            questions=self.questions[indices],
            contexts=self.contexts[indices],
            answers=tuple(self.answers[i] for i in indices),
            answer_starts=tuple(self.answer_starts[i] for i in indices),
        )

    def head(self, n: int) -> SquadExamples:
        return self.take(np.arange(min(n, len(self))))


@dataclass(frozen=True)
class QuestionAnsweringData(Splits):
    """A span question-answering dataset split into train, validation and test."""

    name: str
    splits: dict[str, SquadExamples]

    @property
    def has_unanswerable(self) -> bool:
        """Whether any question is unanswerable (SQuAD 2.0)."""
        return any(not answers for part in self.splits.values() for answers in part.answers)

    def articles(self) -> dict[str, int]:
        """Distinct articles per split."""
        return {name: len(set(part.titles)) for name, part in self.splits.items()}


def load_squad(
    data_dir: str | Path | None = None,
    validation_fraction: float = 0.1,
    test_fraction: float = 0.1,
    split_seed: int = 0,
) -> QuestionAnsweringData:
    """Load SQuAD v1.1 dev, split by article into train, validation and test.

    Args:
        data_dir: A folder holding ``dev-v1.1.json``. Without it, the file at
            ``SQUAD_DEV_URL`` is downloaded into the Keras cache.
        validation_fraction: Part of the questions held out for validation, approximately
            (whole articles are dealt).
        test_fraction: Part of the questions held out for test, approximately.
        split_seed: Seed of the split and of the order inside each split.

    Example:

    >>> data = load_squad("../shared/data/squad")
    >>> data.sizes(), data.articles()
    """
    require_fractions(validation_fraction, test_fraction)
    path = (Path(data_dir) if data_dir is not None else download_squad_dev()) / FILE_NAME
    examples = read_squad_file(path)
    indices = grouped_split(examples.titles, validation_fraction, test_fraction, split_seed)
    splits = {name: examples.take(chosen) for name, chosen in indices.items()}
    for name in SPLITS:
        if len(splits[name]) == 0:
            raise KerasformerError(
                f"{path} has {len(set(examples.titles))} article(s), too few for a "
                f"{validation_fraction:.0%} validation and {test_fraction:.0%} test split by "
                f"article: the {name} split would be empty; give more articles."
            )
    return QuestionAnsweringData(name="squad", splits=splits)


def download_squad_dev() -> Path:
    """Download the dev file into the Keras cache; the folder holding it."""
    require_reachable(
        SQUAD_DEV_URL, FILE_NAME, f"pass --data-dir with a folder holding {FILE_NAME}."
    )
    return Path(keras.utils.get_file(FILE_NAME, origin=SQUAD_DEV_URL)).parent


def read_squad_file(path: Path) -> SquadExamples:
    """Every question of a SQuAD v1.1 JSON file, in file order."""
    if not path.is_file():
        raise KerasformerError(
            f"{path} is missing; pass --data-dir with a folder holding {FILE_NAME} "
            "(the official SQuAD v1.1 JSON)."
        )
    try:
        document = json.loads(read_utf8_text(path))
        rows = list(squad_rows(document, path))
    except json.JSONDecodeError as error:
        raise KerasformerError(f"{path}:{error.lineno}: not JSON ({error.msg}).") from None
    except (KeyError, TypeError, AttributeError) as error:
        raise KerasformerError(
            f"{path}: not in SQuAD v1.1 form (data → paragraphs → context, qas → id, question, "
            f"answers → text, answer_start); {type(error).__name__}: {error}."
        ) from None
    if not rows:
        raise KerasformerError(f"{path} has no questions.")
    for question_id, _, _, context, answers, starts in rows:
        for text, start in zip(answers, starts, strict=True):
            if context[start : start + len(text)] != text:
                raise KerasformerError(
                    f"{path}: question {question_id}: answer {text!r} is not at character "
                    f"{start} of its context; fix answer_start."
                )
    columns = list(zip(*rows, strict=True))
    return SquadExamples(
        ids=np.array(columns[0], dtype=object),
        titles=np.array(columns[1], dtype=object),
        questions=np.array(columns[2], dtype=object),
        contexts=np.array(columns[3], dtype=object),
        answers=tuple(columns[4]),
        answer_starts=tuple(columns[5]),
    )


def squad_rows(document: dict, path: Path):
    for article in document["data"]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            for question in paragraph["qas"]:
                answers = question_answers(question, path)
                yield (
                    str(question["id"]),
                    str(article["title"]),
                    str(question["question"]),
                    str(context),
                    tuple(str(answer["text"]) for answer in answers),
                    tuple(int(answer["answer_start"]) for answer in answers),
                )


def question_answers(question: dict, path: Path) -> list:
    """One question's answers, checked: none for an unanswerable one (SQuAD 2.0's
    ``is_impossible``, whose ``plausible_answers`` are not answers), some otherwise."""
    where = f"{path}: question {question['id']}"
    text = question["question"]
    if not isinstance(text, str) or not text.strip():
        raise KerasformerError(f"{where}: its question is empty; give its text or remove it.")
    impossible = question.get("is_impossible", False)
    if not isinstance(impossible, bool):
        raise KerasformerError(
            f"{where}: is_impossible is {impossible!r}, not true or false; write the JSON "
            "boolean, without quotes."
        )
    answers = question["answers"]
    if impossible and answers:
        raise KerasformerError(
            f"{where} is marked is_impossible but has {len(answers)} answer(s); SQuAD 2.0 "
            "gives an unanswerable question none (plausible_answers may hold them): empty "
            'its "answers", or set is_impossible to false.'
        )
    if not answers and not impossible:
        raise KerasformerError(
            f'{where} has no answers; mark an unanswerable question "is_impossible": true '
            "(SQuAD 2.0), or give its answers."
        )
    return answers
