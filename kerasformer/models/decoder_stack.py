"""The decoder half of a transformer: embedding, causal decoder blocks, output logits.

Shared by the translator (with cross-attention to the encoded source) and the language
model (without). `decoder_stack` adds its layers to a functional model under fixed
names; `DecoderStack` finds them again in a trained model to decode one token at a
time with the key/value cache, or every position at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from kerasformer.backend import keras, tf
from kerasformer.models.block_stack import stack_blocks
from kerasformer.models.transformer_classifier import POSITIONS
from kerasformer.tf_keras.layers import TokenAndPositionEmbedding, TransformerDecoderBlock

BLOCK_NAME = "decoder_block_{}"
NORM_NAME = "decoder_norm"
LOGITS_NAME = "logits"


def decoder_stack(
    ids,
    *,
    embedding_name: str,
    vocab_size: int,
    maxlen: int,
    embed_dim: int,
    num_heads: int,
    ff_dim: int,
    num_layers: int,
    dropout: float,
    position: str,
    norm_first: bool,
    tie_embeddings: bool = False,
    adaptive_cutoffs=None,
    encoder_outputs=None,
    embedding: TokenAndPositionEmbedding | None = None,
):
    """Logits ``(batch, length, vocab_size)`` for symbolic ``ids``; they carry its mask.

    With ``tie_embeddings`` the logits come from the token embedding itself, transposed
    (plus a bias), instead of a Dense layer of their own; with ``adaptive_cutoffs`` as
    well, that output is an adaptive softmax over the embedding's table, whose "logits"
    are log-probabilities (see `TokenAndPositionEmbedding`). ``embedding`` is one made
    already (the encoder's, when source and target share a vocabulary); by default the
    stack makes its own, named ``embedding_name``.
    """
    if adaptive_cutoffs is not None and not tie_embeddings:
        raise ValueError(
            "adaptive_cutoffs makes the tied output layer an adaptive softmax; it needs "
            "tie_embeddings=True."
        )
    embedding_position, attention_position = POSITIONS[position]
    if embedding is None:
        embedding = TokenAndPositionEmbedding(
            maxlen, vocab_size, embed_dim, position=embedding_position,
            reversible=tie_embeddings, adaptive_cutoffs=adaptive_cutoffs, name=embedding_name,
        )  # fmt: skip
    x = stack_blocks(
        embedding(ids),
        lambda index: TransformerDecoderBlock(
            embed_dim, num_heads, ff_dim, dropout=dropout, norm_first=norm_first,
            position=attention_position, name=BLOCK_NAME.format(index),
        ),
        num_layers, norm_first=norm_first, norm_name=NORM_NAME, encoder_outputs=encoder_outputs,
    )  # fmt: skip
    if tie_embeddings:
        return embedding(x, reverse=True)
    # float32 logits, so the softmax is stable under mixed precision.
    return keras.layers.Dense(vocab_size, dtype="float32", name=LOGITS_NAME)(x)


@dataclass(frozen=True)
class DecoderStack:
    """The decoder layers of a trained model, for decoding outside ``model.fit``."""

    embedding: TokenAndPositionEmbedding
    blocks: tuple[TransformerDecoderBlock, ...]
    final_norm: object | None
    logits: object | None  # None: the embedding's reverse gives them (tied embeddings)

    @classmethod
    def of(cls, model, embedding_name: str) -> DecoderStack:
        names = {layer.name for layer in model.layers}
        blocks, index = [], 0
        while BLOCK_NAME.format(index) in names:
            blocks.append(model.get_layer(BLOCK_NAME.format(index)))
            index += 1
        return cls(
            model.get_layer(embedding_name),
            tuple(blocks),
            model.get_layer(NORM_NAME) if NORM_NAME in names else None,
            model.get_layer(LOGITS_NAME) if LOGITS_NAME in names else None,
        )

    @property
    def maxlen(self) -> int:
        return self.embedding.maxlen

    @property
    def vocab_size(self) -> int:
        return self.embedding.vocab_size

    def empty_caches(self, batch_size, max_length: int) -> dict[str, tf.Tensor]:
        return {
            block.name: tf.cast(block.empty_cache(batch_size, max_length), tf.float32)
            for block in self.blocks
        }

    def step(self, ids, index, cache: dict, encoder_outputs=None, encoder_mask=None):
        """Logits of the token after ``ids[:, -1]`` (at ``index``), and the updated cache."""
        x = self.embedding(ids[:, -1:], start_index=index)
        updated = dict(cache)
        for block in self.blocks:
            # Decoding loops forget the static shape of their state; the layer checks it.
            layer_cache = tf.ensure_shape(
                tf.cast(cache[block.name], x.dtype), [None, 2, None, block.num_heads, block.key_dim]
            )
            x, updated[block.name] = block(
                x, encoder_outputs, encoder_mask=encoder_mask,
                cache=layer_cache, cache_index=index, training=False,
            )  # fmt: skip
            updated[block.name] = tf.cast(updated[block.name], tf.float32)
        return self._logits(x)[:, 0], updated

    def hidden(self, ids):
        """The last hidden vectors of every position, before the output layer (symbolic
        ``ids`` give a graph sharing the model's weights)."""
        x = self.embedding(ids)
        for block in self.blocks:
            x = block(x)
        return x if self.final_norm is None else self.final_norm(x)

    def full(self, ids, encoder_outputs=None, encoder_mask=None, return_attention_scores=False):
        """Logits of every position (and each block's cross-attention weights if asked)."""
        logits, _, cross_attention = self.full_with_attention(ids, encoder_outputs, encoder_mask)
        return (logits, cross_attention) if return_attention_scores else logits

    def full_with_attention(self, ids, encoder_outputs=None, encoder_mask=None):
        """Logits of every position, each block's self-attention weights and each block's
        cross-attention weights (None without an encoder), ``(batch, heads, target, keys)``.
        """
        x = self.embedding(ids)
        mask = tf.not_equal(ids, 0)
        self_attention, cross_attention = [], []
        for block in self.blocks:
            x, own, cross = block(
                x, encoder_outputs, mask=mask, encoder_mask=encoder_mask,
                return_attention_scores=True, training=False,
            )  # fmt: skip
            self_attention.append(own)
            cross_attention.append(cross)
        return self._logits(x), self_attention, cross_attention

    def _logits(self, x):
        if self.final_norm is not None:
            x = self.final_norm(x)
        if self.logits is None:
            return self.embedding(x, reverse=True)
        return self.logits(x)
