"""The transformer encoder-decoder of "Attention Is All You Need", for translation.

A functional model from kerasformer's layers: source ids through
``TokenAndPositionEmbedding`` and ``TransformerBlock`` s; target ids (shifted right)
through ``TransformerDecoderBlock`` s with causal self-attention and attention to the
encoded source; logits over the target vocabulary. Padding (id 0) is masked on both
sides, and the logits carry the target's mask, so Keras leaves padded positions out of
the loss and the accuracy.

`TransformerTranslatorDecoding` decodes a trained model one token at a time with the
decoder's key/value cache (or, for comparison, recomputing every position each step).
"""

from __future__ import annotations

import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.models import defaults
from kerasformer.models.attention_maps import blocks_self_attention
from kerasformer.models.block_stack import stack_blocks
from kerasformer.models.decoder_stack import POSITIONS, DecoderStack, decoder_stack
from kerasformer.tf_keras.layers import TokenAndPositionEmbedding, TransformerBlock

SOURCE_INPUT, TARGET_INPUT = "source_ids", "target_ids"
ENCODER_BLOCK_NAME = "encoder_block_{}"
ENCODER_NORM_NAME = "encoder_norm"
SOURCE_EMBEDDING_NAME, TARGET_EMBEDDING_NAME = "source_embedding", "target_embedding"
SHARED_EMBEDDING_NAME = "shared_embedding"
MODEL_NAME = "transformer_translator"

DEFAULTS = defaults.TRANSFORMER_TRANSLATOR


def build_transformer_translator(
    source_vocab_size: int,
    target_vocab_size: int,
    *,
    maxlen: int = DEFAULTS["maxlen"],
    embed_dim: int = DEFAULTS["embed_dim"],
    num_heads: int = DEFAULTS["num_heads"],
    ff_dim: int = DEFAULTS["ff_dim"],
    num_layers: int = DEFAULTS["num_layers"],
    dropout: float = DEFAULTS["dropout"],
    position: str = DEFAULTS["position"],
    norm_first: bool = DEFAULTS["norm_first"],
    tie_embeddings: bool = DEFAULTS["tie_embeddings"],
):
    """Build the encoder-decoder: ``{"source_ids", "target_ids"}`` to target logits.

    ``tie_embeddings``, for a vocabulary both languages share (so both sizes are equal):
    one table embeds source and target tokens (with one position table) and, transposed,
    gives the logits, as in Vaswani et al. (2017), section 3.4.

    Example:

    >>> model = build_transformer_translator(1000, 1200, embed_dim=32, num_layers=1)
    >>> logits = model({"source_ids": [[5, 6, 0]], "target_ids": [[2, 7, 8, 9]]})
    >>> tuple(logits.shape)
    (1, 4, 1200)
    """
    if position not in POSITIONS:
        raise KerasformerError(
            f"unknown position {position!r}; choose one of: {', '.join(POSITIONS)}."
        )
    if not isinstance(num_layers, int) or num_layers < 1:
        raise KerasformerError(f"num_layers must be a whole number >= 1, got {num_layers!r}.")
    if tie_embeddings and source_vocab_size != target_vocab_size:
        raise KerasformerError(
            f"tie_embeddings needs one vocabulary for both languages, got {source_vocab_size} "
            f"source and {target_vocab_size} target tokens; train with --tokenizer "
            "sentencepiece --tie-embeddings, which makes one."
        )
    embedding_position, attention_position = POSITIONS[position]
    source = keras.Input((None,), dtype="int32", name=SOURCE_INPUT)
    target = keras.Input((None,), dtype="int32", name=TARGET_INPUT)
    source_embedding = TokenAndPositionEmbedding(
        maxlen, source_vocab_size, embed_dim, position=embedding_position,
        reversible=tie_embeddings,
        name=SHARED_EMBEDDING_NAME if tie_embeddings else SOURCE_EMBEDDING_NAME,
    )  # fmt: skip
    x = stack_blocks(
        source_embedding(source),
        lambda index: TransformerBlock(
            embed_dim, num_heads, ff_dim, dropout=dropout, norm_first=norm_first,
            position=attention_position, name=ENCODER_BLOCK_NAME.format(index),
        ),
        num_layers, norm_first=norm_first, norm_name=ENCODER_NORM_NAME,
    )  # fmt: skip
    logits = decoder_stack(
        target, embedding_name=TARGET_EMBEDDING_NAME, vocab_size=target_vocab_size,
        maxlen=maxlen, embed_dim=embed_dim, num_heads=num_heads, ff_dim=ff_dim,
        num_layers=num_layers, dropout=dropout, position=position, norm_first=norm_first,
        encoder_outputs=x, tie_embeddings=tie_embeddings,
        embedding=source_embedding if tie_embeddings else None,
    )  # fmt: skip
    return keras.Model({SOURCE_INPUT: source, TARGET_INPUT: target}, logits, name=MODEL_NAME)


class TransformerTranslatorDecoding:
    """A trained translator's encoder and decoder as decoding steps (see models.generation)."""

    def __init__(self, model, cached: bool = True):
        self.cached = cached
        source = model.get_layer(SOURCE_INPUT).output
        names = {layer.name for layer in model.layers}
        last = ENCODER_NORM_NAME if ENCODER_NORM_NAME in names else None
        if last is None:
            count = sum(name.startswith("encoder_block_") for name in names)
            last = ENCODER_BLOCK_NAME.format(count - 1)
        self.encoder = keras.Model(source, model.get_layer(last).output)
        shared = SHARED_EMBEDDING_NAME in names
        self.encoder_layers = [
            model.get_layer(SHARED_EMBEDDING_NAME if shared else SOURCE_EMBEDDING_NAME)
        ] + [
            model.get_layer(ENCODER_BLOCK_NAME.format(i))
            for i in range(sum(name.startswith("encoder_block_") for name in names))
        ]
        self.decoder = DecoderStack.of(
            model, SHARED_EMBEDDING_NAME if shared else TARGET_EMBEDDING_NAME
        )

    def initial_cache(self, source_ids, max_length: int) -> dict:
        encoded = self.encoder(source_ids, training=False)
        cache = {
            "encoder_outputs": tf.cast(encoded, tf.float32),
            "encoder_mask": tf.cast(tf.not_equal(source_ids, 0), tf.float32),
        }
        if self.cached:
            cache.update(self.decoder.empty_caches(tf.shape(source_ids)[0], max_length + 1))
        return cache

    def step(self, ids, index, cache):
        encoded, mask = cache["encoder_outputs"], tf.cast(cache["encoder_mask"], tf.bool)
        if not self.cached:
            logits = self.decoder.full(ids, encoded, mask)
            return logits[:, -1], cache
        logits, updated = self.decoder.step(ids, index, cache, encoded, mask)
        return logits, updated

    def attention(self, source_ids, target_ids) -> dict[str, np.ndarray]:
        """Every attention of the first sentence pair, ``(layers, heads, queries, keys)``:
        encoder self-attention, decoder self-attention and cross-attention."""
        encoded = self.encoder(source_ids, training=False)
        mask = tf.not_equal(source_ids, 0)
        _, own, cross = self.decoder.full_with_attention(target_ids, encoded, mask)
        first = lambda scores: np.stack([np.asarray(s[0], np.float64) for s in scores])  # noqa: E731
        return {
            "encoder self-attention": blocks_self_attention(self.encoder_layers, source_ids),
            "decoder self-attention": first(own),
            "cross-attention": first(cross),
        }

    def named_attention(self, source_ids, target_ids) -> dict[str, np.ndarray]:
        """The first pair's attention by kind, ``(layers, heads, queries, keys)``."""
        return self.attention(source_ids, target_ids)

    def cross_attention_stack(self, source_ids, target_ids) -> tf.Tensor:
        """``(layers, batch, heads, target, source)``: every decoder block's cross-attention."""
        return tf.stack(self.cross_attention(source_ids, target_ids))

    def cross_attention(self, source_ids, target_ids) -> list[tf.Tensor]:
        """Each decoder block's cross-attention weights ``(batch, heads, target, source)``."""
        encoded = self.encoder(source_ids, training=False)
        mask = tf.not_equal(source_ids, 0)
        _, weights = self.decoder.full(target_ids, encoded, mask, return_attention_scores=True)
        return weights
