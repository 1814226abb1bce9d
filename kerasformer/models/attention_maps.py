"""What a model attends to for one input: every layer and head, ready to draw.

Each kind of model answers with a list of `AttentionMap` s, one per kind of attention
it has: the from-scratch classifier and the language model their self-attention, the
transformer translator its encoder self-attention, decoder self-attention and
cross-attention, the RNN translator its Bahdanau attention, and BERT models (classifier
and question answerer) the self-attention of their encoder. Padding is never shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.tf_keras.layers import TransformerBlock

# The encoder function `kerasformer convert-bert` adds to the TF-Hub encoder it writes.
ENCODER_ATTENTION_FUNCTION = "attention_probabilities"
ENCODER_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


@dataclass(frozen=True)
class AttentionMap:
    """One kind of attention of a model for one input, every layer and head.

    The models' ``attention_maps`` methods return them, and `kerasformer.plots` draws
    them; ``layers`` and ``heads`` count the weights' first two axes, and `layer` and
    `head` pick them out with a one-line error for an index out of range.

    Args:
        name: Which attention ("self-attention", "encoder self-attention",
            "decoder self-attention", "cross-attention").
        query_tokens: The tokens that attend, one per row.
        key_tokens: The tokens attended to, one per column.
        weights: ``(layers, heads, queries, keys)``; each row sums to 1 over the keys.
        segment_start: Where a second segment starts among the tokens (a BERT sentence
            pair, or a question's context), or None (the default) for one segment.

    Raises:
        ValueError: ``weights`` is not of shape ``(layers, heads, queries, keys)`` with
            at least one layer and head.

    Examples:
        >>> tokens = ("the", "cat")
        >>> attention = AttentionMap("self-attention", tokens, tokens, np.full((1, 2, 2, 2), 0.5))
        >>> attention.layers, attention.heads
        (1, 2)
        >>> attention.head(0, 1)
        array([[0.5, 0.5],
               [0.5, 0.5]])
    """

    name: str
    query_tokens: tuple[str, ...]
    key_tokens: tuple[str, ...]
    weights: np.ndarray
    segment_start: int | None = None

    def __post_init__(self):
        shape = np.shape(self.weights)
        expected = (len(self.query_tokens), len(self.key_tokens))
        if len(shape) != 4 or shape[2:] != expected or 0 in shape[:2]:
            raise ValueError(
                f"{self.name} weights must have shape (layers, heads, {expected[0]}, "
                f"{expected[1]}), got {shape}."
            )

    @property
    def layers(self) -> int:
        return self.weights.shape[0]

    @property
    def heads(self) -> int:
        return self.weights.shape[1]

    def layer(self, index: int) -> np.ndarray:
        """The weights of one layer, ``(heads, queries, keys)``; a clear error if none."""
        if not 0 <= index < self.layers:
            raise KerasformerError(
                f"the {self.name} has {self.layers} layer(s), so there is no layer {index}; "
                f"choose --layer from 0 to {self.layers - 1}."
            )
        return self.weights[index]

    def head(self, layer: int, head: int) -> np.ndarray:
        """The weights of one head of one layer, ``(queries, keys)``."""
        weights = self.layer(layer)
        if not 0 <= head < self.heads:
            raise KerasformerError(
                f"the {self.name} has {self.heads} head(s) a layer, so there is no head "
                f"{head}; choose --head from 0 to {self.heads - 1}."
            )
        return weights[head]


def blocks_self_attention(layers: Sequence, ids: tf.Tensor) -> np.ndarray:
    """Self-attention of every `TransformerBlock` in ``layers``, run in order on ``ids``.

    ``layers`` runs from the embedding to the last block; the mask that the embedding
    derives from padding id 0 is passed along as Keras would. Returns ``(blocks, heads,
    tokens, tokens)`` of the first row of ``ids``.
    """
    x, mask, scores = ids, None, []
    for layer in layers:
        if isinstance(layer, TransformerBlock):
            x, weights = layer(x, mask=mask, return_attention_scores=True, training=False)
            scores.append(weights[0])
            continue
        new_mask = layer.compute_mask(x, mask)
        x = layer(x, mask=mask) if mask is not None and layer.supports_masking else layer(x)
        mask = new_mask
    return np.stack([np.asarray(s, np.float64) for s in scores])


# --- BERT ------------------------------------------------------------------------------


def bert_attention_map(
    preprocess, encoder, first: str, second: str | None = None, max_length: int | None = None
) -> AttentionMap:
    """The self-attention of a TF-Hub BERT encoder for a text or a pair of texts.

    Args:
        preprocess: The loaded TF-Hub preprocess model (with ``tokenize`` and
            ``bert_pack_inputs``), e.g. ``HubLayer.resolved_object``.
        encoder: The loaded encoder; its ``attention_probabilities`` function (written
            by ``kerasformer convert-bert``) runs on the encoder's current weights, so a
            fine-tuned model shows its own attention.
        first: The text, or the first of a pair (a question).
        second: The second text of a pair (a context), if any.
        max_length: At most this many word pieces with ``[CLS]`` and ``[SEP]`` (the
            model's window); the encoder's position limit if None.

    The text is packed to its own length (``[CLS] first [SEP] second [SEP]``), up to the
    encoder's position limit, and nothing is padded.
    """
    attention = getattr(encoder, ENCODER_ATTENTION_FUNCTION, None)
    if attention is None:
        raise KerasformerError(
            "this BERT encoder does not return its attention probabilities; convert it "
            "again with kerasformer convert-bert, which adds them, and train on that."
        )
    texts = [first] if second is None else [first, second]
    segments = [preprocess.tokenize(tf.constant([text])) for text in texts]
    pieces = sum(int(segment.flat_values.shape[0]) for segment in segments)
    length = min(pieces + len(segments) + 1, max_length or position_limit(encoder))
    packed = preprocess.bert_pack_inputs(segments, seq_length=tf.constant(length))
    real = int(tf.reduce_sum(packed["input_mask"]))
    ids = {key: tf.cast(packed[key][:, :real], tf.int32) for key in ENCODER_INPUTS}
    weights = attention(**ids).numpy()[:, 0].astype(np.float64)
    tokens = tuple(word_pieces(encoder, ids["input_word_ids"][0].numpy()))
    types = ids["input_type_ids"][0].numpy()
    segment_start = int(np.argmax(types)) if types.any() else None
    return AttentionMap("self-attention", tokens, tokens, weights, segment_start)


def position_limit(encoder) -> int:
    """How many positions the encoder's position embedding has (512 if none is found)."""
    for variable in encoder.variables:
        if "position_embedding" in variable.name:
            return int(variable.shape[0])
    return 512


def word_pieces(encoder, ids: np.ndarray) -> list[str]:
    """The word pieces of ``ids``, from the vocabulary the encoder carries."""
    asset = getattr(encoder, "vocab_file", None)
    if asset is None:
        return [f"#{i}" for i in ids]
    with tf.io.gfile.GFile(asset.asset_path.numpy().decode("utf-8")) as handle:
        vocabulary = handle.read().splitlines()
    return [vocabulary[i] if i < len(vocabulary) else f"#{i}" for i in ids]
