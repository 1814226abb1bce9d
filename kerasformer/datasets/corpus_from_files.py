"""Your own text for a language model: UTF-8 text files, one per split or one split by paragraph.

``from_text_files("novel.txt")`` returns the `LanguageModelData` WikiText-2 returns,
tokenised the same way: each line's whitespace-separated words, then ``<eos>``. Text
that is not already tokenised keeps punctuation on its words ("end." and "end" are two
tokens). A split without a file of its own is held out of the training text in whole
paragraphs (runs of lines between blank lines; lines, in a text of fewer than ten),
seeded, and each split keeps the text's order, so a model reads running text, never
lines shuffled out of their context.
"""

from __future__ import annotations

from pathlib import Path

from kerasformer.datasets.from_files import data_name
from kerasformer.datasets.grouped_split import held_out, require_every_split, splits_of_files
from kerasformer.datasets.wikitext import LanguageModelData, line_tokens, text_lines
from kerasformer.errors import KerasformerError
from kerasformer.files.text_files import read_utf8_text

TEXT_SUFFIX = ".txt"
MIN_PARAGRAPHS = 10


def from_text_files(
    train_file: str | Path,
    validation_file: str | Path | None = None,
    test_file: str | Path | None = None,
    *,
    validation_fraction: float = 0.1,
    test_fraction: float = 0.1,
    split_seed: int = 0,
    name: str | None = None,
) -> LanguageModelData:
    r"""A token stream per split from UTF-8 text files.

    Each line's whitespace-separated words, then ``<eos>``, as `load_wikitext2` reads its
    files. A text of fewer than ten paragraphs is held out line by line.

    Args:
        train_file: The training text: a file, or a folder whose ``.txt`` files (in any
            sub-folder) are read in sorted order as one text.
        validation_file: Validation text (a file or folder); by default
            ``validation_fraction`` of the training text's paragraphs.
        test_file: Test text; by default ``test_fraction`` of the training paragraphs.
        validation_fraction: Part of the training paragraphs held out for validation;
            with ``test_fraction``, each between 0 and 1 and summing to less than 1.
        test_fraction: Part of the training paragraphs held out for testing.
        split_seed: Seed choosing which paragraphs are held out.
        name: The dataset's name in messages and export names; the training file's stem
            (or folder's name) by default.

    Returns:
        Each split's tokens as one sequence, in the text's order.

    Raises:
        KerasformerError: A file or folder that does not exist, holds no ``.txt`` files or
            no words, is not UTF-8, fractions out of range, or a split left empty.

    Examples:
        >>> from pathlib import Path
        >>> lines = [f"Chapter {i} begins." for i in range(10)]
        >>> _ = Path("chapters.txt").write_text("\n".join(lines) + "\n")
        >>> data = from_text_files("chapters.txt")
        >>> data.name, data.sizes()
        ('chapters', {'train': 32, 'validation': 4, 'test': 4})
        >>> data.splits["test"]
        ('Chapter', '4', 'begins.', '<eos>')
    """
    lines = splits_of_files(
        {"train": train_file, "validation": validation_file, "test": test_file},
        corpus_lines, paragraph_numbers,
        lambda text, chosen: [text[i] for i in sorted(chosen)],  # the text's own order
        held_out(validation_fraction, test_fraction, split_seed),
    )  # fmt: skip
    name = name or data_name(train_file)
    words = {split: sum(len(line.split()) for line in part) for split, part in lines.items()}
    require_every_split(name, words, "words", "more paragraphs (separated by blank lines)")
    return LanguageModelData(name=name, splits={s: line_tokens(part) for s, part in lines.items()})


def corpus_lines(path: str | Path) -> list[str]:
    """The lines of a text file, or of a folder's ``.txt`` files one after another."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob(f"*{TEXT_SUFFIX}") if p.is_file())
        if not files:
            raise KerasformerError(
                f"{path} holds no {TEXT_SUFFIX} files; give a text file, or a folder of them."
            )
    elif path.is_file():
        files = [path]
    else:
        raise KerasformerError(f"{path} does not exist; give a UTF-8 text file or a folder.")
    lines = [line for file in files for line in text_lines(read_utf8_text(file))]
    if not any(line.strip() for line in lines):
        raise KerasformerError(f"{path} holds no text; give a file with words in it.")
    return lines


def paragraph_numbers(lines: list[str]) -> list[int]:
    """Each line's paragraph: a line of text after blank lines starts the next one (the
    blank lines belong to the paragraph they end).

    A text of fewer than ``MIN_PARAGRAPHS`` paragraphs (one without blank lines) is
    dealt line by line: whole paragraphs could not make three splits of it.
    """
    numbers, paragraph, after_blank = [], 0, False
    for line in lines:
        blank = not line.strip()
        if after_blank and not blank:
            paragraph += 1
        numbers.append(paragraph)
        after_blank = blank
    if len(set(numbers)) < MIN_PARAGRAPHS:
        return list(range(len(lines)))
    return numbers
