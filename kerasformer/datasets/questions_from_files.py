"""Your own questions for span question answering: SQuAD v1.1-format JSON files.

``from_squad_files("faq.json")`` returns the `QuestionAnsweringData` SQuAD returns. A
split without a file of its own is held out of the training file by article (its
``title``), seeded, so no paragraph is read in two splits.
"""

from __future__ import annotations

from pathlib import Path

from kerasformer.datasets.from_files import data_name
from kerasformer.datasets.grouped_split import held_out, require_every_split, splits_of_files
from kerasformer.datasets.squad import QuestionAnsweringData, SquadExamples, read_squad_file
from kerasformer.errors import KerasformerError


def from_squad_files(
    train_file: str | Path,
    validation_file: str | Path | None = None,
    test_file: str | Path | None = None,
    *,
    validation_fraction: float = 0.1,
    test_fraction: float = 0.1,
    split_seed: int = 0,
    name: str | None = None,
) -> QuestionAnsweringData:
    """Questions, contexts and answer spans from SQuAD v1.1-format JSON files.

    A split without a file of its own is held out of the training file by article (its
    ``title``), seeded, so no paragraph is read in two splits. A question marked
    ``is_impossible`` (SQuAD 2.0) with no answers is kept as unanswerable.

    Args:
        train_file: The training questions (``{"data": [{"title", "paragraphs": [{"context",
            "qas": [{"id", "question", "answers": [{"text", "answer_start"}]}]}]}]}``).
        validation_file: Validation questions; by default ``validation_fraction`` of the
            training file's, dealt by article.
        test_file: Test questions; by default ``test_fraction`` of the training file's.
        validation_fraction: Part of the training questions held out for validation;
            with ``test_fraction``, each between 0 and 1 and summing to less than 1.
        test_fraction: Part of the training questions held out for testing.
        split_seed: Seed of the held-out splits and of the order inside each split.
        name: The dataset's name in messages and export names; the training file's stem
            by default.

    Returns:
        The train, validation and test questions with their contexts and answers.

    Raises:
        KerasformerError: A file that is missing, not JSON or not in SQuAD v1.1 form, an
            answer not at its ``answer_start``, fractions out of range, or a split left
            empty (too few articles).

    Examples:
        >>> import json
        >>> from pathlib import Path
        >>> answer = {"text": "9 am", "answer_start": 12}
        >>> articles = [{"title": f"Library {i}", "paragraphs": [{"context": "It opens at 9 am.",
        ...     "qas": [{"id": str(i), "question": "When?", "answers": [answer]}]}]}
        ...     for i in range(10)]
        >>> _ = Path("library_faq.json").write_text(json.dumps({"data": articles}))
        >>> data = from_squad_files("library_faq.json")
        >>> data.sizes(), data.articles()
        ({'train': 8, 'validation': 1, 'test': 1}, {'train': 8, 'validation': 1, 'test': 1})
    """
    splits = splits_of_files(
        {"train": train_file, "validation": validation_file, "test": test_file},
        read_squad_json, lambda part: part.titles, lambda part, chosen: part.take(chosen),
        held_out(validation_fraction, test_fraction, split_seed),
    )  # fmt: skip
    name = name or data_name(train_file)
    sizes = {split: len(part) for split, part in splits.items()}
    require_every_split(name, sizes, "questions", "more articles (held out by title)")
    return QuestionAnsweringData(name=name, splits=splits)


def read_squad_json(path: str | Path) -> SquadExamples:
    if not Path(path).is_file():
        raise KerasformerError(f"{path} is not a file; give a SQuAD v1.1-format JSON file.")
    return read_squad_file(Path(path))
