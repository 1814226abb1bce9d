"""Read a long text's words in overlapping windows, so that its cost grows with its length.

A from-scratch tagger reads a whole text at once. Its attention compares every word with
every other, so a 50,000-word line needs 50,000² scores per head (tens of GB: the
process is killed, or takes minutes), and no text it trained on came near that length.
A text longer than ``window`` words is read instead in windows of ``window`` words,
starting every ``window // 2``, and each word takes its probabilities from the window
where it has the most words on its nearer side (BERT's "max context" rule): about a
quarter window on each side, except at the text's ends. A text that fits one window is
read whole, as before.

`read_in_windows` does it in TensorFlow ops, for the SavedModel; `windowed_rows` in
NumPy, for the LiteRT runner, which has no TensorFlow (so TensorFlow is imported only
where it is used).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

# Words per window: twice CoNLL-2003's longest sentence (124), so a sentence is read whole.
WORD_WINDOW = 256


def best_windows(length: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """For each position ``0 .. length - 1``: the window it is read from (windows start
    every ``stride``, ``2 * stride`` long), and its offset there.

    Position ``p`` lies in window ``p // stride`` at offset ``o = p % stride`` (``o``
    words before it there, at least ``stride`` after) and, unless it is in the first,
    in the window before at offset ``o + stride`` (``stride - 1 - o`` words after it
    there, at least ``stride`` before). The later window wins where ``o`` is the larger.
    """
    later, offset = np.divmod(np.arange(length), stride)
    earlier = (offset < stride - 1 - offset) & (later > 0)
    return later - earlier, offset + stride * earlier


def windowed_rows(
    read: Callable[[Sequence], np.ndarray], words: Sequence, window: int = WORD_WINDOW
) -> np.ndarray:
    """``read(words)`` (a row per word), or for more than ``window`` words, each word's
    row from the window `best_windows` chooses for it."""
    require_window(window)
    if len(words) <= window:
        return read(words)
    stride = window // 2
    rows = [read(words[start : start + window]) for start in range(0, len(words), stride)]
    chosen, offset = best_windows(len(words), stride)
    return np.stack([rows[w][o] for w, o in zip(chosen, offset, strict=True)])


def read_in_windows(read: Callable, features: dict, window: int = WORD_WINDOW):
    """``read(features)``: ``(batch, words, ...)`` features in, ``(batch, words, tags)``
    out, whole where the batch's longest text fits ``window`` words, else window by
    window, each word from the window `best_windows` chooses for it.

    Example:

    >>> probs = read_in_windows(lambda f: model(f), {"word_ids": ids, "char_ids": chars})
    """
    from kerasformer.backend import tf

    require_window(window)
    length = tf.shape(next(iter(features.values())))[1]
    return tf.cond(
        length <= window,
        lambda: read(features),
        lambda: read_windows(read, features, window),
    )


def read_windows(read: Callable, features: dict, window: int):
    """`read_in_windows` for a batch longer than one window."""
    from kerasformer.backend import tf

    stride = window // 2
    length = tf.shape(next(iter(features.values())))[1]
    # (batch, windows, window, ...): each text's windows, padded (masked) past its end.
    framed = {
        name: tf.signal.frame(values, window, stride, pad_end=True, axis=1)
        for name, values in features.items()
    }
    shape = tf.shape(next(iter(framed.values())))
    batch, windows = shape[0], shape[1]
    flat = {
        name: tf.reshape(values, tf.concat([[-1, window], tf.shape(values)[3:]], axis=0))
        for name, values in framed.items()
    }
    read_flat = read(flat)
    per_window = tf.reshape(read_flat, tf.concat([[batch, windows], tf.shape(read_flat)[1:]], 0))
    # best_windows in TensorFlow ops: the length is known only when the graph runs.
    later, offset = tf.range(length) // stride, tf.range(length) % stride
    earlier = tf.cast((offset < stride - 1 - offset) & (later > 0), tf.int32)
    chosen, offset = later - earlier, offset + stride * earlier
    indices = tf.stack([tf.broadcast_to(chosen, [batch, length]),
                        tf.broadcast_to(offset, [batch, length])], axis=-1)  # fmt: skip
    return tf.gather_nd(per_window, indices, batch_dims=1)


def require_window(window: int) -> None:
    if window < 2 or window % 2:
        raise ValueError(f"window must be an even number of at least 2 words, got {window}.")
