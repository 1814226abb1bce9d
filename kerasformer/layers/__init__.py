"""Keras layers for transformers, registered under ``kerasformer``.

Written once for tf-keras and Keras 3: `kerasformer.layers.backend` says which one a
process uses and how to choose.
"""

from kerasformer.layers.adaptive_attention_span import AdaptiveAttentionSpan
from kerasformer.layers.additive_attention import AdditiveAttention
from kerasformer.layers.character_cnn import CharacterCNN
from kerasformer.layers.masked_average_pooling import MaskedAveragePooling
from kerasformer.layers.multi_head_attention import MultiHeadAttention
from kerasformer.layers.relative_position_bias import RelativePositionBias
from kerasformer.layers.rotary_embedding import RotaryEmbedding
from kerasformer.layers.scaled_dot_product_attention import (
    ScaledDotProductAttention,
    scaled_dot_product_attention,
)
from kerasformer.layers.sinusoidal_position_encoding import SinusoidalPositionEncoding
from kerasformer.layers.token_and_position_embedding import TokenAndPositionEmbedding
from kerasformer.layers.transformer_block import TransformerBlock
from kerasformer.layers.transformer_decoder_block import TransformerDecoderBlock

__all__ = [
    "AdaptiveAttentionSpan",
    "AdditiveAttention",
    "CharacterCNN",
    "MaskedAveragePooling",
    "MultiHeadAttention",
    "RelativePositionBias",
    "RotaryEmbedding",
    "ScaledDotProductAttention",
    "SinusoidalPositionEncoding",
    "TokenAndPositionEmbedding",
    "TransformerBlock",
    "TransformerDecoderBlock",
    "scaled_dot_product_attention",
]
