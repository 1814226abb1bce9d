"""Best-span search against a brute-force NumPy reference, and offsets back to text."""

import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.models.span_extraction import best_spans, span_texts


def brute_force(start, end, token_starts, example, num_examples, max_tokens):
    """Every (window, i, j) scored directly; the first best window wins ties."""
    best = [(-np.inf, -1, -1, -1)] * num_examples
    for w in range(start.shape[0]):
        for i in range(start.shape[1]):
            for j in range(i, min(i + max_tokens, start.shape[1])):
                if token_starts[w, i] < 0 or token_starts[w, j] < 0:
                    continue
                score = start[w, i] + end[w, j]
                if score > best[example[w]][0]:
                    best[example[w]] = (score, w, i, j)
    return best


def softmax(x, valid):
    x = np.where(valid, x, -np.inf)
    e = np.exp(x - x.max())
    return e / e.sum()


@pytest.mark.parametrize("seed", range(4))
def test_best_spans_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    windows, length, num_examples, max_tokens = 7, 12, 4, 3
    start = rng.normal(size=(windows, length)).astype(np.float32)
    end = rng.normal(size=(windows, length)).astype(np.float32)
    token_starts = np.where(rng.random((windows, length)) < 0.7, 1, -1).astype(np.int32)
    token_starts[5] = -1  # a window without context
    example = np.array([0, 0, 0, 1, 2, 2, 2], dtype=np.int32)  # example 3 has no window
    got = best_spans(start, end, token_starts, example, num_examples, max_tokens)
    got = {name: value.numpy() for name, value in got.items()}
    expected = brute_force(start, end, token_starts, example, num_examples, max_tokens)
    for e, (score, w, i, j) in enumerate(expected):
        assert got["window"][e] == w and got["start"][e] == i and got["end"][e] == j
        if w < 0:
            assert got["score"][e] == -np.inf and got["probability"][e] == 0
            continue
        assert got["score"][e] == pytest.approx(score, abs=1e-5)
        valid = token_starts[w] >= 0
        probability = softmax(start[w], valid)[i] * softmax(end[w], valid)[j]
        assert got["probability"][e] == pytest.approx(probability, rel=1e-5)


def test_a_span_never_exceeds_the_longest_answer():
    # The best unrestricted span (0, 5) is 6 tokens; with at most 2, (4, 5) wins.
    start = np.array([[5.0, 0, 0, 0, 1, 0]], np.float32)
    end = np.array([[0, 0, 0, 0, 0, 5.0]], np.float32)
    token_starts = np.zeros((1, 6), np.int32)
    got = best_spans(start, end, token_starts, np.zeros(1, np.int32), 1, max_answer_tokens=2)
    assert (int(got["start"][0]), int(got["end"][0])) == (4, 5)


def test_span_texts_keep_the_original_characters():
    context = "Le café coûte 3 €, dit-il."
    # Byte ranges of "café coûte" and of "€" in the UTF-8 context.
    raw = context.encode()
    cafe, euro = raw.index("café".encode()), raw.index("€".encode())
    token_starts = np.full((2, 4), -1, np.int32)
    token_limits = np.full((2, 4), -1, np.int32)
    token_starts[0, 1:3] = [cafe, raw.index("coûte".encode())]
    token_limits[0, 1:3] = [cafe + len("café".encode()), raw.index(b" 3")]
    token_starts[1, 2], token_limits[1, 2] = euro, euro + len("€".encode())
    spans = {
        "window": tf.constant([0, 1, -1]),
        "start": tf.constant([1, 2, -1]),
        "end": tf.constant([2, 2, -1]),
        "probability": tf.constant([0.5, 0.25, 0.0]),
    }
    contexts = tf.constant([context, context, "no span"])
    got = span_texts(contexts, token_starts, token_limits, spans)
    answers = [a.decode() for a in got["answer"].numpy()]
    assert answers == ["café coûte", "€", ""]
    starts, ends = got["start"].numpy()[:2], got["end"].numpy()[:2]
    for answer, s, e in zip(answers[:2], starts, ends, strict=True):
        assert context[s:e] == answer
    assert list(got["start"].numpy()[2:]) == [-1] and list(got["end"].numpy()[2:]) == [-1]


def test_max_answer_tokens_is_checked():
    with pytest.raises(KerasformerError, match="max_answer_tokens must be >= 1"):
        best_spans(np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((1, 2)), [0], 1, 0)


def test_no_answer_scores_and_abstaining_against_numpy():
    from kerasformer.models.span_extraction import null_scores, without_unanswered

    rng = np.random.default_rng(3)
    start, end = rng.normal(size=(4, 6)), rng.normal(size=(4, 6))
    example = np.array([0, 0, 1, 2])  # example 3 has no window
    null = null_scores(tf.constant(start), tf.constant(end), tf.constant(example), 4).numpy()
    # By hand: [CLS] (position 0) start + end, the least over each example's windows.
    cls = start[:, 0] + end[:, 0]
    np.testing.assert_allclose(null[:3], [min(cls[0], cls[1]), cls[2], cls[3]], rtol=1e-6)
    assert np.isinf(null[3]) and null[3] > 0
    texts = {
        "answer": tf.constant(["a", "b", "c", ""]),
        "start": tf.constant([0, 4, 2, -1]),
        "end": tf.constant([1, 5, 3, -1]),
        "score": tf.constant([0.5, 0.6, 0.7, 0.0]),
    }
    spans = {"window": tf.constant([1, 2, 3, -1])}
    margins = tf.constant([0.5, -0.2, 2.0, 0.0])
    kept = without_unanswered(texts, spans, margins, 0.4)
    assert [a.decode() for a in kept["answer"].numpy()] == ["", "b", "", ""]
    assert kept["start"].numpy().tolist() == [-1, 4, -1, -1]
    assert kept["end"].numpy().tolist() == [-1, 5, -1, -1]
    assert kept["score"].numpy().tolist() == pytest.approx([0.0, 0.6, 0.0, 0.0])
