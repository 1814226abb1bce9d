"""Every public kerasformer layer in a small model with fixed weights and inputs, run once.

Run in a process whose `kerasformer.layers` the environment chooses: Keras 3 on the
``KERAS_BACKEND``, or tf-keras with ``KERASFORMER_KERAS=2`` (see `kerasformer.backend`):

``python -m tests.cross_keras.layer_outputs OUT_DIR``
    For each case: builds a functional ``keras.Model`` around the layer, sets every weight
    from a NumPy generator seeded by the case's name (so every Keras gets the same
    numbers), runs it on fixed NumPy inputs (padding masks included) and saves it as
    ``OUT_DIR/CASE.keras``. Writes ``inputs.npz``, ``outputs.npz`` (key ``CASE.INDEX``),
    ``weights.json`` (each case's weight names and shapes, in the order they were set)
    and ``errors.json`` (the traceback of each case that failed).

``python -m tests.cross_keras.layer_outputs --reload OUT_DIR``
    Meant for a fresh process: only ``import kerasformer`` and ``keras.models.load_model``
    (no ``custom_objects``) for each ``CASE.keras``, run on the saved inputs. Writes
    ``reloaded.npz`` and ``reload_errors.json``.

Only NumPy is imported at module level, so the test reads `CASES` without picking a Keras.
"""

from __future__ import annotations

import json
import sys
import traceback
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

BATCH = 2
EMBED_DIM = 8
VOCAB_SIZE = 20
MAXLEN = 8
WEIGHT_SCALE = 0.4


@dataclass(frozen=True)
class Case:
    """One model around one layer.

    ``make_inputs(rng)`` gives the named NumPy inputs; ``build(keras, layers, inputs)``
    maps one ``keras.Input`` per name to the model's outputs (a list). A case with
    ``compute(ops, layers, arrays)`` instead of ``build`` calls a function eagerly and is
    not saved. ``mask_checks`` are NumPy checks of the outputs that hold only if the
    padding masks reached the layers (see `masked_mean_is_pooled`, `no_weight_on_padding`).
    """

    name: str
    layer: str
    make_inputs: Callable[[np.random.Generator], dict[str, np.ndarray]]
    build: Callable | None = None
    compute: Callable | None = None
    mask_checks: tuple = field(default=())


# ---- inputs -------------------------------------------------------------------------------


def floats(rng, *shape):
    return rng.normal(size=shape).astype("float32")


def padded_floats(rng, lengths, *shape):
    """``(len(lengths), length, *shape)`` floats, all-zero (so `Masking` hides them) after
    each row's length."""
    x = floats(rng, len(lengths), *shape)
    for row, length in enumerate(lengths):
        x[row, length:] = 0.0
    return x


def padded_ids(rng, lengths, length):
    """Token ids in ``[1, VOCAB_SIZE)``, then 0 (padding) after each row's length."""
    ids = rng.integers(1, VOCAB_SIZE, size=(len(lengths), length)).astype("int32")
    for row, real in enumerate(lengths):
        ids[row, real:] = 0
    return ids


def real_rows(name):
    """Which positions of input ``name`` are real: nonzero ids, or not-all-zero vectors."""

    def real(inputs):
        x = inputs[name]
        return x != 0 if x.ndim == 2 else np.any(x != 0, axis=-1)

    return real


# ---- mask checks (NumPy, on a configuration's outputs) -------------------------------------


def masked_mean_is_pooled(sequence_index, pooled_index, real):
    """``GlobalAveragePooling1D`` output == mean of the sequence over real positions only:
    true only if the padding mask reached the pooling layer."""

    def check(inputs, outputs):
        keep = real(inputs)[..., None].astype("float64")
        expected = (outputs[sequence_index] * keep).sum(1) / keep.sum(1)
        return "pooling ignores padded positions", outputs[pooled_index], expected

    return check


def pooled_over_real_positions_or_zero(real):
    """``MaskedAveragePooling`` output: the mean over real positions, 0 for a row of none."""

    def check(inputs, outputs):
        keep = real(inputs)[..., None].astype("float64")
        expected = (inputs["x"] * keep).sum(1) / np.maximum(keep.sum(1), 1.0)
        return "pooling: mean of real positions, zeros without any", outputs[0], expected

    return check


def no_weight_on_padding(weights_index, real_keys):
    """Attention weights ``(batch, [heads,] queries, keys)`` are 0 on padded keys."""

    def check(inputs, outputs):
        weights = outputs[weights_index]
        keys = real_keys(inputs)
        keys = keys.reshape(keys.shape[0], *([1] * (weights.ndim - 2)), keys.shape[1])
        return "padded keys get no attention weight", np.where(keys, 0.0, weights), 0.0

    return check


def zero_at_padded_queries(output_index, real_queries):
    def check(inputs, outputs):
        rows = real_queries(inputs)[..., None]
        return "outputs at padded queries are zero", np.where(rows, 0.0, outputs[output_index]), 0.0

    return check


# ---- cases --------------------------------------------------------------------------------


def _attention_inputs(rng):
    query_mask = np.array([[True, True, True, False], [True, True, True, True]])
    value_mask = np.array([[True] * 4 + [False] * 2, [True] * 6])
    attention_mask = rng.random((BATCH, 4, 6)) < 0.7
    attention_mask[:, :, 0] = True  # every query keeps a key
    return {
        "query": floats(rng, BATCH, 4, EMBED_DIM),
        "key": floats(rng, BATCH, 6, EMBED_DIM),
        "value": floats(rng, BATCH, 6, 5),
        "query_mask": query_mask,
        "value_mask": value_mask,
        "attention_mask": attention_mask,
    }


def _explicit_mask_attention(keras, layers, x):
    return list(
        layers.ScaledDotProductAttention()(
            query=x["query"],
            value=x["value"],
            key=x["key"],
            query_mask=x["query_mask"],
            value_mask=x["value_mask"],
            attention_mask=x["attention_mask"],
            return_attention_scores=True,
        )
    )


def _value_mask(inputs):
    return inputs["value_mask"]


def _self_attention_inputs(lengths):
    return lambda rng: {"x": padded_floats(rng, lengths, 6, EMBED_DIM)}


def _masked_self_attention(layer_factory, scores=False, **call_kwargs):
    """``[outputs, weights]`` with ``scores``, else ``[outputs, pooled outputs]``."""

    def build(keras, layers, x):
        masked = keras.layers.Masking(0.0)(x["x"])
        return _attention_outputs(keras, layers, layer_factory, masked, masked, scores, call_kwargs)

    return build


def _attention_outputs(keras, layers, layer_factory, query, value, scores, call_kwargs):
    layer = layer_factory(layers)
    if scores:
        return list(layer(query, value, return_attention_scores=True, **call_kwargs))
    outputs = layer(query, value, **call_kwargs)
    return [outputs, keras.layers.GlobalAveragePooling1D()(outputs)]


def _cross_attention_inputs(rng):
    return {
        "query": padded_floats(rng, [4, 2], 4, EMBED_DIM),
        "value": padded_floats(rng, [5, 3], 6, 6),
    }


def _masked_cross_attention(layer_factory, scores=False):
    """``[outputs, weights]`` with ``scores``, else ``[outputs, pooled outputs]``."""

    def build(keras, layers, x):
        query = keras.layers.Masking(0.0)(x["query"])
        value = keras.layers.Masking(0.0)(x["value"])
        return _attention_outputs(keras, layers, layer_factory, query, value, scores, {})

    return build


def _sinusoidal(keras, layers, x):
    masked = keras.layers.Masking(0.0)(x["x"])
    encoding = layers.SinusoidalPositionEncoding()(masked)
    summed = keras.layers.Add()([masked, encoding])
    return [encoding, summed, keras.layers.GlobalAveragePooling1D()(summed)]


def _masked_average_pooling(keras, layers, x):
    return [layers.MaskedAveragePooling()(keras.layers.Masking(0.0)(x["x"]))]


def _rotary_3d(keras, layers, x):
    rotated = layers.RotaryEmbedding(max_wavelength=100.0)(keras.layers.Masking(0.0)(x["x"]))
    return [rotated, keras.layers.GlobalAveragePooling1D()(rotated)]


def _embedding(position):
    def build(keras, layers, x):
        embedded = layers.TokenAndPositionEmbedding(
            MAXLEN, VOCAB_SIZE, EMBED_DIM, position=position
        )(x["ids"])
        return [embedded, keras.layers.GlobalAveragePooling1D()(embedded)]

    return build


def _character_inputs(rng):
    """Character ids ``(2 texts, 3 words, 5 characters)``: words of 5, 2, 3 and 1
    characters, and one padded word in each text."""
    ids = rng.integers(1, VOCAB_SIZE, size=(2, 3, 5)).astype("int32")
    for text, word, length in ((0, 1, 2), (0, 2, 0), (1, 0, 3), (1, 1, 1), (1, 2, 0)):
        ids[text, word, length:] = 0
    return {"chars": ids}


def _character_cnn(keras, layers, x):
    return [layers.CharacterCNN(VOCAB_SIZE, embed_dim=4, filters=6)(x["chars"])]


def padded_words_are_zero(inputs, outputs):
    """``CharacterCNN``: a word with no character (padding) gets zeros."""
    empty = ~np.any(inputs["chars"] != 0, axis=-1)
    return "words with no character give zeros", np.where(empty[..., None], outputs[0], 0.0), 0.0


def _ids_inputs(rng):
    return {"ids": padded_ids(rng, [4, 6], 6)}


def _encoder(embedding_position="learned", scores=False, **block_kwargs):
    def build(keras, layers, x):
        embedded = layers.TokenAndPositionEmbedding(
            MAXLEN, VOCAB_SIZE, EMBED_DIM, position=embedding_position
        )(x["ids"])
        block = layers.TransformerBlock(EMBED_DIM, num_heads=2, ff_dim=16, **block_kwargs)
        if scores:
            return list(block(embedded, return_attention_scores=True))
        encoded = block(embedded)
        return [encoded, keras.layers.GlobalAveragePooling1D()(encoded)]

    return build


def _decoder(embedding_position="learned", **block_kwargs):
    def build(keras, layers, x):
        embedded = layers.TokenAndPositionEmbedding(
            MAXLEN, VOCAB_SIZE, EMBED_DIM, position=embedding_position
        )(x["ids"])
        decoded = layers.TransformerDecoderBlock(EMBED_DIM, 2, 16, **block_kwargs)(embedded)
        return [decoded, keras.layers.GlobalAveragePooling1D()(decoded)]

    return build


def _translation_inputs(rng):
    return {"source": padded_ids(rng, [7, 4], 7), "target": padded_ids(rng, [3, 5], 5)}


def _encoder_decoder(scores=False):
    def build(keras, layers, x):
        def embed(ids, name):
            return layers.TokenAndPositionEmbedding(MAXLEN, VOCAB_SIZE, EMBED_DIM, name=name)(ids)

        source = embed(x["source"], "source_embedding")
        encoded = layers.TransformerBlock(EMBED_DIM, 2, 16, name="encoder")(source)
        target = embed(x["target"], "target_embedding")
        decoder = layers.TransformerDecoderBlock(EMBED_DIM, 2, 16, name="decoder")
        if scores:
            return list(decoder(target, encoded, return_attention_scores=True))
        decoded = decoder(target, encoded)
        return [decoded, keras.layers.GlobalAveragePooling1D()(decoded)]

    return build


def _attention_function(ops, layers, x):
    outputs, weights = layers.scaled_dot_product_attention(
        x["query"], x["key"], x["value"], mask=x["mask"], bias=x["bias"], use_causal_mask=True
    )
    return [outputs, weights]


def _function_inputs(rng):
    mask = np.ones((BATCH, 1, 1, 5), bool)
    mask[0, ..., 3:] = False
    return {
        "query": floats(rng, BATCH, 2, 5, 4),
        "key": floats(rng, BATCH, 2, 5, 4),
        "value": floats(rng, BATCH, 2, 5, 3),
        "mask": mask,
        "bias": floats(rng, 1, 2, 5, 5),
    }


_X, _IDS = real_rows("x"), real_rows("ids")
_QUERY, _VALUE = real_rows("query"), real_rows("value")
_SOURCE, _TARGET = real_rows("source"), real_rows("target")
_POOLED_X = masked_mean_is_pooled(0, 1, _X)
_POOLED_IDS = masked_mean_is_pooled(0, 1, _IDS)
_POOLED_QUERY = masked_mean_is_pooled(0, 1, _QUERY)


def _ids_case(name, layer, build, mask_checks=(_POOLED_IDS,)):
    """A case on padded token ids (`_ids_inputs`): by default, its pooled output must
    average the real positions only."""
    return Case(name, layer, _ids_inputs, build, mask_checks=mask_checks)


def _additive_inputs(rng):
    return {
        "query": padded_floats(rng, [2, 3], 3, EMBED_DIM),
        "value": padded_floats(rng, [7, 4], 7, 10),
    }


def _mha(**kwargs):
    return lambda layers: layers.MultiHeadAttention(num_heads=2, key_dim=4, **kwargs)


CASES = {
    case.name: case
    for case in [
        Case(
            "masked_average_pooling_with_an_empty_row",
            "MaskedAveragePooling",
            lambda rng: {"x": padded_floats(rng, [3, 0], 5, EMBED_DIM)},
            _masked_average_pooling,
            mask_checks=(pooled_over_real_positions_or_zero(real_rows("x")),),
        ),
        Case(
            "character_cnn_with_padded_words",
            "CharacterCNN",
            _character_inputs,
            _character_cnn,
            mask_checks=(padded_words_are_zero,),
        ),
        Case(
            "scaled_dot_product_attention_explicit_masks",
            "ScaledDotProductAttention",
            _attention_inputs,
            _explicit_mask_attention,
            mask_checks=(no_weight_on_padding(1, _value_mask),),
        ),
        Case(
            "scaled_dot_product_attention_causal_keras_mask",
            "ScaledDotProductAttention",
            _self_attention_inputs([3, 6]),
            _masked_self_attention(
                lambda layers: layers.ScaledDotProductAttention(),
                scores=True,
                use_causal_mask=True,
            ),
            mask_checks=(no_weight_on_padding(1, _X),),
        ),
        Case(
            "scaled_dot_product_attention_function",
            "scaled_dot_product_attention",
            _function_inputs,
            compute=_attention_function,
        ),
        Case(
            "multi_head_attention_cross",
            "MultiHeadAttention",
            _cross_attention_inputs,
            _masked_cross_attention(_mha(value_dim=3, output_dim=7)),
            mask_checks=(_POOLED_QUERY,),
        ),
        Case(
            "multi_head_attention_rotary",
            "MultiHeadAttention",
            _self_attention_inputs([4, 6]),
            _masked_self_attention(_mha(position="rotary"), use_causal_mask=True),
            mask_checks=(_POOLED_X,),
        ),
        Case(
            "multi_head_attention_relative",
            "MultiHeadAttention",
            _self_attention_inputs([6, 3]),
            _masked_self_attention(_mha(position="relative", num_buckets=8, max_distance=5)),
            mask_checks=(_POOLED_X,),
        ),
        Case(
            "multi_head_attention_attention_span",
            "MultiHeadAttention",
            _self_attention_inputs([5, 6]),
            _masked_self_attention(_mha(attention_span=4, span_ramp=2)),
            mask_checks=(_POOLED_X,),
        ),
        Case(
            "multi_head_attention_scores",
            "MultiHeadAttention",
            _self_attention_inputs([4, 6]),
            _masked_self_attention(_mha(position="rotary"), scores=True, use_causal_mask=True),
            mask_checks=(no_weight_on_padding(1, _X),),
        ),
        Case(
            "additive_attention",
            "AdditiveAttention",
            _additive_inputs,
            _masked_cross_attention(lambda layers: layers.AdditiveAttention(units=6)),
            mask_checks=(_POOLED_QUERY, zero_at_padded_queries(0, _QUERY)),
        ),
        Case(
            "additive_attention_scores",
            "AdditiveAttention",
            _additive_inputs,
            _masked_cross_attention(lambda layers: layers.AdditiveAttention(units=6), scores=True),
            mask_checks=(no_weight_on_padding(1, _VALUE), zero_at_padded_queries(0, _QUERY)),
        ),
        Case(
            "sinusoidal_position_encoding",
            "SinusoidalPositionEncoding",
            lambda rng: {"x": padded_floats(rng, [3, 5], 5, EMBED_DIM)},
            _sinusoidal,
            mask_checks=(masked_mean_is_pooled(1, 2, _X),),
        ),
        Case(
            "rotary_embedding_heads",
            "RotaryEmbedding",
            lambda rng: {"x": floats(rng, BATCH, 5, 3, EMBED_DIM)},
            lambda keras, layers, x: [layers.RotaryEmbedding()(x["x"], start_index=2)],
        ),
        Case(
            "rotary_embedding_masked",
            "RotaryEmbedding",
            lambda rng: {"x": padded_floats(rng, [3, 5], 5, EMBED_DIM)},
            _rotary_3d,
            mask_checks=(_POOLED_X,),
        ),
        Case(
            "relative_position_bias",
            "RelativePositionBias",
            lambda rng: {"scores": floats(rng, BATCH, 3, 5, 12)},
            lambda keras, layers, x: [
                layers.RelativePositionBias(num_heads=3, num_buckets=8, max_distance=10)(
                    x["scores"]
                )
            ],
        ),
        Case(
            "relative_position_bias_causal",
            "RelativePositionBias",
            lambda rng: {"scores": floats(rng, BATCH, 3, 3, 12)},
            lambda keras, layers, x: [
                layers.RelativePositionBias(3, 6, 8, bidirectional=False)(
                    x["scores"], query_start=4
                )
            ],
        ),
        Case(
            "adaptive_attention_span",
            "AdaptiveAttentionSpan",
            lambda rng: {"weights": rng.random((BATCH, 3, 6, 6)).astype("float32")},
            lambda keras, layers, x: [
                layers.AdaptiveAttentionSpan(num_heads=3, max_span=5, ramp=2)(x["weights"])
            ],
        ),
        Case(
            "adaptive_attention_span_query_start",
            "AdaptiveAttentionSpan",
            lambda rng: {"weights": rng.random((BATCH, 3, 2, 6)).astype("float32")},
            lambda keras, layers, x: [
                layers.AdaptiveAttentionSpan(3, 5, ramp=2, span_penalty=0)(
                    x["weights"], query_start=4
                )
            ],
        ),
        *(
            _ids_case(
                f"token_and_position_embedding_{position}",
                "TokenAndPositionEmbedding",
                _embedding(position),
            )
            for position in ("learned", "sinusoidal", "none")
        ),
        *(
            _ids_case(f"transformer_block_{name}", "TransformerBlock", build)
            for name, build in {
                "post_ln": _encoder(),
                "pre_ln": _encoder("sinusoidal", norm_first=True),
                "rotary": _encoder("none", position="rotary", norm_first=True),
                "relative": _encoder("none", position="relative"),
                "attention_span": _encoder(attention_span=4, key_dim=6),
            }.items()
        ),
        _ids_case(
            "transformer_block_attention_scores",
            "TransformerBlock",
            _encoder(scores=True),
            mask_checks=(no_weight_on_padding(1, _IDS),),
        ),
        *(
            _ids_case(f"transformer_decoder_block_{name}", "TransformerDecoderBlock", build)
            for name, build in {
                "decoder_only": _decoder(),
                "pre_ln_rotary": _decoder("none", norm_first=True, position="rotary"),
                "relative": _decoder("none", position="relative"),
            }.items()
        ),
        Case(
            "transformer_decoder_block_with_encoder",
            "TransformerDecoderBlock",
            _translation_inputs,
            _encoder_decoder(),
            mask_checks=(masked_mean_is_pooled(0, 1, _TARGET),),
        ),
        Case(
            "transformer_decoder_block_with_encoder_scores",
            "TransformerDecoderBlock",
            _translation_inputs,
            _encoder_decoder(scores=True),
            mask_checks=(no_weight_on_padding(1, _TARGET), no_weight_on_padding(2, _SOURCE)),
        ),
    ]
}


# ---- running ------------------------------------------------------------------------------


def case_seed(name: str, stream: int) -> np.random.Generator:
    """A generator seeded by the case's name: the same numbers in every process."""
    return np.random.default_rng([zlib.crc32(name.encode()), stream])


def case_inputs(name: str) -> dict[str, np.ndarray]:
    return CASES[name].make_inputs(case_seed(name, 0))


def weight_name(weight) -> str:
    return getattr(weight, "path", None) or weight.name


def set_weights_from_seed(model, name: str) -> list:
    """Set every weight, in ``model.weights`` order, from the case's generator; returns
    ``[[weight name, shape], ...]`` so the caller can check every Keras made the same."""
    rng = case_seed(name, 1)
    values, described = [], []
    for weight in model.weights:
        shape = tuple(int(size) for size in weight.shape)
        if "span_fraction" in weight_name(weight):
            value = rng.uniform(0.3, 0.9, size=shape)  # spans inside (0, max_span)
        else:
            value = WEIGHT_SCALE * rng.normal(size=shape)
        values.append(value.astype("float32"))
        described.append([weight_name(weight), list(shape)])
    model.set_weights(values)
    return described


def run_model(model, ops, inputs: list[np.ndarray]) -> list[np.ndarray]:
    outputs = model(list(inputs), training=False)
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    return [np.asarray(ops.convert_to_numpy(output)) for output in outputs]


def build_model(keras, layers, case: Case, arrays: dict[str, np.ndarray]):
    inputs = {
        name: keras.Input(shape=array.shape[1:], dtype=array.dtype.name, name=name)
        for name, array in arrays.items()
    }
    return keras.Model(list(inputs.values()), case.build(keras, layers, inputs), name=case.name)


def save_outputs(out_dir: Path) -> None:
    import kerasformer  # noqa: F401
    from kerasformer import layers
    from kerasformer.layers.backend import backend_name, keras, ops

    all_inputs, all_outputs, weights, errors = {}, {}, {}, {}
    for name, case in CASES.items():
        arrays = case_inputs(name)
        all_inputs.update({f"{name}.{index}": a for index, a in enumerate(arrays.values())})
        try:
            if case.compute is not None:
                outputs = case.compute(ops, layers, arrays)
                outputs = [np.asarray(ops.convert_to_numpy(output)) for output in outputs]
            else:
                model = build_model(keras, layers, case, arrays)
                weights[name] = set_weights_from_seed(model, name)
                outputs = run_model(model, ops, list(arrays.values()))
                model.save(str(out_dir / f"{name}.keras"))
            all_outputs.update({f"{name}.{index}": o for index, o in enumerate(outputs)})
        except Exception:
            errors[name] = traceback.format_exc()
    np.savez(out_dir / "inputs.npz", **all_inputs)
    np.savez(out_dir / "outputs.npz", **all_outputs)
    (out_dir / "weights.json").write_text(json.dumps(weights, indent=1))
    (out_dir / "errors.json").write_text(
        json.dumps({"backend": backend_name(), "errors": errors}, indent=1)
    )


def reload_outputs(out_dir: Path) -> None:
    import kerasformer  # noqa: F401  (registers the layers: no custom_objects needed)
    from kerasformer.layers.backend import keras, ops

    saved_inputs = np.load(out_dir / "inputs.npz")
    reloaded, errors = {}, {}
    for path in sorted(out_dir.glob("*.keras")):
        name = path.stem
        inputs = []
        while f"{name}.{len(inputs)}" in saved_inputs.files:
            inputs.append(saved_inputs[f"{name}.{len(inputs)}"])
        try:
            model = keras.models.load_model(str(path))
            outputs = run_model(model, ops, inputs)
            reloaded.update({f"{name}.{index}": o for index, o in enumerate(outputs)})
        except Exception:
            errors[name] = traceback.format_exc()
    np.savez(out_dir / "reloaded.npz", **reloaded)
    (out_dir / "reload_errors.json").write_text(json.dumps(errors, indent=1))


def main(argv: list[str]) -> int:
    if argv[:1] == ["--reload"] and len(argv) == 2:
        reload_outputs(Path(argv[1]))
    elif len(argv) == 1 and not argv[0].startswith("-"):
        save_outputs(Path(argv[0]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
