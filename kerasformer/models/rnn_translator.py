"""An RNN encoder-decoder with additive (Bahdanau) attention, for translation.

The encoder is a bidirectional GRU over the source words (Bahdanau et al. 2015, section
3.2); the decoder GRU starts from ``tanh(W h←₁)``, the backward encoder's first state
(their appendix A.2.2). At each target position, kerasformer's ``AdditiveAttention``
scores every source annotation with ``vᵀ tanh(W₁ s + W₂ h)`` and takes their weighted
sum; the decoder state and that context predict the next word.

One difference from the paper, as in TensorFlow's "NMT with attention" tutorial: the
attention query is the decoder state after reading the previous word (Luong et al.'s
placement), not before, so teacher-forced training runs the GRU over the whole target at
once instead of one step at a time. The scores and the alignment matrix are Bahdanau's.
"""

from __future__ import annotations

import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.models import defaults
from kerasformer.models.transformer_translator import SOURCE_INPUT, TARGET_INPUT
from kerasformer.tf_keras.layers import AdditiveAttention

MODEL_NAME = "rnn_translator"
DEFAULTS = defaults.RNN_TRANSLATOR


def build_rnn_translator(
    source_vocab_size: int,
    target_vocab_size: int,
    *,
    maxlen: int = DEFAULTS["maxlen"],
    embed_dim: int = DEFAULTS["embed_dim"],
    units: int = DEFAULTS["units"],
    dropout: float = DEFAULTS["dropout"],
):
    """Build the encoder-decoder: ``{"source_ids", "target_ids"}`` to target logits.

    ``maxlen`` is accepted for a uniform configuration: the RNN has no length limit, and
    `kerasformer.models.translator.Translator` enforces the same one for both models.

    Example:

    >>> model = build_rnn_translator(1000, 1200, embed_dim=16, units=32)
    >>> logits = model({"source_ids": [[5, 6, 0]], "target_ids": [[2, 7, 8, 9]]})
    >>> tuple(logits.shape)
    (1, 4, 1200)
    """
    source = keras.Input((None,), dtype="int32", name=SOURCE_INPUT)
    target = keras.Input((None,), dtype="int32", name=TARGET_INPUT)
    source_words = keras.layers.Embedding(
        source_vocab_size, embed_dim, mask_zero=True, name="source_embedding"
    )(source)
    annotations, _, backward_first = keras.layers.Bidirectional(
        keras.layers.GRU(units, return_sequences=True, return_state=True), name="encoder"
    )(source_words)
    initial_state = keras.layers.Dense(units, activation="tanh", name="bridge")(backward_first)
    target_words = keras.layers.Embedding(
        target_vocab_size, embed_dim, mask_zero=True, name="target_embedding"
    )(target)
    states = keras.layers.GRU(units, return_sequences=True, name="decoder_rnn")(
        target_words, initial_state=initial_state
    )
    context = AdditiveAttention(units, name="attention")(states, annotations)
    logits = _output_layers(keras, units, dropout, target_vocab_size)(states, context)
    del maxlen  # an RNN has no length limit; `Translator` enforces the shared one
    return keras.Model({SOURCE_INPUT: source, TARGET_INPUT: target}, logits, name=MODEL_NAME)


def _output_layers(keras, units, dropout, vocab_size):
    combine = keras.layers.Concatenate(name="state_and_context")
    hidden = keras.layers.Dense(units, activation="tanh", name="attentional_state")
    drop = keras.layers.Dropout(dropout, name="output_dropout")
    logits = keras.layers.Dense(vocab_size, dtype="float32", name="logits")

    def apply(states, context, training=None):
        return logits(drop(hidden(combine([states, context])), training=training))

    return apply


class RnnTranslatorDecoding:
    """A trained RNN translator as decoding steps (see models.generation).

    The cache is the decoder GRU's state plus the source annotations and their mask.
    """

    def __init__(self, model, cached: bool = True):
        del cached  # the GRU's state is the cache: an RNN always decodes from it
        source = model.get_layer(SOURCE_INPUT).output
        encoder = model.get_layer("encoder")
        annotations, _, backward_first = encoder.output
        self.encoder = keras.Model(source, [annotations, model.get_layer("bridge")(backward_first)])
        self.target_embedding = model.get_layer("target_embedding")
        self.decoder_rnn = model.get_layer("decoder_rnn")
        self.attention = model.get_layer("attention")
        self.combine = model.get_layer("state_and_context")
        self.hidden = model.get_layer("attentional_state")
        self.logits = model.get_layer("logits")

    def initial_cache(self, source_ids, max_length: int) -> dict:
        del max_length  # the state does not grow
        annotations, state = self.encoder(source_ids, training=False)
        return {
            "state": tf.cast(state, tf.float32),
            "encoder_outputs": tf.cast(annotations, tf.float32),
            "encoder_mask": tf.cast(tf.not_equal(source_ids, 0), tf.float32),
        }

    def step(self, ids, index, cache):
        del index
        words = self.target_embedding(ids[:, -1:])
        cell = self.decoder_rnn.cell
        # The cache is float32 (the decoding loops need one dtype); the cell may compute
        # in a mixed-precision dtype.
        dtype = cell.compute_dtype
        state, _ = cell(words[:, 0], [tf.cast(cache["state"], dtype)], training=False)
        context = self.attention(
            state[:, None], tf.cast(cache["encoder_outputs"], dtype),
            value_mask=tf.cast(cache["encoder_mask"], tf.bool), training=False,
        )  # fmt: skip
        logits = self.logits(self.hidden(self.combine([state[:, None], context])))
        return logits[:, 0], {**cache, "state": tf.cast(state, tf.float32)}

    def alignment(self, source_ids, target_ids) -> tf.Tensor:
        """The attention weights ``(batch, target, source)``: Bahdanau's alignment matrix."""
        annotations, state = self.encoder(source_ids, training=False)
        states = self.decoder_rnn(
            self.target_embedding(target_ids), initial_state=state, training=False
        )
        _, weights = self.attention(
            states, annotations, query_mask=tf.not_equal(target_ids, 0),
            value_mask=tf.not_equal(source_ids, 0), return_attention_scores=True,
        )  # fmt: skip
        return weights

    def cross_attention_stack(self, source_ids, target_ids) -> tf.Tensor:
        """``(layers, batch, heads, target, source)``: one layer with one head."""
        return self.alignment(source_ids, target_ids)[None, :, None]

    def named_attention(self, source_ids, target_ids) -> dict[str, np.ndarray]:
        """The first pair's attention by kind, ``(layers, heads, queries, keys)``."""
        return {"cross-attention": self.alignment(source_ids, target_ids).numpy()[:1, None]}
