"""Blocks applied one after another, as every transformer stack of kerasformer's models does."""

from __future__ import annotations

from collections.abc import Callable

from kerasformer.backend import keras


def stack_blocks(
    x,
    make_block: Callable[[int], keras.layers.Layer],
    num_layers: int,
    *,
    norm_first: bool,
    norm_name: str,
    encoder_outputs=None,
):
    """``x`` through the blocks ``make_block(0)`` to ``make_block(num_layers - 1)`` in turn.

    Each block also attends to ``encoder_outputs`` where they are given (a decoder's
    cross-attention). Pre-LN blocks (``norm_first``) leave the residual stream
    unnormalised, so a final layer normalisation, named ``norm_name``, follows them. The
    mask of ``x`` passes through.
    """
    for index in range(num_layers):
        block = make_block(index)
        x = block(x) if encoder_outputs is None else block(x, encoder_outputs)
    if norm_first:
        x = keras.layers.LayerNormalization(epsilon=1e-6, name=norm_name)(x)
    return x
