"""The best answer span of each question across its windows, mapped back to context text."""

from __future__ import annotations

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.validation import is_whole_number

NO_ANSWER = -1


def best_spans(
    start_logits: tf.Tensor,
    end_logits: tf.Tensor,
    token_starts: tf.Tensor,
    example: tf.Tensor,
    num_examples: tf.Tensor,
    max_answer_tokens: int = 30,
) -> dict[str, tf.Tensor]:
    """The highest-scoring valid span of each example, over all of its windows.

    A span (i, j) is valid when both ends are context tokens (``token_starts >= 0``),
    i <= j and it holds at most ``max_answer_tokens`` tokens; it scores
    ``start_logits[i] + end_logits[j]`` (BERT's rule for SQuAD). Windows of one example
    compete on that score.

    Args:
        start_logits, end_logits: ``[windows, seq_length]`` float.
        token_starts: ``[windows, seq_length]``; negative outside the context.
        example: ``[windows]`` int, the example each window belongs to.
        num_examples: How many examples there are (some may have no window).
        max_answer_tokens: Longest span considered.

    Returns:
        Per example (``[num_examples]``): ``window``, ``start`` and ``end`` (token
        positions in that window), ``score`` (the logit sum; -inf without a valid span,
        and then ``window``, ``start`` and ``end`` are -1) and ``probability`` (the
        start softmax × the end softmax over the window's context tokens).
    """
    if not is_whole_number(max_answer_tokens):
        raise KerasformerError(
            f"max_answer_tokens must be a whole number, got {max_answer_tokens!r}."
        )
    if max_answer_tokens < 1:
        raise KerasformerError(f"max_answer_tokens must be >= 1, got {max_answer_tokens}.")
    start_logits = tf.cast(start_logits, tf.float32)
    end_logits = tf.cast(end_logits, tf.float32)
    context = token_starts >= 0
    span_scores, span_valid = banded_span_scores(
        start_logits, end_logits, context, max_answer_tokens
    )
    windows = tf.shape(start_logits)[0]
    flat_scores = tf.reshape(tf.where(span_valid, span_scores, -float("inf")), [windows, -1])
    best_in_window = tf.argmax(flat_scores, axis=1, output_type=tf.int32)
    window_score = tf.reduce_max(flat_scores, axis=1)
    example = tf.cast(example, tf.int32)
    example_score = tf.math.unsorted_segment_max(window_score, example, num_examples)
    # The first window reaching its example's best score wins ties.
    is_best = (window_score >= tf.gather(example_score, example)) & tf.math.is_finite(window_score)
    window_ids = tf.range(windows, dtype=tf.int32)
    best_window = tf.math.unsorted_segment_min(
        tf.where(is_best, window_ids, windows), example, num_examples
    )
    found = best_window < windows
    safe_window = tf.where(found, best_window, 0)
    flat = tf.gather(best_in_window, safe_window)
    start = flat // max_answer_tokens
    end = start + flat % max_answer_tokens
    probability = span_probability(start_logits, end_logits, context, safe_window, start, end)

    def or_none(values):
        return tf.where(found, values, NO_ANSWER)

    return {
        "window": or_none(best_window),
        "start": or_none(start),
        "end": or_none(end),
        "score": tf.where(found, tf.gather(window_score, safe_window), -float("inf")),
        "probability": tf.where(found, probability, 0.0),
    }


def null_scores(start_logits, end_logits, example, num_examples) -> tf.Tensor:
    """Each example's no-answer score: ``start_logits[0] + end_logits[0]`` ([CLS], where
    BERT learns to point when a window holds no answer), the least over its windows.

    The least, as in BERT's SQuAD 2.0 code: one window that is sure it holds no answer
    does not outvote the window that holds it. An example without windows gets +inf.
    """
    window_null = tf.cast(start_logits[:, 0], tf.float32) + tf.cast(end_logits[:, 0], tf.float32)
    least = tf.math.unsorted_segment_min(window_null, tf.cast(example, tf.int32), num_examples)
    return tf.where(least >= tf.float32.max, float("inf"), least)


def without_unanswered(texts: dict, spans: dict, no_answer_score, null_threshold) -> dict:
    """The answers, with those whose no-answer score beats the span's by more than
    ``null_threshold`` made empty (``""``, -1, -1, score 0), as SQuAD 2.0 wants them."""
    abstain = (spans["window"] >= 0) & (no_answer_score > null_threshold)
    return {
        "answer": tf.where(abstain, "", texts["answer"]),
        "start": tf.where(abstain, NO_ANSWER, texts["start"]),
        "end": tf.where(abstain, NO_ANSWER, texts["end"]),
        "score": tf.where(abstain, 0.0, texts["score"]),
    }


def banded_span_scores(start_logits, end_logits, context, max_answer_tokens: int):
    """``[windows, seq_length, max_answer_tokens]`` scores of span (i, i + k) and validity.

    Only spans up to ``max_answer_tokens`` long are formed, so memory grows with the
    sequence length, not with its square.
    """
    padding = [[0, 0], [0, max_answer_tokens - 1]]
    ends = tf.signal.frame(
        tf.pad(end_logits, padding, constant_values=-float("inf")), max_answer_tokens, 1
    )
    end_is_context = tf.signal.frame(
        tf.pad(tf.cast(context, tf.int8), padding), max_answer_tokens, 1
    )
    return start_logits[:, :, None] + ends, context[:, :, None] & (end_is_context > 0)


def span_probability(start_logits, end_logits, context, window, start, end):
    """softmax(start)[start] × softmax(end)[end] over the chosen window's context tokens."""

    def context_softmax(logits):
        chosen = tf.gather(logits, window)
        return tf.nn.softmax(tf.where(tf.gather(context, window), chosen, -1e9), axis=-1)

    rows = tf.range(tf.size(window))
    start_probability = tf.gather_nd(context_softmax(start_logits), tf.stack([rows, start], 1))
    end_probability = tf.gather_nd(context_softmax(end_logits), tf.stack([rows, end], 1))
    return start_probability * end_probability


def span_texts(
    contexts: tf.Tensor, token_starts: tf.Tensor, token_limits: tf.Tensor, spans: dict
) -> dict[str, tf.Tensor]:
    """Answer strings and their character offsets in the contexts.

    Returns ``answer`` (the context's text from the first token's start to the last
    token's end, original spelling and spacing kept), ``start`` and ``end`` (Python-style
    character offsets: ``context[start:end] == answer``) and ``score`` (the span's
    probability). Examples without a span get ``""``, -1, -1 and 0.
    """
    found = spans["window"] >= 0
    window = tf.maximum(spans["window"], 0)
    first = tf.gather_nd(token_starts, tf.stack([window, tf.maximum(spans["start"], 0)], 1))
    last = tf.gather_nd(token_limits, tf.stack([window, tf.maximum(spans["end"], 0)], 1))
    byte_start = tf.where(found, first, 0)
    byte_length = tf.where(found, last - first, 0)
    answer = tf.strings.substr(contexts, byte_start, byte_length, unit="BYTE")
    char_start = tf.strings.length(
        tf.strings.substr(contexts, tf.zeros_like(byte_start), byte_start, unit="BYTE"),
        unit="UTF8_CHAR",
    )
    char_end = char_start + tf.strings.length(answer, unit="UTF8_CHAR")
    return {
        "answer": answer,
        "start": tf.where(found, char_start, NO_ANSWER),
        "end": tf.where(found, char_end, NO_ANSWER),
        "score": spans["probability"],
    }
