"""Sentences with one tag per word, from CoNLL column files or JSON Lines, for NER.

CoNLL files hold one word per line, ``word TAG`` or the original CoNLL-2003
``word POS CHUNK TAG`` (the first and the last column are read), a blank line between
sentences, and ``-DOCSTART-`` lines between documents. JSON Lines files hold one
``{"tokens": [...], "tags": [...]}`` per line. Tags are IOB2 (``O``, ``B-TYPE``,
``I-TYPE``); a file in IOB1, where ``I-TYPE`` starts an entity, is converted and the
conversion is said. The tag set is the training file's.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kerasformer.datasets.from_files import data_name
from kerasformer.datasets.grouped_split import HeldOut, held_out, with_dealt_splits
from kerasformer.datasets.splits import AlignedArrays, Splits
from kerasformer.errors import KerasformerError
from kerasformer.files.text_files import read_utf8_text
from kerasformer.models.iob_tags import OUTSIDE, is_iob_tag, tag_type
from kerasformer.models.served_words import carry_tags, word_pieces

DOCUMENT_START = "-DOCSTART-"
JSON_LINES_SUFFIXES = (".jsonl", ".json")
# Fewer documents than this are dealt to held-out splits by sentence, not by document.
MIN_DOCUMENTS = 10


@dataclass(frozen=True)
class TaggedSentences(AlignedArrays):
    """Sentences as tuples of words, each with its tuple of tags, and their documents.

    Example:

    >>> part = TaggedSentences.of([("EU", "rejects")], [("B-ORG", "O")])
    >>> len(part), part.tokens[0]
    (1, ('EU', 'rejects'))
    """

    noun = "sentences"

    tokens: np.ndarray  # object array of tuples of words
    tags: np.ndarray  # object array of tuples of tags
    documents: np.ndarray  # the document each sentence is from (a split keeps it whole)

    @classmethod
    def of(cls, tokens, tags, documents=None) -> TaggedSentences:
        return cls(
            object_array([tuple(words) for words in tokens]),
            object_array([tuple(labels) for labels in tags]),
            np.arange(len(tokens)) if documents is None else np.asarray(documents),
        )

    def as_served_words(self) -> tuple[TaggedSentences, int, int]:
        """The sentences in the words a tagger's export reads, each piece carrying its
        word's tag (`kerasformer.models.served_words`); a sentence left with no word is
        dropped. Also how many words were split or dropped, and how many there were.
        """
        tokens, tags, kept, changed, total = [], [], [], 0, 0
        for index, (words, labels) in enumerate(zip(self.tokens, self.tags, strict=True)):
            pieces, counts = word_pieces(words)
            changed += sum(count != 1 for count in counts)
            total += len(counts)
            if pieces:
                tokens.append(pieces)
                tags.append(carry_tags(labels, counts))
                kept.append(index)
        return TaggedSentences.of(tokens, tags, self.documents[kept]), changed, total


@dataclass(frozen=True)
class TaggingData(Splits):
    """A tagging dataset: three splits of `TaggedSentences`, the tag set and what was done.

    ``tag_names`` puts ``O`` first, then the training file's tags sorted by type.
    ``notes`` says what reading changed (an IOB1 file converted) or chose (which file is
    reported as test).
    """

    name: str
    splits: dict[str, TaggedSentences]
    tag_names: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())

    def entity_types(self) -> tuple[str, ...]:
        return tuple(sorted({tag_type(tag) for tag in self.tag_names if tag != OUTSIDE}))

    def as_served_words(self) -> TaggingData:
        """Every split in the words a tagger's export reads (`TaggedSentences.as_served_words`):
        what a tagger trains and is scored on, so that it is scored on what it serves. The
        data unchanged where no word needed splitting; a note says how many did."""
        splits, notes = {}, []
        for split, part in self.splits.items():
            splits[split], changed, total = part.as_served_words()
            if changed:
                notes.append(
                    f"{split}: {changed} of {total} words ({changed / total:.1%}) split as "
                    "raw text is split for tagging (U.S. is U . S .), each piece with its "
                    "word's tag"
                )
        if not notes:
            return self
        # A name of one word in the file may now be several pieces: B-LOC, then I-LOC.
        carried = {tag for part in splits.values() for tags in part.tags for tag in tags}
        tag_names = ordered_tags(set(self.tag_names) | carried)
        return dataclasses.replace(
            self, splits=splits, tag_names=tag_names, notes=(*self.notes, *notes)
        )


def object_array(items: list) -> np.ndarray:
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array


def from_tagged_files(
    train_file: str | Path,
    validation_file: str | Path | None = None,
    test_file: str | Path | None = None,
    *,
    validation_fraction: float = 0.1,
    test_fraction: float = 0.1,
    split_seed: int = 0,
    name: str | None = None,
) -> TaggingData:
    """Tagged sentences from CoNLL column files or JSON Lines files.

    Args:
        train_file: The training sentences; its tags are the tag set.
        validation_file: Validation sentences; by default ``validation_fraction`` of the
            training file's, dealt by document (``-DOCSTART-``), or by sentence where the
            file has fewer than `MIN_DOCUMENTS`.
        test_file: Test sentences; by default ``test_fraction`` of the training file's.
        validation_fraction: Part of the training sentences held out for validation.
        test_fraction: Part of the training sentences held out for testing.
        split_seed: Seed of the held-out splits.
        name: The dataset's name in messages and export names; the training file's stem
            by default.

    Example:

    >>> data = from_tagged_files("train.txt", "valid.txt")
    >>> data.tag_names
    ('O', 'B-LOC', 'I-LOC', ...)
    """
    dealing = held_out(validation_fraction, test_fraction, split_seed)
    files = {"train": train_file, "validation": validation_file, "test": test_file}
    return tagging_data(name or data_name(train_file), files, dealing)


def tagging_data(
    name: str, files: dict, dealing: HeldOut, notes: tuple[str, ...] = ()
) -> TaggingData:
    """The splits of ``files`` (train required, None where not given); the ones not given
    are dealt from train by document."""
    train, converted = read_tagged_file(files["train"])
    tag_names = ordered_tags({tag for tags in train.tags for tag in tags})
    splits = {"train": train}
    for split in ("validation", "test"):
        if files[split] is not None:
            splits[split], more = read_tagged_file(files[split], known_tags=set(tag_names))
            converted += more
    whole_documents = len(set(train.documents.tolist())) >= MIN_DOCUMENTS
    splits = with_dealt_splits(
        splits,
        lambda part: part.documents if whole_documents else np.arange(len(part)),
        lambda part, chosen: part.rows(np.sort(chosen)),  # sentences in file order
        dealing,
    )  # fmt: skip
    said = tuple(f"{path}: IOB1 tags converted to IOB2" for path in converted)
    return TaggingData(name, splits, tag_names, notes + said)


def ordered_tags(tags: set[str]) -> tuple[str, ...]:
    """``O`` first, then ``B-`` and ``I-`` of each type, types sorted."""
    named = sorted(tags - {OUTSIDE}, key=lambda tag: (tag_type(tag), tag[0] != "B"))
    return (OUTSIDE, *named)


def read_tagged_file(
    path: str | Path, known_tags: set[str] | None = None
) -> tuple[TaggedSentences, list[str]]:
    """One file's sentences, and ``[path]`` if it was IOB1 and was converted (else ``[]``).

    Every problem is one line naming the file and line: a line with one column, a tag
    that is not IOB, a tag outside ``known_tags`` (the training file's), a file mixing
    IOB1 and IOB2.
    """
    path = Path(path)
    if not path.is_file():
        raise KerasformerError(f"{path} is not a file; give a CoNLL or JSON Lines file.")
    text = read_utf8_text(path)
    if path.suffix.lower() in JSON_LINES_SUFFIXES:
        sentences = json_lines_sentences(path, text)
    else:
        sentences = conll_sentences(path, text)
    if not sentences:
        raise KerasformerError(f"{path} holds no tagged sentence.")
    for _, tags, lines, _ in sentences:
        for tag, line in zip(tags, lines, strict=True):
            require_tag(path, line, tag, None)
    converted = as_iob2(path, sentences)
    for _, tags, lines, _ in sentences:  # as IOB2, as the training file's tags are
        for tag, line in zip(tags, lines, strict=True):
            require_tag(path, line, tag, known_tags)
    part = TaggedSentences.of(
        [s[0] for s in sentences], [s[1] for s in sentences], [s[3] for s in sentences]
    )
    return part, [str(path)] if converted else []


def conll_sentences(path: Path, text: str) -> list[tuple[list, list, list, int]]:
    """``(words, tags, line numbers, document)`` of each sentence of a CoNLL file."""
    sentences, words, tags, lines, document = [], [], [], [], 0

    def end_sentence():
        if words:
            sentences.append((list(words), list(tags), list(lines), document))
            words.clear()
            tags.clear()
            lines.clear()

    for number, line in enumerate(text.splitlines(), 1):
        columns = line.split()
        if not columns:
            end_sentence()
        elif columns[0] == DOCUMENT_START:
            end_sentence()
            document += 1
        elif len(columns) == 1:
            raise KerasformerError(
                f"{path}:{number}: one column ({columns[0]!r}); a CoNLL line is 'word TAG' "
                "or 'word POS CHUNK TAG', with a blank line between sentences."
            )
        else:
            words.append(columns[0])
            tags.append(columns[-1])
            lines.append(number)
    end_sentence()
    return sentences


def json_lines_sentences(path: Path, text: str) -> list[tuple[list, list, list, int]]:
    """``(words, tags, line numbers, document)`` of each line of a JSON Lines file."""
    sentences = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise KerasformerError(f"{path}:{number}: not JSON ({error.msg}).") from None
        if not isinstance(record, dict) or not {"tokens", "tags"} <= set(record):
            raise KerasformerError(
                f'{path}:{number}: give {{"tokens": [...], "tags": [...]}} on each line.'
            )
        words, tags = record["tokens"], record["tags"]
        if not all(is_list_of_strings(x) for x in (words, tags)):
            raise KerasformerError(f"{path}:{number}: tokens and tags must be lists of strings.")
        if len(words) != len(tags):
            raise KerasformerError(
                f"{path}:{number}: {len(words)} tokens but {len(tags)} tags; give one tag a token."
            )
        if words:
            sentences.append((words, tags, [number] * len(words), number))
    return sentences


def is_list_of_strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def require_tag(path: Path, line: int, tag: str, known_tags: set[str] | None) -> None:
    if not is_iob_tag(tag):
        raise KerasformerError(
            f"{path}:{line}: tag {tag!r} is not IOB (O, B-TYPE or I-TYPE); convert other "
            "schemes (IOBES, BILOU) to IOB2 first."
        )
    if known_tags is not None and tag not in known_tags:
        raise KerasformerError(
            f"{path}:{line}: tag {tag!r} is not in the training file's tags "
            f"({', '.join(ordered_tags(known_tags))}); the tag set comes from train."
        )


def as_iob2(path: Path, sentences: list) -> bool:
    """Convert IOB1 sentences to IOB2 in place; whether the file was IOB1.

    IOB1 starts an entity with ``I-TYPE`` (``B-TYPE`` only between two entities of one
    type); IOB2 always with ``B-TYPE``. A file that does both is refused.
    """
    iob1_line = iob2_line = None
    for _, tags, lines, _ in sentences:
        for previous, tag, line in zip([OUTSIDE, *tags], tags, lines, strict=False):
            starts = tag_type(tag) is not None and tag_type(previous) != tag_type(tag)
            if starts and tag.startswith("I-"):
                iob1_line = iob1_line or line
            elif starts and tag.startswith("B-"):
                iob2_line = iob2_line or line
    if iob1_line is None:
        return False
    if iob2_line is not None:
        raise KerasformerError(
            f"{path}:{iob1_line}: an I- tag starts an entity (IOB1), but line {iob2_line} "
            "starts one with B- (IOB2); no scheme allows both in one file."
        )
    for _, tags, _, _ in sentences:
        for index, tag in enumerate(list(tags)):
            previous = tags[index - 1] if index else OUTSIDE
            if tag.startswith("I-") and tag_type(previous) != tag_type(tag):
                tags[index] = "B-" + tag[2:]
    return True


def load_conll2003(
    data_dir: str | Path | None = None,
    validation_fraction: float = 0.1,
    split_seed: int = 0,
) -> TaggingData:
    """CoNLL-2003 English NER from ``train.txt``, ``valid.txt`` and, where there is one,
    ``test.txt``.

    With ``test.txt``, the three files are the three splits. Without it, validation is
    ``validation_fraction`` of ``train.txt``'s documents (choose settings on it) and test is
    ``valid.txt``, the official development split (the figure to report).
    """
    if data_dir is None:
        raise KerasformerError(
            "CoNLL-2003 is not downloaded by kerasformer (its licence asks for a request); "
            "give --data-dir, a folder holding train.txt and valid.txt."
        )
    folder = Path(data_dir)
    for needed in ("train.txt", "valid.txt"):
        if not (folder / needed).is_file():
            raise KerasformerError(
                f"{folder / needed} is missing; --data-dir must hold CoNLL-2003's train.txt "
                "and valid.txt."
            )
    has_test = (folder / "test.txt").is_file()
    files = {
        "train": folder / "train.txt",
        "validation": folder / "valid.txt" if has_test else None,
        "test": folder / "test.txt" if has_test else folder / "valid.txt",
    }
    note = () if has_test else (
        f"no test.txt in {folder}: validation is held out of train.txt, and test is "
        "valid.txt (the official development split)",
    )  # fmt: skip
    # Test always comes from a file here; TrainingConfig has checked validation_fraction.
    dealing = HeldOut(validation_fraction, 0.0, split_seed)
    return tagging_data("conll2003", files, dealing, note)
