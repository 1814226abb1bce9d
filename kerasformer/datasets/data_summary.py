"""What a user sees before training: a summary of the data, printed and kept in metrics.json.

For text classification: examples per split and per class with the imbalance ratio, text
length percentiles (whitespace words, and word pieces when a tokenizer's counter is given),
the share of train texts longer than the model reads, and test or validation texts that
are also in train. Translation pairs and language-model tokens get the parts that apply
to them. ``summary_warnings`` turns what needs attention into one-line warnings and
``format_summary`` gives the block to print.

Every summary is plain JSON (``int``, ``float``, ``str``, ``None``, lists and dicts, never
NumPy types or ``inf``), so ``json.dumps`` writes it as is. Nothing here imports TensorFlow.

Example:

>>> summary = summarize_texts(load_bbc_news(), max_length=256)
>>> print(format_summary(summary))
>>> for warning in summary_warnings(summary):
...     print(f"warning: {warning}")
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kerasformer.datasets.sentence_pairs import TranslationData
    from kerasformer.datasets.squad import QuestionAnsweringData
    from kerasformer.datasets.text_classification_data import TextClassificationData
    from kerasformer.datasets.wikitext import LanguageModelData

# A class with fewer train examples than this is warned about: a model learns little of it
# and its test scores rest on a handful of texts.
MIN_CLASS_EXAMPLES = 10
# More than this share of test texts also in train is warned about: the test score then
# measures memory as much as generalisation.
MAX_TEST_IN_TRAIN_SHARE = 0.05
PERCENTILES = (50, 90, 95, 99)
# numpy.percentile's default: linear interpolation between the two nearest lengths.
PERCENTILE_METHOD = "linear"
# The translator puts [start] and [end] around every target, and they count towards maxlen.
TARGET_MARKERS = 2
SHARE_DECIMALS = 4
RATIO_DECIMALS = 2
LENGTH_DECIMALS = 1


def summarize_texts(
    data: TextClassificationData,
    max_length: int | None = None,
    count_pieces: Callable[[list[str]], list[int]] | None = None,
) -> dict:
    """Examples, classes, lengths, truncation and train duplicates of a classification dataset.

    Args:
        data: The dataset; its ``train`` split must be there, other splits are optional.
        max_length: The most tokens the model reads (``--maxlen``, or ``--seq-length`` for
            BERT); train texts longer than this are counted as cut. None leaves
            ``truncated_share`` out (None).
        count_pieces: Given the train texts, the number of word pieces of each as the
            model reads them (with ``[CLS]`` and ``[SEP]`` where they take places of
            ``--seq-length``). When given, ``pieces`` holds their percentiles and
            truncation is counted in pieces; otherwise in whitespace words.

    Returns:
        A JSON-ready dict: ``kind`` ("texts"), ``dataset``, ``examples`` per split,
        ``classes`` (per split, per class name, every class listed), ``imbalance_ratio``
        (largest over smallest train class; None when a class has no train example, as
        the ratio would be infinite), ``words`` and ``pieces`` (train length percentiles,
        ``pieces`` None without ``count_pieces``), ``max_length``, ``length_unit``
        ("words" or "pieces"), ``truncated_share`` and ``duplicates``
        (``<split>_in_train`` and ``<split>_in_train_share`` for every other split).

    Example:

    >>> summary = summarize_texts(load_bbc_news(), max_length=256)
    >>> summary["classes"]["train"], summary["imbalance_ratio"]
    ({'business': 367, 'entertainment': 276, 'politics': 297, 'sports': 368, 'tech': 284}, 1.33)
    >>> summary["words"], summary["truncated_share"]
    ({'p50': 328.0, 'p90': 625.0, 'p95': 739.3, 'p99': 1044.1, 'max': 4432}, 0.7111)
    """
    train_texts = texts_of(data.splits["train"].texts)
    words = word_counts(train_texts)
    pieces = piece_counts(train_texts, count_pieces) if count_pieces is not None else None
    lengths, unit = (pieces, "pieces") if pieces is not None else (words, "words")
    multi_label = getattr(data, "multi_label", False)
    train_classes = class_counts(data.splits["train"].labels, data.class_names, multi_label)
    return {
        "kind": "texts",
        "dataset": data.name,
        "examples": {name: len(part) for name, part in data.splits.items()},
        "classes": {
            name: class_counts(part.labels, data.class_names, multi_label)
            for name, part in data.splits.items()
        },
        "imbalance_ratio": imbalance_ratio(train_classes),
        "words": length_percentiles(words),
        "pieces": length_percentiles(pieces) if pieces is not None else None,
        "max_length": max_length,
        "length_unit": unit,
        "truncated_share": longer_share(lengths, max_length) if max_length is not None else None,
        "duplicates": duplicates_of_train(
            {name: texts_of(part.texts) for name, part in data.splits.items()}
        ),
    }


def summarize_pairs(
    data: TranslationData,
    max_length: int | None = None,
    token_counts: tuple[Sequence[int], Sequence[int]] | None = None,
) -> dict:
    """Examples, sentence lengths, overlong pairs and train duplicates of a translation dataset.

    Args:
        data: The dataset; its ``train`` split must be there, other splits are optional.
        max_length: The model's ``--maxlen``. A train pair whose source has more words, or
            whose target has more words plus ``[start]`` and ``[end]``, is counted in
            ``over_max_length_share``: training leaves such pairs out. None leaves it None.

        token_counts: The tokens of each train source and target (without ``[start]`` and
            ``[end]``) as the model's tokenizers count them, for ``over_max_length_share``
            (subwords: ``--maxlen`` counts subwords); None counts whitespace words.

    Lengths are whitespace words; the word tokenizer also splits punctuation off, so its
    counts, and the share of overlong pairs, can be somewhat higher.

    Returns:
        A JSON-ready dict: ``kind`` ("pairs"), ``dataset``, ``examples`` per split,
        ``source_words`` and ``target_words`` (train length percentiles), ``max_length``,
        ``over_max_length_share`` and ``duplicates`` (sources of every other split also
        among the train sources, as in ``summarize_texts``).

    Example:

    >>> summary = summarize_pairs(load_spa_eng(), max_length=20)
    >>> summary["source_words"]["p95"], summary["over_max_length_share"]
    (11.0, 0.0026)
    """
    train = data.splits["train"]
    sources = word_counts(texts_of(train.sources))
    targets = word_counts(texts_of(train.targets))
    counted = (sources, targets) if token_counts is None else token_counts
    return {
        "kind": "pairs",
        "dataset": data.name,
        "examples": {name: len(part) for name, part in data.splits.items()},
        "source_words": length_percentiles(sources),
        "target_words": length_percentiles(targets),
        "max_length": max_length,
        "over_max_length_share": (
            overlong_pair_share(*counted, max_length) if max_length is not None else None
        ),
        "duplicates": duplicates_of_train(
            {name: texts_of(part.sources) for name, part in data.splits.items()}
        ),
    }


def summarize_questions(data: QuestionAnsweringData) -> dict:
    """Questions, unanswerable ones, lengths and train duplicates of a question-answering set.

    Args:
        data: The dataset; its ``train`` split must be there, other splits are optional.

    Returns:
        A JSON-ready dict: ``kind`` ("questions"), ``dataset``, ``examples`` and
        ``unanswerable`` (SQuAD 2.0's) per split, ``question_words`` and
        ``context_words`` (train length percentiles), and ``duplicates``: the questions of
        every other split asked of the same context in train (both compared as
        ``summarize_texts`` compares texts).

    Example:

    >>> summary = summarize_questions(load_squad())
    >>> summary["unanswerable"]
    {'train': 0, 'validation': 0, 'test': 0}
    """
    train = data.splits["train"]
    return {
        "kind": "questions",
        "dataset": data.name,
        "examples": {name: len(part) for name, part in data.splits.items()},
        "unanswerable": {
            name: sum(not answers for answers in part.answers) for name, part in data.splits.items()
        },
        "question_words": length_percentiles(word_counts(texts_of(train.questions))),
        "context_words": length_percentiles(word_counts(texts_of(train.contexts))),
        "duplicates": duplicates_of_train(
            {
                name: [f"{q}\n{c}" for q, c in zip(part.questions, part.contexts, strict=True)]
                for name, part in data.splits.items()
            }
        ),
    }


def summarize_tokens(data: LanguageModelData, vocabulary: Sequence[str] | None = None) -> dict:
    """Tokens per split, the vocabulary and how much of each split falls outside it.

    Args:
        data: The dataset; its ``train`` split must be there, other splits are optional.
        vocabulary: The words the model knows (a capped vocabulary); every distinct
            train token by default.

    Returns:
        A JSON-ready dict: ``kind`` ("tokens"), ``dataset``, ``tokens`` per split,
        ``vocabulary_size`` (distinct train tokens, or the vocabulary given) and
        ``out_of_vocabulary_share``: for every split (train too when a vocabulary is
        given), the share of its tokens (each occurrence) outside the vocabulary.

    Example:

    >>> summary = summarize_tokens(load_wikitext2())
    >>> summary["vocabulary_size"], summary["out_of_vocabulary_share"]
    (33278, {'validation': 0.0, 'test': 0.0})
    """
    capped = vocabulary is not None
    vocabulary = set(vocabulary) if capped else set(data.splits["train"])
    return {
        "kind": "tokens",
        "dataset": data.name,
        "tokens": {name: len(tokens) for name, tokens in data.splits.items()},
        "vocabulary_size": len(vocabulary),
        "out_of_vocabulary_share": {
            name: share(sum(token not in vocabulary for token in tokens), len(tokens))
            for name, tokens in data.splits.items()
            if capped or name != "train"
        },
    }


def summary_warnings(summary: dict) -> list[str]:
    """One-line warnings about what in a summary needs attention before training.

    A class with fewer than ``MIN_CLASS_EXAMPLES`` train examples, and more than
    ``MAX_TEST_IN_TRAIN_SHARE`` of the test texts also in train. Empty when all is well.

    Args:
        summary: A dict from ``summarize_texts``, ``summarize_pairs`` or ``summarize_tokens``.

    Example:

    >>> summary_warnings(summarize_texts(data))
    ["class 'sport' has 3 training examples (fewer than 10); add examples or merge it"]
    """
    return [*small_class_warnings(summary), *test_in_train_warnings(summary)]


def format_summary(summary: dict, with_sizes: bool = True) -> str:
    """A few lines describing a summary, to print before training.

    Warnings are not part of it: print ``summary_warnings(summary)`` after it.

    Args:
        summary: A dict from ``summarize_texts``, ``summarize_pairs`` or ``summarize_tokens``.
        with_sizes: Whether the first line gives the dataset's name and split sizes (the
            trainer has printed them already).

    Example:

    >>> print(format_summary(summarize_texts(load_bbc_news(), max_length=256)))
    bbc_news: 1,592 train, 186 validation, 447 test examples
    in train: business 367, entertainment 276, politics 297, sports 368, tech 284 (imbalance 1.33x)
    words per train text: median 328, p95 739.3, p99 1,044.1, max 4,432
    train texts cut at 256 words: 71.1%
    duplicates of train texts: validation 0 of 186 (0.0%), test 0 of 447 (0.0%)
    """
    formats = {
        "tokens": format_tokens, "pairs": format_pairs, "texts": format_texts,
        "questions": format_questions,
    }  # fmt: skip
    sizes, _, details = formats[summary["kind"]](summary).partition("\n")
    return f"{sizes}\n{details}" if with_sizes else details


# -- counting ----------------------------------------------------------------------------


def texts_of(texts: Iterable) -> list[str]:
    return [str(text) for text in texts]


def word_counts(texts: Sequence[str]) -> list[int]:
    """Whitespace-separated words of each text."""
    return [len(text.split()) for text in texts]


def piece_counts(texts: list[str], count_pieces: Callable[[list[str]], list[int]]) -> list[int]:
    counts = [int(count) for count in count_pieces(texts)]
    if len(counts) != len(texts):
        raise ValueError(f"count_pieces gave {len(counts)} counts for {len(texts)} texts.")
    return counts


def class_ids(labels) -> np.ndarray:
    """Integer class ids; rows of probabilities (a teacher's, for distillation) by argmax."""
    labels = np.asarray(labels)
    return labels.argmax(axis=-1) if labels.ndim == 2 else labels.astype(np.int64)


def class_counts(labels, class_names: Sequence[str], multi_label: bool = False) -> dict[str, int]:
    """Examples of each class, every class listed (with 0 when absent), in class order.

    A label outside the class names is listed as ``label N`` rather than dropped. A
    multi-label example (a row of 0s and 1s) counts once for each of its classes.
    """
    if multi_label:
        totals = np.asarray(labels).sum(axis=0)
        return {name: int(totals[index]) for index, name in enumerate(class_names)}
    counts = Counter(int(label) for label in class_ids(labels))
    named = {name: counts.pop(index, 0) for index, name in enumerate(class_names)}
    return named | {f"label {label}": count for label, count in sorted(counts.items())}


def imbalance_ratio(counts: dict[str, int]) -> float | None:
    """The largest class count over the smallest; None when a class has none (infinite)."""
    if not counts or min(counts.values()) == 0:
        return None
    return round(max(counts.values()) / min(counts.values()), RATIO_DECIMALS)


def length_percentiles(lengths: Sequence[int]) -> dict[str, float | int] | None:
    """``p50``, ``p90``, ``p95``, ``p99`` (linear interpolation) and ``max``; None if empty."""
    if not lengths:
        return None
    values = np.percentile(np.asarray(lengths), PERCENTILES, method=PERCENTILE_METHOD)
    percentiles = {
        f"p{q}": round(float(value), LENGTH_DECIMALS)
        for q, value in zip(PERCENTILES, values, strict=True)
    }
    return percentiles | {"max": int(max(lengths))}


def share(part: int, whole: int) -> float:
    """``part / whole`` rounded for reading; 0.0 for an empty whole."""
    return round(part / whole, SHARE_DECIMALS) if whole else 0.0


def longer_share(lengths: Sequence[int], max_length: int) -> float:
    """The share of lengths above ``max_length``."""
    return share(sum(length > max_length for length in lengths), len(lengths))


def overlong_pair_share(sources: Sequence[int], targets: Sequence[int], max_length: int) -> float:
    overlong = sum(
        source > max_length or target + TARGET_MARKERS > max_length
        for source, target in zip(sources, targets, strict=True)
    )
    return share(overlong, len(sources))


def normalized(text: str) -> str:
    """``text`` case-folded with every run of white space one space, ends stripped.

    So "The  Cat\\n" and "the cat" are the same text, but "the cats" is another.
    """
    return " ".join(text.casefold().split())


def duplicates_of_train(texts: dict[str, list[str]]) -> dict[str, int | float]:
    """For each split but train: its texts also in train (each occurrence), and their share."""
    train = {normalized(text) for text in texts["train"]}
    duplicates = {}
    for name, split_texts in texts.items():
        if name == "train":
            continue
        found = sum(normalized(text) in train for text in split_texts)
        duplicates[f"{name}_in_train"] = found
        duplicates[f"{name}_in_train_share"] = share(found, len(split_texts))
    return duplicates


# -- warnings ----------------------------------------------------------------------------


def small_class_warnings(summary: dict) -> list[str]:
    train_classes = summary.get("classes", {}).get("train", {})
    return [
        f"class {name!r} has {count} training example{'' if count == 1 else 's'} "
        f"(fewer than {MIN_CLASS_EXAMPLES}); add examples or merge it"
        for name, count in train_classes.items()
        if count < MIN_CLASS_EXAMPLES
    ]


def test_in_train_warnings(summary: dict) -> list[str]:
    found = summary.get("duplicates", {}).get("test_in_train")
    total = summary.get("examples", {}).get("test")
    # Decided on the counts, not the rounded share, so exactly 5% is never warned about.
    if not found or not total or found / total <= MAX_TEST_IN_TRAIN_SHARE:
        return []
    nouns = {"pairs": "source sentences", "questions": "questions (with their contexts)"}
    noun = nouns.get(summary.get("kind"), "texts")
    return [
        f"{found:,} of {total:,} test {noun} ({found / total:.1%}) are also in train "
        f"(ignoring case and white space), more than {MAX_TEST_IN_TRAIN_SHARE:.0%}; the test "
        "score will flatter the model: deduplicate, or drop them from test"
    ]


# -- formatting --------------------------------------------------------------------------


def format_texts(summary: dict) -> str:
    lines = [f"{summary['dataset']}: {split_sizes(summary['examples'])} examples"]
    train_classes = summary["classes"].get("train", {})
    classes = ", ".join(f"{name} {count:,}" for name, count in train_classes.items())
    ratio = summary["imbalance_ratio"]
    imbalance = f"{ratio}x" if ratio is not None else "undefined, a class has none"
    lines.append(f"in train: {classes} (imbalance {imbalance})")
    lines.append(f"words per train text: {lengths_line(summary['words'])}")
    if summary["pieces"] is not None:
        lines.append(f"word pieces per train text: {lengths_line(summary['pieces'])}")
    lines.append(
        share_line(summary, "truncated_share", "train texts cut at {max_length:,} {length_unit}")
    )
    lines.append(duplicates_line(summary["duplicates"], summary["examples"], "texts"))
    return "\n".join(line for line in lines if line)


def format_pairs(summary: dict) -> str:
    lines = [
        f"{summary['dataset']}: {split_sizes(summary['examples'])} sentence pairs",
        f"source words per train sentence: {lengths_line(summary['source_words'])}",
        f"target words per train sentence: {lengths_line(summary['target_words'])}",
        share_line(
            summary, "over_max_length_share", "train pairs over {max_length:,} words (left out)"
        ),
        duplicates_line(summary["duplicates"], summary["examples"], "sources"),
    ]
    return "\n".join(line for line in lines if line)


def share_line(summary: dict, share_key: str, template: str) -> str:
    """``template`` filled from ``summary``, then its ``share_key`` as a percentage; empty
    where that share was not measured (and the template's fields may be None)."""
    share = summary[share_key]
    return "" if share is None else f"{template.format(**summary)}: {share:.1%}"


def format_questions(summary: dict) -> str:
    unanswerable = summary["unanswerable"]
    lines = [
        f"{summary['dataset']}: {split_sizes(summary['examples'])} questions",
        f"unanswerable: {split_sizes(unanswerable)}" if any(unanswerable.values()) else "",
        f"words per train question: {lengths_line(summary['question_words'])}",
        f"words per train context: {lengths_line(summary['context_words'])}",
        duplicates_line(summary["duplicates"], summary["examples"], "questions"),
    ]
    return "\n".join(line for line in lines if line)


def format_tokens(summary: dict) -> str:
    unknown = ", ".join(
        f"{name} {value:.2%}" for name, value in summary["out_of_vocabulary_share"].items()
    )
    lines = [
        f"{summary['dataset']}: {split_sizes(summary['tokens'])} tokens",
        f"train vocabulary: {summary['vocabulary_size']:,} tokens",
        f"tokens outside the train vocabulary: {unknown}" if unknown else "",
    ]
    return "\n".join(line for line in lines if line)


def split_sizes(sizes: dict[str, int]) -> str:
    return ", ".join(f"{count:,} {name}" for name, count in sizes.items())


def lengths_line(percentiles: dict | None) -> str:
    if percentiles is None:
        return "no texts"
    return (
        f"median {readable(percentiles['p50'])}, p95 {readable(percentiles['p95'])}, "
        f"p99 {readable(percentiles['p99'])}, max {percentiles['max']:,}"
    )


def readable(value: float) -> str:
    """``1,109`` for a whole number, ``334.5`` otherwise."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def duplicates_line(duplicates: dict, examples: dict[str, int], noun: str) -> str:
    """``duplicates of train texts: test 9 of 495 (1.8%), ...``; empty without other splits."""
    parts = [
        f"{name} {duplicates[f'{name}_in_train']:,} of {count:,} "
        f"({duplicates[f'{name}_in_train_share']:.1%})"
        for name, count in examples.items()
        if f"{name}_in_train" in duplicates
    ]
    return f"duplicates of train {noun}: {', '.join(parts)}" if parts else ""
