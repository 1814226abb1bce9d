"""An independent NumPy implementation of the transformer pieces, for checking the layers.

Written from the equations (Vaswani et al. 2017; pre-LN as in Xiong et al. 2020), not
from the layers' code: only the weights are taken from the layers under test.
"""

from __future__ import annotations

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def multi_head_attention(x: np.ndarray, key_mask: np.ndarray | None, w: dict) -> tuple:
    """Self-attention over ``x`` (batch, length, dim); returns (output, weights).

    ``w`` holds per-head projections: wq/wk/wv (dim, heads, key_dim), bq/bk/bv
    (heads, key_dim), wo (heads, key_dim, dim), bo (dim). Keys where ``key_mask`` is
    False get zero weight.
    """
    batch, length, _ = x.shape
    heads, key_dim = w["bq"].shape
    outputs = np.zeros((batch, length, w["bo"].shape[0]))
    weights = np.zeros((batch, heads, length, length))
    for b in range(batch):
        for h in range(heads):
            q = x[b] @ w["wq"][:, h, :] + w["bq"][h]
            k = x[b] @ w["wk"][:, h, :] + w["bk"][h]
            v = x[b] @ w["wv"][:, h, :] + w["bv"][h]
            scores = q @ k.T / np.sqrt(key_dim)
            if key_mask is not None:
                scores = np.where(key_mask[b][None, :], scores, -np.inf)
            weights[b, h] = softmax(scores)
            outputs[b] += (weights[b, h] @ v) @ w["wo"][h]
        outputs[b] += w["bo"]
    return outputs, weights


def transformer_block(x, key_mask, w: dict, norm_first: bool, eps: float) -> tuple:
    """One encoder block without dropout; ``w`` adds ln1/ln2 (gamma, beta) and ff1/ff2."""

    def feed_forward(h):
        hidden = np.maximum(h @ w["ff1_kernel"] + w["ff1_bias"], 0.0)
        return hidden @ w["ff2_kernel"] + w["ff2_bias"]

    if norm_first:
        attended, weights = multi_head_attention(layer_norm(x, *w["ln1"], eps), key_mask, w)
        x = x + attended
        return x + feed_forward(layer_norm(x, *w["ln2"], eps)), weights
    attended, weights = multi_head_attention(x, key_mask, w)
    x = layer_norm(x + attended, *w["ln1"], eps)
    return layer_norm(x + feed_forward(x), *w["ln2"], eps), weights
