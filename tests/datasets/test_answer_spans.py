"""Answer positions in windows, worked out by hand."""

import numpy as np

from kerasformer.backend import tf
from kerasformer.datasets.answer_spans import answer_byte_spans, span_examples, span_labels
from kerasformer.datasets.squad import SquadExamples
from kerasformer.models.span_windows import SpanWindows


def examples(contexts, answers, starts):
    n = len(contexts)
    return SquadExamples(
        ids=np.array([str(i) for i in range(n)], dtype=object),
        titles=np.array(["t"] * n, dtype=object),
        questions=np.array(["q"] * n, dtype=object),
        contexts=np.array(contexts, dtype=object),
        answers=tuple((a,) for a in answers),
        answer_starts=tuple((s,) for s in starts),
    )


def test_answer_byte_spans_count_utf8_bytes_and_drop_outer_spaces():
    contexts = ["Le café de Zürich ferme.", "plain text"]
    # " Zürich " with its spaces starts at character 10; "é" and "ü" are 2 bytes each.
    starts, limits = answer_byte_spans(examples(contexts, [" Zürich ", "text"], [10, 6]))
    raw = contexts[0].encode()
    assert raw[starts[0] : limits[0]].decode() == "Zürich"
    assert (starts[1], limits[1]) == (6, 10)


def test_span_labels_point_at_the_answer_tokens_or_at_cls():
    # Context tokens (byte ranges) of one context cut into two overlapping windows:
    # tokens 0-5 at positions 2-7 of window 0, tokens 3-8 at positions 2-7 of window 1.
    token_ranges = [(10 * t, 10 * t + 5) for t in range(9)]
    starts = np.full((2, 10), -1)
    limits = np.full((2, 10), -1)
    for window, first in ((0, 0), (1, 3)):
        for position, token in enumerate(range(first, first + 6), start=2):
            starts[window, position], limits[window, position] = token_ranges[token]
    # An answer over tokens 4 to 6 (bytes 40-65): whole only in window 1.
    answer = (np.array([40, 40]), np.array([65, 65]))
    start, end = span_labels(starts, limits, *answer)
    assert list(start) == [0, 3] and list(end) == [0, 5]
    # An answer over tokens 3 to 4 lies whole in both windows.
    start, end = span_labels(starts, limits, np.array([30, 30]), np.array([45, 45]))
    assert list(start) == [5, 2] and list(end) == [6, 3]
    # An answer starting inside a token (byte 42 of token 4) still starts at that token.
    start, end = span_labels(starts, limits, np.array([42, 42]), np.array([44, 44]))
    assert list(start) == [6, 3] and list(end) == [6, 3]


def test_a_window_without_context_points_at_cls():
    starts = np.full((1, 6), -1)
    start, end = span_labels(starts, starts, np.array([0]), np.array([3]))
    assert (start[0], end[0]) == (0, 0)


def test_an_answer_across_a_window_boundary_is_labelled_where_it_lies_whole(minilm_preprocess):
    # 12 context tokens per window, 4 apart: windows hold tokens 0-11, 4-15, 8-19, ...
    words = [f"w{i}" for i in range(10)] + ["Zürich", "Straße", "café"] + ["x"] * 10
    context = " ".join(words)
    answer = "Zürich Straße café"
    windows = SpanWindows(minilm_preprocess, seq_length=20, doc_stride=4, max_question_tokens=5)
    part = examples([context], [answer], [context.index(answer)])
    inputs, labels = span_examples(part, windows)
    cut = windows(tf.constant(["q"]), tf.constant([context]))
    starts, limits = cut["token_starts"].numpy(), cut["token_limits"].numpy()
    raw = context.encode()
    holding = [w for w in range(len(starts)) if labels["start_logits"][w] > 0]
    assert holding, "some window holds the whole answer"
    for w in range(len(starts)):
        first, last = labels["start_logits"][w], labels["end_logits"][w]
        if w in holding:
            text = raw[starts[w, first] : limits[w, last]].decode()
            assert text == answer
        else:
            assert first == last == 0
            # The window misses a part of the answer.
            inside = starts[w][starts[w] >= 0]
            span = (raw.index(answer.encode()), raw.index(answer.encode()) + len(answer.encode()))
            assert inside.min() > span[0] or limits[w].max() < span[1]
    np.testing.assert_array_equal(inputs["input_word_ids"], cut["input_word_ids"].numpy())
