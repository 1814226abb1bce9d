"""``tf.data`` batches for span question answering: packed windows and answer positions.

Each question's context is cut into windows once (by a `SpanWindows`, passed in), and
every window is labelled with the token positions of the question's first reference
answer, or with position 0 ([CLS]) for both ends when the window does not hold the
whole answer, as BERT does for SQuAD.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from tqdm.auto import tqdm

from kerasformer.backend import tf
from kerasformer.datasets.squad import SquadExamples

WINDOW_CHUNK = 256  # questions cut into windows at a time


def answer_byte_spans(examples: SquadExamples) -> tuple[np.ndarray, np.ndarray]:
    """Byte start and limit of each question's first answer in its UTF-8 context.

    White space at either end of the answer is left out, so the span starts and ends
    on text that a token covers. An unanswerable question gets -1 and -1: no window
    holds its answer, so every window is labelled [CLS].
    """
    starts, limits = [], []
    for context, answers, offsets in zip(
        examples.contexts, examples.answers, examples.answer_starts, strict=True
    ):
        if not answers:
            starts.append(-1)
            limits.append(-1)
            continue
        text, start = answers[0], offsets[0]
        start += len(text) - len(text.lstrip())
        end = start + len(text.strip())
        starts.append(len(context[:start].encode("utf-8")))
        limits.append(len(context[:end].encode("utf-8")))
    return np.array(starts, np.int32), np.array(limits, np.int32)


def span_labels(
    token_starts: np.ndarray,
    token_limits: np.ndarray,
    answer_start: np.ndarray,
    answer_limit: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Start and end token positions of each window's answer; 0 and 0 when not inside.

    Args:
        token_starts, token_limits: ``[windows, seq_length]`` byte ranges of the
            context tokens, negative elsewhere.
        answer_start, answer_limit: ``[windows]`` the answer's byte range in the context.

    A window holds the answer when its context tokens reach from at or before the
    answer's first byte to at or after its last; the answer's tokens are then those
    overlapping its byte range.
    """
    context = token_starts >= 0
    a, b = answer_start[:, None], answer_limit[:, None]
    overlap = context & (token_starts < b) & (token_limits > a)
    reach_from = np.where(context, token_starts, np.iinfo(np.int32).max).min(axis=1)
    reach_to = np.where(context, token_limits, -1).max(axis=1)
    inside = overlap.any(axis=1) & (reach_from <= answer_start) & (reach_to >= answer_limit)
    first = overlap.argmax(axis=1)
    last = overlap.shape[1] - 1 - overlap[:, ::-1].argmax(axis=1)
    return np.where(inside, first, 0).astype(np.int32), np.where(inside, last, 0).astype(np.int32)


def span_examples(
    examples: SquadExamples, windows: Callable, description: str = "Cutting windows"
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Every window of every question, with its labels, as NumPy arrays.

    ``windows(questions, contexts)`` (a `kerasformer.models.span_windows.SpanWindows`)
    gives the encoder inputs, named ``input_*`` as TF-Hub BERT encoders name them, with
    ``token_starts``, ``token_limits`` and ``example``.

    Returns ``(inputs, labels)``: the encoder inputs (``[windows, seq_length]``) and
    ``{"start_logits", "end_logits"}`` positions (``[windows]``), named after the
    model outputs they train.
    """
    answer_start, answer_limit = answer_byte_spans(examples)
    parts: dict[str, list[np.ndarray]] = {}
    for first in tqdm(
        range(0, len(examples), WINDOW_CHUNK), desc=description, unit=" chunks", disable=None
    ):
        chunk = slice(first, first + WINDOW_CHUNK)
        cut = windows(
            tf.constant(list(examples.questions[chunk]), tf.string),
            tf.constant(list(examples.contexts[chunk]), tf.string),
        )
        cut = {key: value.numpy() for key, value in cut.items()}
        example = cut["example"] + first
        starts, ends = span_labels(
            cut["token_starts"], cut["token_limits"],
            answer_start[example], answer_limit[example],
        )  # fmt: skip
        cut.update(start_logits=starts, end_logits=ends)
        for key, value in cut.items():
            parts.setdefault(key, []).append(value)
    arrays = {key: np.concatenate(values) for key, values in parts.items()}
    inputs = {key: value for key, value in arrays.items() if key.startswith("input_")}
    labels = {key: arrays[key] for key in ("start_logits", "end_logits")}
    return inputs, labels


def span_batches(
    inputs: dict[str, np.ndarray],
    labels: dict[str, np.ndarray],
    batch_size: int,
    shuffle_seed: int | None = None,
) -> tf.data.Dataset:
    """``(inputs, labels)`` batches of windows, reshuffled every epoch with a seed."""
    dataset = tf.data.Dataset.from_tensor_slices((inputs, labels))
    if shuffle_seed is not None:
        count = len(labels["start_logits"])
        dataset = dataset.shuffle(count, seed=shuffle_seed, reshuffle_each_iteration=True)
    return dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE)
