"""A layer's weights read as NumPy, for the NumPy references, or set to random values."""

from __future__ import annotations

import numpy as np

from kerasformer.layers.backend import ops


def numpy(tensor) -> np.ndarray | None:
    """A tensor or weight as a NumPy array; None stays None (a layer built without biases)."""
    return None if tensor is None else np.asarray(ops.convert_to_numpy(tensor))


def randomise(layer, seed: int, keep: tuple[str, ...] = ()) -> None:
    """Draw every weight of a built layer (biases, gammas and T5 tables too) from N(0, 0.5²),
    so no term is trivially zero; weights whose name holds one of ``keep`` stay as they are."""
    rng = np.random.default_rng(seed)
    for weight in layer.weights:
        name = getattr(weight, "path", None) or weight.name
        if not any(part in name for part in keep):
            weight.assign(rng.normal(0.0, 0.5, tuple(weight.shape)).astype("float32"))


def attention_weights(attention) -> dict:
    """A `MultiHeadAttention`'s kernels and biases as the NumPy reference names them:
    ``wq, bq, wk, bk, wv, bv, wo, bo`` (a bias None where the layer has none), and
    ``wg, bg`` with ``use_gate``."""
    weights = {}
    projections = attention.projections()
    for letter, name in (
        ("q", "query"), ("k", "key"), ("v", "value"), ("o", "attention_output"), ("g", "gate"),
    ):  # fmt: skip
        if name in projections:
            weights[f"w{letter}"] = numpy(projections[name].kernel)
            weights[f"b{letter}"] = numpy(projections[name].bias)
    return weights


def decoder_block_weights(block, with_encoder: bool) -> dict:
    """A `TransformerDecoderBlock`'s weights as `numpy_reference.transformer_decoder_block`
    takes them; the cross-attention's only ``with_encoder``."""

    def norm(layer):
        return numpy(layer.gamma), numpy(layer.beta)

    weights = {
        "self": attention_weights(block.self_attention),
        "ln_self": norm(block.self_attention_norm),
        "ln_ff": norm(block.ff_norm),
        "ff1_kernel": numpy(block.ff_hidden.kernel), "ff1_bias": numpy(block.ff_hidden.bias),
        "ff2_kernel": numpy(block.ff_output.kernel), "ff2_bias": numpy(block.ff_output.bias),
    }  # fmt: skip
    if with_encoder:
        weights["cross"] = attention_weights(block.cross_attention)
        weights["ln_cross"] = norm(block.cross_attention_norm)
    return weights
