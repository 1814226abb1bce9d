"""The public layers, imported relative to the namespace that imports this module.

`kerasformer.layers` and `kerasformer.tf_keras.layers` both take their names from here, so
the two offer the same classes.
"""

from .adaptive_attention_span import AdaptiveAttentionSpan
from .additive_attention import AdditiveAttention
from .character_cnn import CharacterCNN
from .masked_average_pooling import MaskedAveragePooling
from .multi_head_attention import MultiHeadAttention
from .relative_position_bias import RelativePositionBias
from .rotary_embedding import RotaryEmbedding
from .scaled_dot_product_attention import ScaledDotProductAttention, scaled_dot_product_attention
from .sinusoidal_position_encoding import SinusoidalPositionEncoding
from .token_and_position_embedding import TokenAndPositionEmbedding
from .transformer_block import TransformerBlock
from .transformer_decoder_block import TransformerDecoderBlock

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
