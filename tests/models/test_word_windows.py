"""`read_in_windows`: a long text read in overlapping windows, each word from the window
where it has the most context; short batches read whole."""

from __future__ import annotations

import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.models.word_windows import best_windows, read_in_windows, windowed_rows

RADIUS = 2  # how far the toy reader looks on each side of a word


def local_reader(features):
    """A reader whose output at a word depends only on the words within ``RADIUS`` of it
    (zeros past the ends), and which also reports each word's position in what it read:
    ``[..., 0]`` a weighted sum of neighbouring ids and character ids, ``[..., 1]`` the
    position."""
    ids = tf.cast(features["word_ids"], tf.float32) + tf.reduce_sum(
        tf.cast(features["char_ids"], tf.float32), axis=-1
    )
    padded = tf.pad(ids, [[0, 0], [RADIUS, RADIUS]])
    length = tf.shape(ids)[1]
    near = sum((3.0**k) * padded[:, k : k + length] for k in range(2 * RADIUS + 1))
    position = tf.broadcast_to(tf.cast(tf.range(length), tf.float32), tf.shape(ids))
    return tf.stack([near, position], axis=-1)


def features_of(lengths, seed=0):
    rng = np.random.default_rng(seed)
    longest = max(lengths)
    word_ids = np.zeros((len(lengths), longest), np.int32)
    char_ids = np.zeros((len(lengths), longest, 3), np.int32)
    for row, length in enumerate(lengths):
        word_ids[row, :length] = rng.integers(2, 50, length)
        char_ids[row, :length] = rng.integers(0, 9, (length, 3))
    return {"word_ids": tf.constant(word_ids), "char_ids": tf.constant(char_ids)}


def max_context_offsets(length: int, window: int) -> list[int]:
    """Reference, by brute force: each word's offset in the window (starting every
    ``window // 2``) that leaves the most words on its nearer side."""
    stride = window // 2
    starts = range(0, max(length, 1), stride)
    offsets = []
    for p in range(length):
        candidates = [p - s for s in starts if 0 <= p - s < window]
        offsets.append(max(candidates, key=lambda o: (min(o, window - 1 - o), -o)))
    return offsets


def test_a_batch_that_fits_one_window_is_read_whole():
    features = features_of([5, 16, 9])
    read = read_in_windows(local_reader, features, window=16)
    np.testing.assert_array_equal(read.numpy(), local_reader(features).numpy())


@pytest.mark.parametrize("window", [8, 16])
def test_a_long_text_reads_as_whole_and_each_word_from_its_most_central_window(window):
    """With context to spare in every chosen window, a reader that looks RADIUS words
    around reads the same values window by window as whole; and each word's position is
    that in the window where it has the most words on its nearer side."""
    lengths = [61, 7, 40]
    features = features_of(lengths, seed=window)
    read = read_in_windows(local_reader, features, window=window).numpy()
    whole = local_reader(features).numpy()
    assert read.shape == whole.shape
    for row, length in enumerate(lengths):
        np.testing.assert_array_equal(read[row, :length, 0], whole[row, :length, 0])
        expected = max_context_offsets(length, window)
        assert read[row, :length, 1].astype(int).tolist() == expected
    assert read[0, :, 1].max() < window and whole[0, :, 1].max() == 60


@pytest.mark.parametrize("window", [2, 8, 16])
def test_best_windows_is_the_window_of_most_context(window):
    for length in range(0, 3 * window + 2):
        chosen, offset = best_windows(length, window // 2)
        assert offset.tolist() == max_context_offsets(length, window)
        assert (chosen * (window // 2) + offset).tolist() == list(range(length))


def test_the_numpy_windows_read_a_text_as_the_graphs_do():
    """`windowed_rows` (the LiteRT runner's) against `read_in_windows` (the SavedModel's),
    on a text of 61 words read 16 at a time."""
    features = features_of([61], seed=4)
    expected = read_in_windows(local_reader, features, window=16).numpy()[0]

    def read(rows):  # one text's words: the rows of its features
        chosen = {name: tf.constant(values[None]) for name, values in rows.items()}
        return local_reader(chosen).numpy()[0]

    class Words(dict):  # the features of one text, sliced by word as a list is
        def __len__(self):
            return len(self["word_ids"])

        def __getitem__(self, key):
            if isinstance(key, slice):
                return Words({name: values[key] for name, values in self.items()})
            return super().__getitem__(key)

    words = Words({name: values.numpy()[0] for name, values in features.items()})
    np.testing.assert_array_equal(windowed_rows(read, words, window=16), expected)


def test_an_odd_or_tiny_window_is_refused():
    with pytest.raises(ValueError, match="even number of at least 2"):
        read_in_windows(local_reader, features_of([3]), window=7)
    with pytest.raises(ValueError, match="even number of at least 2"):
        windowed_rows(len, [1, 2, 3], window=0)
