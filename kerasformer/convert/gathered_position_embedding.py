"""The Model Garden's position embedding, reading its rows by gathering them, so that
XLA compiles the gradient through a saved encoder once."""

from __future__ import annotations

import contextlib
from unittest import mock

from official.nlp.modeling import layers as garden_layers
from official.nlp.modeling.networks import bert_encoder

from kerasformer.backend import tf


class GatheredPositionEmbedding(garden_layers.PositionEmbedding):
    """``PositionEmbedding`` with the same weights and outputs, its rows gathered.

    The Model Garden's layer slices the table to the input's length and broadcasts it to
    the input's shape. Inside a SavedModel function (a TF-Hub encoder) the gradient of
    that slice and broadcast needs the input's length as a compile-time constant, which
    XLA cannot find across the function's boundary: it then treats every input of the
    function, the batch's ids and the weights, as constants and compiles the whole
    training step again whenever they change, every step (`bench/bert_xla_steps.py`).
    Gathering rows ``0 .. length - 1`` and adding them with broadcasting computes the
    same numbers, and their gradients need only shapes. The input's mask is not used,
    as in the Model Garden's layer.

    Args:
        max_length: The number of positions in the table.
        seq_axis: The input's axis that runs over positions.
        initializer: The table's initializer.

    Call arguments:
        inputs: The embedded tokens, ``(batch, length, width)``.

    Example:

    >>> layer = GatheredPositionEmbedding(max_length=8)
    >>> tuple(layer(tf.zeros((2, 5, 4))).shape)
    (2, 5, 4)
    """

    def call(self, inputs):
        length = tf.shape(inputs)[self._seq_axis]
        rows = tf.gather(self._position_embeddings, tf.range(length))
        shape = [1] * inputs.shape.rank
        shape[self._seq_axis], shape[-1] = length, rows.shape[-1]
        return tf.zeros_like(inputs) + tf.reshape(rows, shape)


@contextlib.contextmanager
def positions_gathered():
    """While it lasts, the Model Garden's encoders are built with
    `GatheredPositionEmbedding` in place of its ``PositionEmbedding``."""
    with mock.patch.object(bert_encoder.layers, "PositionEmbedding", GatheredPositionEmbedding):
        yield
