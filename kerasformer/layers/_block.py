"""The base of the encoder and decoder blocks: their shared arguments and feed-forward network."""

from __future__ import annotations

from kerasformer.validation import (
    LayerError,
    require_bool,
    require_positive_int,
    require_positive_number,
    require_rate,
)

from ._base import Layer, build_in_scope
from .backend import keras
from .multi_head_attention import LORA_TARGETS, require_position


class TransformerLayer(Layer):
    """Attention sub-layers, then a position-wise feed-forward network.

    Each sub-layer has dropout, a residual connection and layer normalisation. The
    attention sub-layers are each block's own; the arguments that configure the rest are
    validated and stored here, so the encoder and decoder blocks read them the same way.
    The mask of the inputs is passed on unchanged.
    """

    _config_arguments = (
        "embed_dim", "num_heads", "ff_dim", "dropout", "key_dim", "norm_first", "activation",
        "attention_dropout", "layer_norm_epsilon", "position",
    )  # fmt: skip

    def __init__(
        self, embed_dim, num_heads, ff_dim, dropout, key_dim, norm_first, activation,
        attention_dropout, layer_norm_epsilon, position, **kwargs,
    ):  # fmt: skip
        dropout = dropout_or_rate(dropout, kwargs.pop("rate", None))
        super().__init__(**kwargs)
        self.embed_dim = require_positive_int("embed_dim", embed_dim)
        self.num_heads = require_positive_int("num_heads", num_heads)
        self.ff_dim = require_positive_int("ff_dim", ff_dim)
        self.dropout = require_rate("dropout", dropout)
        self.key_dim = checked_key_dim(key_dim, self.embed_dim, self.num_heads)
        self.norm_first = require_bool("norm_first", norm_first)
        self.activation = keras.activations.get(activation)
        self.attention_dropout = require_rate("attention_dropout", attention_dropout)
        self.layer_norm_epsilon = require_positive_number("layer_norm_epsilon", layer_norm_epsilon)
        self.position = require_position(position)
        self.supports_masking = True

    def _norm(self, name: str):
        return keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name=name
        )

    # Called after the attention sub-layers are made: a block's weights are listed in the
    # order its sub-layers were made, and saved weights are read back in that order.
    def _make_feed_forward(self):
        self.ff_hidden = keras.layers.Dense(
            self.ff_dim, activation=self.activation, dtype=self.dtype_policy, name="ff_hidden"
        )
        self.ff_output = keras.layers.Dense(
            self.embed_dim, dtype=self.dtype_policy, name="ff_output"
        )
        self.ff_norm = self._norm("ff_norm")

    def _build_sublayers(self, input_shape: tuple, attention, attention_norm):
        """Build the self-attention, its norm and the feed-forward network for ``input_shape``."""
        for layer, shapes in (
            (attention, (input_shape, input_shape)),
            (attention_norm, (input_shape,)),
            (self.ff_hidden, (input_shape,)),
            (self.ff_output, (input_shape[:-1] + (self.ff_dim,),)),
            (self.ff_norm, (input_shape,)),
        ):
            build_in_scope(layer, *shapes)

    def _feed_forward(self, x):
        return self.ff_output(self.ff_hidden(x))

    def _attention_layers(self) -> tuple:
        """The block's built attention sub-layers."""
        raise NotImplementedError

    def enable_lora(
        self, rank: int, targets=LORA_TARGETS, a_initializer="he_uniform", b_initializer="zeros"
    ) -> None:
        """Fine-tune with LoRA: low-rank updates of the attention's ``targets``
        projections (query and value by default), every other weight of the block frozen.

        See `MultiHeadAttention.enable_lora`; Keras 3 only. A model saved afterwards holds
        the merged kernels.
        """
        # Each attention refuses first, changing nothing, where LoRA is unavailable.
        attentions = self._attention_layers()
        for attention in attentions:
            attention.enable_lora(rank, targets, a_initializer, b_initializer)
        lora = {
            id(variable) for attention in attentions for variable in attention.trainable_weights
        }
        for variable in self.weights:
            if id(variable) not in lora:
                variable.trainable = False

    def quantize(self, mode=None, type_check=True, config=None):
        """Quantize the kernels of the attention projections and of the feed-forward
        network (``"int8"``, or Keras's other modes), as ``Model.quantize`` does. Keras 3
        only; a quantized block saves and loads quantized."""
        # The attentions first: each refuses, changing nothing, where int8 is unavailable.
        for layer in (*self._attention_layers(), self.ff_hidden, self.ff_output):
            layer.quantize(mode, type_check=type_check, config=config)

    def compute_mask(self, inputs, mask=None):
        return mask


def checked_key_dim(key_dim, embed_dim: int, num_heads: int) -> int:
    """``key_dim`` if given, else ``embed_dim // num_heads`` when that divides evenly."""
    if key_dim is not None:
        return require_positive_int("key_dim", key_dim)
    if embed_dim % num_heads:
        raise LayerError(
            f"embed_dim={embed_dim} is not divisible by num_heads={num_heads}; "
            "pass key_dim explicitly or choose a divisor."
        )
    return embed_dim // num_heads


def require_embed_dim(input_shape: tuple, embed_dim: int, layer: str) -> None:
    if input_shape[-1] is not None and input_shape[-1] != embed_dim:
        # A plain ValueError: build can run inside Keras' traced fit/predict, which
        # re-raises built-in error types only.
        raise ValueError(
            f"{layer}(embed_dim={embed_dim}) got inputs with last dimension "
            f"{input_shape[-1]}; the residual connections need them equal."
        )


DEFAULT_DROPOUT = 0.1


def dropout_or_rate(dropout, rate):
    """The block's dropout rate: ``dropout``, or ``rate``, the name the Keras tutorial's
    ``TransformerBlock(embed_dim, num_heads, ff_dim, rate=0.1)`` gives it; 0.1 if neither."""
    if dropout is not None and rate is not None and dropout != rate:
        raise LayerError(
            f"`rate` is another name for `dropout`; give one of them, got dropout={dropout!r} "
            f"and rate={rate!r}."
        )
    chosen = dropout if dropout is not None else rate
    return DEFAULT_DROPOUT if chosen is None else chosen
