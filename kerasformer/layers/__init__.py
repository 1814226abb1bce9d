"""Keras layers for transformer text classifiers, registered under ``kerasformer``."""

from kerasformer.layers.token_and_position_embedding import TokenAndPositionEmbedding
from kerasformer.layers.transformer_block import TransformerBlock

__all__ = ["TokenAndPositionEmbedding", "TransformerBlock"]
