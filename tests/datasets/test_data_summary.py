"""The data summary against counts and percentiles worked out here in plain Python."""

import json
import math

import numpy as np
import pytest

from kerasformer.datasets.data_summary import (
    MAX_TEST_IN_TRAIN_SHARE,
    MIN_CLASS_EXAMPLES,
    format_summary,
    summarize_pairs,
    summarize_texts,
    summarize_tokens,
    summary_warnings,
)
from kerasformer.datasets.sentence_pairs import SentencePairs, TranslationData
from kerasformer.datasets.text_classification_data import LabeledTexts, TextClassificationData
from kerasformer.datasets.wikitext import LanguageModelData

CLASSES = ("ham", "spam")


def labeled(rows):
    """LabeledTexts of ``(text, label)`` rows."""
    texts = [text for text, _ in rows]
    labels = [label for _, label in rows]
    return LabeledTexts(np.array(texts, dtype=object), np.array(labels, dtype=np.int64))


def texts_data(train, validation=(("held out", 0),), test=(("unseen", 1),), classes=CLASSES):
    return TextClassificationData(
        name="toy",
        class_names=classes,
        splits={"train": labeled(train), "validation": labeled(validation), "test": labeled(test)},
    )


def numbered(count, label, prefix="text"):
    """``count`` distinct texts of one class."""
    return [(f"{prefix} {label} {i}", label) for i in range(count)]


def linear_percentile(values, q):
    """The q-th percentile by linear interpolation between closest ranks, by hand."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def only_plain_json(value):
    """True when ``value`` holds nothing but JSON's own Python types (no NumPy scalars)."""
    if isinstance(value, dict):
        return all(type(key) is str and only_plain_json(item) for key, item in value.items())
    if isinstance(value, list):
        return all(only_plain_json(item) for item in value)
    return value is None or type(value) in (int, float, str, bool)


# -- examples and classes ----------------------------------------------------------------


def test_examples_and_classes_are_counted_per_split():
    data = texts_data(
        train=numbered(12, 0) + numbered(30, 1),
        validation=numbered(2, 0) + numbered(3, 1),
        test=numbered(4, 1),
    )
    summary = summarize_texts(data)
    assert summary["kind"] == "texts"
    assert summary["dataset"] == "toy"
    assert summary["examples"] == {"train": 42, "validation": 5, "test": 4}
    assert summary["classes"] == {
        "train": {"ham": 12, "spam": 30},
        "validation": {"ham": 2, "spam": 3},
        # A class missing from a split is listed with 0.
        "test": {"ham": 0, "spam": 4},
    }


def test_imbalance_ratio_is_largest_over_smallest_train_class():
    data = texts_data(numbered(12, 0) + numbered(30, 1) + numbered(20, 2), classes=("a", "b", "c"))
    assert summarize_texts(data)["imbalance_ratio"] == 30 / 12 == 2.5


def test_imbalance_ratio_is_rounded_to_two_decimals():
    data = texts_data(numbered(3, 0) + numbered(10, 1))
    assert summarize_texts(data)["imbalance_ratio"] == 3.33


def test_imbalance_ratio_is_none_when_a_class_has_no_train_example():
    data = texts_data(numbered(5, 0) + numbered(5, 1), classes=("a", "b", "empty"))
    summary = summarize_texts(data)
    assert summary["classes"]["train"] == {"a": 5, "b": 5, "empty": 0}
    assert summary["imbalance_ratio"] is None
    assert "imbalance undefined" in format_summary(summary)


def test_probability_rows_are_counted_by_their_largest_class():
    data = texts_data(numbered(3, 0))
    rows = np.array([[0.9, 0.1], [0.2, 0.8], [0.4, 0.6]], dtype=np.float32)
    data.splits["train"] = LabeledTexts(data.splits["train"].texts, rows)
    assert summarize_texts(data)["classes"]["train"] == {"ham": 1, "spam": 2}


def test_a_label_outside_the_class_names_is_listed_not_dropped():
    data = texts_data(numbered(2, 0) + numbered(1, 5))
    assert summarize_texts(data)["classes"]["train"] == {"ham": 2, "spam": 0, "label 5": 1}


# -- lengths -----------------------------------------------------------------------------


def texts_of_lengths(lengths):
    return [(" ".join(["w"] * length), i % 2) for i, length in enumerate(lengths)]


def test_word_percentiles_on_a_list_with_a_known_answer():
    # 1 to 101 words: with linear interpolation the q-th percentile is exactly q + 1.
    summary = summarize_texts(texts_data(texts_of_lengths(range(1, 102))))
    assert summary["words"] == {"p50": 51.0, "p90": 91.0, "p95": 96.0, "p99": 100.0, "max": 101}


def test_word_percentiles_interpolate_between_lengths():
    # 1 to 5 words: p90 lies 0.6 of the way from 4 to 5, p99 at 4.96 (shown to one decimal).
    summary = summarize_texts(texts_data(texts_of_lengths([5, 1, 4, 2, 3])))
    assert summary["words"] == {"p50": 3.0, "p90": 4.6, "p95": 4.8, "p99": 5.0, "max": 5}


def test_word_percentiles_match_a_hand_written_linear_percentile():
    lengths = [int(n) for n in np.random.default_rng(3).integers(1, 400, size=257)]
    words = summarize_texts(texts_data(texts_of_lengths(lengths)))["words"]
    for q in (50, 90, 95, 99):
        assert words[f"p{q}"] == pytest.approx(linear_percentile(lengths, q), abs=0.051)
    assert words["max"] == max(lengths)


def test_words_are_split_on_any_white_space():
    rows = [("  one\ttwo\nthree  ", 0), ("four", 1)]
    assert summarize_texts(texts_data(rows))["words"]["max"] == 3


def test_word_pieces_come_from_the_given_counter_over_the_train_texts():
    train = [("aa bb", 0), ("aaaa", 1), ("a b c d e f", 0)]
    seen = []

    def characters(texts):
        seen.append(texts)
        return [len(text) for text in texts]

    summary = summarize_texts(texts_data(train), count_pieces=characters)
    assert seen == [["aa bb", "aaaa", "a b c d e f"]]
    assert summary["pieces"]["max"] == 11
    assert summary["pieces"]["p50"] == 5.0
    assert summary["words"]["max"] == 6


def test_pieces_are_none_without_a_counter():
    summary = summarize_texts(texts_data(numbered(3, 0)))
    assert summary["pieces"] is None
    assert summary["length_unit"] == "words"


def test_a_counter_giving_the_wrong_number_of_counts_is_refused():
    with pytest.raises(ValueError, match="2 counts for 3 texts"):
        summarize_texts(texts_data(numbered(3, 0)), count_pieces=lambda texts: [1, 2])


# -- truncation --------------------------------------------------------------------------


def test_truncated_share_counts_words_longer_than_max_length():
    # 3 of 8 texts have more than 4 words; exactly 4 is not cut.
    summary = summarize_texts(texts_data(texts_of_lengths([1, 4, 4, 5, 9, 2, 3, 6])), 4)
    assert summary["truncated_share"] == 3 / 8
    assert summary["max_length"] == 4
    assert summary["length_unit"] == "words"


def test_truncated_share_counts_pieces_when_a_counter_is_given():
    # Two words each, but the fake tokenizer gives 3, 8, 10 and 12 pieces.
    pieces = {"a b": 3, "bb cc": 8, "dd ee": 10, "ff gg": 12}
    rows = [(text, 0) for text in pieces]
    summary = summarize_texts(
        texts_data(rows),
        max_length=8,
        count_pieces=lambda texts: [pieces[text] for text in texts],
    )
    assert summary["length_unit"] == "pieces"
    assert summary["truncated_share"] == 2 / 4
    # Counted in words, nothing would be cut.
    assert summarize_texts(texts_data(rows), max_length=8)["truncated_share"] == 0.0


def test_truncated_share_is_none_without_max_length():
    assert summarize_texts(texts_data(numbered(3, 0)))["truncated_share"] is None


def test_truncated_share_is_rounded_to_four_decimals():
    summary = summarize_texts(texts_data(texts_of_lengths([5, 1, 1])), max_length=2)
    assert summary["truncated_share"] == 0.3333


# -- duplicates --------------------------------------------------------------------------


def test_a_duplicate_differing_only_in_case_and_white_space_is_counted():
    train = [("The cat sat on the mat.", 0), ("Dogs bark", 1)]
    test = [
        ("  the CAT sat\ton the\n mat. ", 0),  # same text, other case and spacing
        ("The cat sat on the hat.", 0),  # one word differs
        ("The cat sat on the mat", 0),  # the full stop differs
        ("DOGS   BARK", 1),  # same text
        ("Birds sing", 1),
    ]
    validation = [("dogs bark", 1), ("dogs barked", 1)]
    duplicates = summarize_texts(texts_data(train, validation, test))["duplicates"]
    assert duplicates == {
        "validation_in_train": 1,
        "validation_in_train_share": 0.5,
        "test_in_train": 2,
        "test_in_train_share": 0.4,
    }


def test_a_test_text_repeated_in_test_counts_each_time():
    train = [("same", 0), ("other", 1)]
    test = [("same", 0), ("Same", 0), ("new", 1)]
    duplicates = summarize_texts(texts_data(train, test=test))["duplicates"]
    assert duplicates["test_in_train"] == 2
    assert duplicates["test_in_train_share"] == 0.6667


def test_case_folding_goes_beyond_lower_case():
    # casefold() maps the German sharp s to "ss"; lower() would not.
    train = [("STRASSE", 0), ("x", 1)]
    duplicates = summarize_texts(texts_data(train, test=[("straße", 0)]))["duplicates"]
    assert duplicates["test_in_train"] == 1


# -- warnings ----------------------------------------------------------------------------


def test_thresholds_are_ten_examples_and_five_percent():
    assert MIN_CLASS_EXAMPLES == 10
    assert MAX_TEST_IN_TRAIN_SHARE == 0.05


def test_a_class_with_nine_train_examples_is_warned_about_and_ten_is_not():
    summary = summarize_texts(texts_data(numbered(9, 0) + numbered(10, 1)))
    assert summary_warnings(summary) == [
        "class 'ham' has 9 training examples (fewer than 10); add examples or merge it"
    ]
    assert summary_warnings(summarize_texts(texts_data(numbered(10, 0) + numbered(10, 1)))) == []


def test_every_small_class_is_warned_about_including_an_empty_one():
    data = texts_data(numbered(1, 0) + numbered(20, 1) + numbered(0, 2), classes=("a", "b", "c"))
    assert summary_warnings(summarize_texts(data)) == [
        "class 'a' has 1 training example (fewer than 10); add examples or merge it",
        "class 'c' has 0 training examples (fewer than 10); add examples or merge it",
    ]


def data_with_test_in_train(in_train, test_size=100):
    """20 train texts per class and a test split of which ``in_train`` copy a train text."""
    train = numbered(20, 0) + numbered(20, 1)
    copies = [(text.upper(), label) for text, label in train[:in_train]]
    fresh = numbered(test_size - in_train, 1, prefix="fresh")
    return texts_data(train, test=copies + fresh)


def test_six_percent_of_test_in_train_is_warned_about_and_five_is_not():
    six = summarize_texts(data_with_test_in_train(6))
    assert six["duplicates"]["test_in_train_share"] == 0.06
    assert summary_warnings(six) == [
        "6 of 100 test texts (6.0%) are also in train (ignoring case and white space), more "
        "than 5%; the test score will flatter the model: deduplicate, or drop them from test"
    ]
    five = summarize_texts(data_with_test_in_train(5))
    assert five["duplicates"]["test_in_train"] == 5
    assert summary_warnings(five) == []


def test_validation_duplicates_are_counted_but_not_warned_about():
    train = numbered(20, 0) + numbered(20, 1)
    summary = summarize_texts(texts_data(train, validation=train[:10]))
    assert summary["duplicates"]["validation_in_train_share"] == 1.0
    assert summary_warnings(summary) == []


# -- JSON and printing -------------------------------------------------------------------


def test_summaries_round_trip_through_json_with_no_numpy_types():
    texts = summarize_texts(
        texts_data(numbered(9, 0) + numbered(12, 1), test=numbered(3, 0)),
        max_length=3,
        count_pieces=lambda texts: np.array([len(t) for t in texts], dtype=np.int64),
    )
    empty_class = summarize_texts(texts_data(numbered(5, 0), classes=("a", "b")))
    pairs = summarize_pairs(translation_data(), max_length=4)
    tokens = summarize_tokens(language_model_data())
    for summary in (texts, empty_class, pairs, tokens):
        assert only_plain_json(summary), summary
        assert json.loads(json.dumps(summary, allow_nan=False)) == summary


def test_format_summary_gives_a_few_readable_lines():
    data = texts_data(
        numbered(9, 0) + numbered(27, 1),
        validation=numbered(2, 1),
        test=numbered(4, 0, prefix="new"),
    )
    text = format_summary(summarize_texts(data, max_length=2))
    assert text.splitlines() == [
        "toy: 36 train, 2 validation, 4 test examples",
        "in train: ham 9, spam 27 (imbalance 3.0x)",
        "words per train text: median 3, p95 3, p99 3, max 3",
        "train texts cut at 2 words: 100.0%",
        "duplicates of train texts: validation 2 of 2 (100.0%), test 0 of 4 (0.0%)",
    ]


def test_format_summary_shows_pieces_when_counted():
    data = texts_data([("a", 0), ("b", 1)])
    text = format_summary(summarize_texts(data, 3, count_pieces=lambda texts: [3, 5]))
    assert "word pieces per train text: median 4, p95 4.9, p99 5, max 5" in text
    assert "train texts cut at 3 pieces: 50.0%" in text


# -- translation pairs -------------------------------------------------------------------


def pairs(rows):
    sources = np.array([source for source, _ in rows], dtype=object)
    targets = np.array([target for _, target in rows], dtype=object)
    return SentencePairs(sources, targets)


def translation_data():
    train = [
        ("Go .", "Ve ."),  # 2 and 2 words
        ("I am here", "Estoy aquí"),  # 3 and 2
        ("a b c d e", "x"),  # source of 5 words: over 4
        ("Hi", "u v w"),  # target of 3 words + [start] and [end]: over 4
    ]
    validation = [("go  .", "Vete ."), ("Stop", "Para")]
    test = [("I AM HERE", "Aquí estoy"), ("I am there", "Estoy allí")]
    return TranslationData(
        name="toy_pairs",
        source_language="English",
        target_language="Spanish",
        splits={"train": pairs(train), "validation": pairs(validation), "test": pairs(test)},
    )


def test_pairs_summary_counts_lengths_overlong_pairs_and_duplicate_sources():
    summary = summarize_pairs(translation_data(), max_length=4)
    assert summary["kind"] == "pairs"
    assert summary["examples"] == {"train": 4, "validation": 2, "test": 2}
    source_lengths, target_lengths = [2, 3, 5, 1], [2, 2, 1, 3]
    for key, lengths in [("source_words", source_lengths), ("target_words", target_lengths)]:
        assert summary[key]["max"] == max(lengths)
        for q in (50, 90, 95, 99):
            assert summary[key][f"p{q}"] == pytest.approx(linear_percentile(lengths, q), abs=0.051)
    assert summary["over_max_length_share"] == 2 / 4
    assert summary["duplicates"] == {
        "validation_in_train": 1,
        "validation_in_train_share": 0.5,
        "test_in_train": 1,
        "test_in_train_share": 0.5,
    }


def test_pairs_over_max_length_is_none_without_max_length():
    assert summarize_pairs(translation_data())["over_max_length_share"] is None


def test_pairs_with_many_test_sources_in_train_are_warned_about():
    summary = summarize_pairs(translation_data(), max_length=5)
    assert summary["over_max_length_share"] == 0.0
    assert summary_warnings(summary) == [
        "1 of 2 test source sentences (50.0%) are also in train (ignoring case and white "
        "space), more than 5%; the test score will flatter the model: deduplicate, or drop "
        "them from test"
    ]
    assert format_summary(summary).splitlines()[0] == (
        "toy_pairs: 4 train, 2 validation, 2 test sentence pairs"
    )


# -- language-model tokens ---------------------------------------------------------------


def language_model_data():
    return LanguageModelData(
        name="toy_lm",
        splits={
            "train": ("the", "cat", "sat", "<eos>", "the", "end", "<eos>"),
            "validation": ("the", "dog", "sat", "<eos>"),
            "test": ("a", "dog", "and", "a", "cat", "<eos>"),
        },
    )


def test_tokens_summary_counts_tokens_vocabulary_and_unknown_shares():
    summary = summarize_tokens(language_model_data())
    assert summary == {
        "kind": "tokens",
        "dataset": "toy_lm",
        "tokens": {"train": 7, "validation": 4, "test": 6},
        # the, cat, sat, <eos>, end
        "vocabulary_size": 5,
        # validation: "dog" (1 of 4); test: "a", "dog", "and", "a" (4 of 6).
        "out_of_vocabulary_share": {"validation": 0.25, "test": 0.6667},
    }
    assert summary_warnings(summary) == []
    assert format_summary(summary).splitlines() == [
        "toy_lm: 7 train, 4 validation, 6 test tokens",
        "train vocabulary: 5 tokens",
        "tokens outside the train vocabulary: validation 25.00%, test 66.67%",
    ]


def test_questions_are_counted_with_the_unanswerable_and_the_ones_asked_again():
    from kerasformer.datasets.data_summary import summarize_questions
    from kerasformer.datasets.squad import QuestionAnsweringData, SquadExamples

    def examples(rows):
        questions, contexts, answers = zip(*rows, strict=True)
        n = len(rows)
        return SquadExamples(
            ids=np.array([str(i) for i in range(n)], dtype=object),
            titles=np.array(["t"] * n, dtype=object),
            questions=np.array(questions, dtype=object),
            contexts=np.array(contexts, dtype=object),
            answers=tuple(answers),
            answer_starts=tuple((0,) * len(a) for a in answers),
        )

    train = examples([("who won", "the reds won", ("the reds",)),
                      ("who lost", "the blues lost the cup final", ("the blues",)),
                      ("why", "no reason given", ())])  # fmt: skip
    validation = examples([("Who  WON", "the reds won", ("the reds",))])
    test = examples([("who won", "the greens won", ("the greens",)), ("when", "never", ())])
    data = QuestionAnsweringData("qa", {"train": train, "validation": validation, "test": test})
    summary = summarize_questions(data)
    assert summary["examples"] == {"train": 3, "validation": 1, "test": 2}
    assert summary["unanswerable"] == {"train": 1, "validation": 0, "test": 1}
    assert summary["question_words"]["max"] == 2 and summary["context_words"]["max"] == 6
    # Validation asks train's question of train's context (case and spaces aside); test's
    # "who won" is asked of another context, so it is no duplicate.
    assert summary["duplicates"]["validation_in_train"] == 1
    assert summary["duplicates"]["test_in_train"] == 0
    assert "unanswerable: 1 train, 0 validation, 1 test" in format_summary(summary)
    json.dumps(summary, allow_nan=False)
