"""`WordSplitter`: `kerasformer.models.word_spans.split_words` as TensorFlow ops."""

from __future__ import annotations

from kerasformer.backend import tf
from kerasformer.models.word_spans import (
    CJK_RANGES,
    SINGLE,
    SPACE,
    WORD,
    non_word_code_points,
)


class WordSplitter(tf.Module):
    """`split_words` as TensorFlow ops, for a SavedModel's string input.

    Called on a batch of strings, it returns ragged ``words`` ``(batch, None)``, their
    code points ``(batch, None, None)``, and ``starts`` and ``ends`` ``(batch, None)``.
    """

    def __init__(self):
        super().__init__()
        codes, classes = non_word_code_points()
        self.classes = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(codes), tf.constant(classes)),
            default_value=WORD,
        )

    def character_classes(self, code_points: tf.Tensor) -> tf.Tensor:
        cjk = tf.zeros_like(code_points, tf.bool)
        for low, high in CJK_RANGES:
            cjk |= (code_points >= low) & (code_points <= high)
        return tf.where(cjk, SINGLE, self.classes.lookup(tf.cast(code_points, tf.int64)))

    def __call__(self, texts: tf.Tensor):
        code_points = tf.strings.unicode_decode(texts, "UTF-8", errors="replace")
        flat = tf.cast(code_points.flat_values, tf.int64)
        rows = code_points.value_rowids()
        kind = self.character_classes(flat)
        position = tf.cast(tf.ragged.range(code_points.row_lengths()).flat_values, tf.int64)
        first = tf.equal(position, 0)
        previous = tf.where(first, SPACE, tf.roll(kind, 1, axis=0))
        starts_word = tf.equal(kind, SINGLE) | (tf.equal(kind, WORD) & tf.not_equal(previous, WORD))
        in_word = tf.not_equal(kind, SPACE)
        word_of = tf.cumsum(tf.cast(starts_word, tf.int64)) - 1
        count = tf.reduce_sum(tf.cast(starts_word, tf.int64))
        word_of, word_codes = tf.boolean_mask(word_of, in_word), tf.boolean_mask(flat, in_word)
        word_codes = tf.RaggedTensor.from_value_rowids(word_codes, word_of, nrows=count)
        starts = tf.boolean_mask(position, starts_word)
        ends = tf.math.unsorted_segment_max(tf.boolean_mask(position, in_word) + 1, word_of, count)
        word_rows = tf.boolean_mask(rows, starts_word)
        batch = tf.shape(texts, out_type=tf.int64)[0]

        def per_text(values):
            return tf.RaggedTensor.from_value_rowids(values, word_rows, nrows=batch)

        words = tf.strings.unicode_encode(tf.cast(word_codes, tf.int32), "UTF-8")
        return per_text(words), per_text(word_codes), per_text(starts), per_text(ends)
