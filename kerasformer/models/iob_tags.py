"""IOB2 tags: which follow which, the best allowed sequence (Viterbi), and the entities.

A tag is ``O`` or ``B-TYPE``/``I-TYPE``. In IOB2 an entity starts with ``B-TYPE``; an
``I-TYPE`` may only follow ``B-TYPE`` or ``I-TYPE`` of the same type. Argmax decoding
picks each word's best tag alone and can break that rule; constrained decoding picks the
sequence with the highest total log-probability among those that keep it.
"""

from __future__ import annotations

import numpy as np

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError

OUTSIDE = "O"
# Added to a forbidden transition's score: far below any sum of log-probabilities, and
# finite, so that sums never become NaN.
FORBIDDEN = -1e9


def tag_type(tag: str) -> str | None:
    """``PER`` for ``B-PER`` or ``I-PER``; None for ``O``."""
    return None if tag == OUTSIDE else tag[2:]


def is_iob_tag(tag: str) -> bool:
    return tag == OUTSIDE or (len(tag) > 2 and tag[:2] in ("B-", "I-"))


def allowed_transitions(tag_names) -> tuple[np.ndarray, np.ndarray]:
    """``(start, transitions)``: which tags may begin a sentence, and ``transitions[i, j]``
    whether tag ``j`` may follow tag ``i``, in IOB2."""
    for tag in tag_names:
        if not is_iob_tag(tag):
            raise KerasformerError(f"tag {tag!r} is not an IOB tag (O, B-TYPE or I-TYPE).")
    inside = np.array([tag.startswith("I-") for tag in tag_names])
    start = ~inside
    transitions = np.ones((len(tag_names), len(tag_names)), bool)
    for j, tag in enumerate(tag_names):
        if inside[j]:
            transitions[:, j] = [
                previous != OUTSIDE and tag_type(previous) == tag_type(tag)
                for previous in tag_names
            ]
    return start, transitions


def viterbi(log_probs: np.ndarray, start: np.ndarray, transitions: np.ndarray) -> np.ndarray:
    """The allowed tag sequence with the highest summed log-probability.

    Args:
        log_probs: ``(words, tags)`` log-probabilities of one sentence.
        start: ``(tags,)`` booleans, the tags that may begin it.
        transitions: ``(tags, tags)`` booleans, ``[i, j]`` True where ``j`` may follow ``i``.
    """
    words = len(log_probs)
    if words == 0:
        return np.zeros(0, np.int64)
    penalty = np.where(transitions, 0.0, FORBIDDEN)
    score = log_probs[0] + np.where(start, 0.0, FORBIDDEN)
    back = np.zeros((words, log_probs.shape[1]), np.int64)
    for t in range(1, words):
        candidates = score[:, None] + penalty
        back[t] = candidates.argmax(axis=0)
        score = candidates.max(axis=0) + log_probs[t]
    best = [int(score.argmax())]
    for t in range(words - 1, 0, -1):
        best.append(int(back[t, best[-1]]))
    return np.array(best[::-1], np.int64)


def entity_spans(tags) -> list[tuple[str, int, int]]:
    """``(type, first word, last word + 1)`` of each entity in an IOB2 tag sequence.

    An ``I-TYPE`` that does not continue an entity of its type starts one (as conlleval
    reads it), so argmax output with broken sequences still gives entities.
    """
    spans: list[tuple[str, int, int]] = []
    current: list | None = None
    for index, tag in enumerate([*tags, OUTSIDE]):
        kind = tag_type(tag)
        continues = current is not None and tag.startswith("I-") and kind == current[0]
        if continues:
            current[2] = index + 1
            continue
        if current is not None:
            spans.append(tuple(current))
            current = None
        if kind is not None:
            current = [kind, index, index + 1]
    return spans


def viterbi_tf(log_probs, lengths, start, transitions):
    """`viterbi` for a padded batch, as TensorFlow ops (for a SavedModel).

    Args:
        log_probs: ``(batch, words, tags)`` float32.
        lengths: ``(batch,)`` words of each sentence; later positions are padding.
        start: ``(tags,)`` booleans; transitions: ``(tags, tags)`` booleans.

    Returns: ``(batch, words)`` int32 tag ids, the best allowed sequence of each sentence
    (anything at padded positions).
    """
    words = tf.shape(log_probs)[1]
    # Two padded steps: the scans below then always have a step to run.
    log_probs = tf.pad(log_probs, [[0, 0], [0, 2], [0, 0]])
    tags = tf.shape(log_probs)[2]
    penalty = tf.where(transitions, 0.0, FORBIDDEN)
    first = log_probs[:, 0] + tf.where(start, 0.0, FORBIDDEN)
    lengths = tf.cast(lengths, tf.int32)
    identity = tf.broadcast_to(tf.range(tags)[None], tf.shape(first))

    def forward(carry, step):
        score, _ = carry
        scores, t = step
        candidates = score[:, :, None] + penalty[None]
        active = (t < lengths)[:, None]
        best = tf.where(active, tf.reduce_max(candidates, axis=1) + scores, score)
        back = tf.where(active, tf.argmax(candidates, axis=1, output_type=tf.int32), identity)
        return best, back

    steps = (tf.transpose(log_probs[:, 1:], [1, 0, 2]), tf.range(1, words + 2))
    scores, backs = tf.scan(forward, steps, initializer=(first, identity))
    last = tf.argmax(scores[-1], axis=-1, output_type=tf.int32)
    earlier = tf.scan(
        lambda tag, back: tf.gather(back, tag, batch_dims=1), backs, initializer=last,
        reverse=True,
    )  # fmt: skip
    best = tf.concat([tf.transpose(earlier), last[:, None]], axis=1)
    return best[:, :words]
