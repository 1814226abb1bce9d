"""`run_layer_test`: the checks every kerasformer layer must pass, under all three Kerases.

In the spirit of KerasHub's ``TestCase.run_layer_test``: one call checks a layer's config
round trip, eager and symbolic (functional) calls, mask propagation, a compiled training
step, ``.keras`` saving and mixed precision. It uses only the ``keras`` and ``ops`` of
`kerasformer.layers.backend`, so it runs under tf-keras and under Keras 3 with TensorFlow
or JAX alike.

``input_data`` is a NumPy array (the layer's single input) or a dict of NumPy arrays
passed as keyword call arguments, masks included, e.g. ``{"query": q, "value": v,
"query_mask": m}``. ``call_kwargs`` are the non-tensor call arguments (flags).
"""

from __future__ import annotations

import contextlib
import inspect
import json
import tempfile
import warnings
from pathlib import Path

import numpy as np

from kerasformer.layers.backend import keras, ops

TOLERANCE = 1e-6


def run_layer_test(
    layer_cls,
    init_kwargs,
    input_data,
    expected_output_shape,
    *,
    call_kwargs=None,
    expected_output_mask=None,
    expected_num_trainable_weights=None,
    run_training_check=True,
    run_mixed_precision_check=True,
    run_saving_check=True,
    tmp_path=None,
):
    """Run the shared checks on ``layer_cls(**init_kwargs)``; AssertionError on a failure.

    ``expected_output_shape`` is one shape (a tuple of ints) or, for a layer returning
    several outputs, a tuple/list of shapes, with the batch dimension included.
    ``expected_output_mask`` is compared with ``layer.compute_mask(first_input,
    first_input_mask)``, the call Keras itself makes to propagate masks; the first input's
    mask is ``input_data["<first argument>_mask"]`` or ``input_data["mask"]`` if present.
    """
    call_kwargs = dict(call_kwargs or {})
    expected_shapes = _as_shape_list(expected_output_shape)
    with _check("config round trip"):
        check_config_round_trip(layer_cls, init_kwargs)

    with _check("eager call"):
        layer = layer_cls(**init_kwargs)
        eager_outputs = _as_list(_call_layer(layer, input_data, call_kwargs))
        _check_shapes("eager call", eager_outputs, expected_shapes)
        eager_outputs = [ops.convert_to_numpy(output) for output in eager_outputs]
    if expected_num_trainable_weights is not None:
        assert len(layer.trainable_weights) == expected_num_trainable_weights, (
            f"{layer_cls.__name__} has {len(layer.trainable_weights)} trainable weights "
            f"{_weight_names(layer.trainable_weights)}, expected "
            f"{expected_num_trainable_weights}"
        )
    if expected_output_mask is not None:
        with _check("mask propagation"):
            _check_output_mask(layer, input_data, expected_output_mask)

    with _check("symbolic call in a functional model"):
        model = _functional_model(layer, input_data, call_kwargs)
        symbolic_shapes = [(None, *shape[1:]) for shape in expected_shapes]
        _check_shapes("functional model (symbolic call)", model.outputs, symbolic_shapes)
        model_outputs = _predict(model, input_data)
        _check_close("functional model vs eager call", model_outputs, eager_outputs)

    if run_saving_check:
        with _check(".keras save and load"):
            _check_save_and_load(model, layer, input_data, model_outputs, tmp_path)
    if run_training_check:
        with _check("fit step"):
            _check_fit_trains_every_weight(layer, model, input_data, eager_outputs[0].shape)
    if run_mixed_precision_check:
        with _check("mixed_float16"):
            _check_mixed_precision(layer_cls, init_kwargs, input_data, call_kwargs)


@contextlib.contextmanager
def _check(name):
    """Report an error raised inside a check as that check's failure."""
    try:
        yield
    except AssertionError:
        raise
    except Exception as error:
        raise AssertionError(f"{name} check raised {type(error).__name__}: {error}") from error


def check_config_round_trip(layer_cls, init_kwargs):
    """Every ``__init__`` argument is in the config, which is JSON and round-trips."""
    config = layer_cls(**init_kwargs).get_config()
    name = layer_cls.__name__
    arguments = _own_init_arguments(layer_cls)
    missing = [argument for argument in arguments if argument not in config]
    assert not missing, f"{name}.get_config() lacks __init__ arguments {missing}: {config}"
    try:
        json.dumps(config)
    except TypeError as error:
        raise AssertionError(f"{name}.get_config() is not JSON-serialisable: {error}") from None
    revived = layer_cls.from_config(config).get_config()
    assert revived == config, (
        f"{name}.from_config(config).get_config() differs from config:\n"
        f"  original: {config}\n  revived:  {revived}"
    )


def _own_init_arguments(layer_cls):
    """``__init__``'s named arguments, less ``self`` and those of Keras's base ``Layer``
    (``name``, ``dtype``, ``trainable``...: the base class's config handles those)."""

    def named(function):
        variadic = (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
        parameters = inspect.signature(function).parameters.values()
        return [p.name for p in parameters if p.name != "self" and p.kind not in variadic]

    base_arguments = set(named(keras.layers.Layer.__init__))
    return [name for name in named(layer_cls.__init__) if name not in base_arguments]


def _call_layer(layer, input_data, call_kwargs):
    if isinstance(input_data, dict):
        tensors = {key: ops.convert_to_tensor(value) for key, value in input_data.items()}
        return layer(**tensors, **call_kwargs)
    return layer(ops.convert_to_tensor(input_data), **call_kwargs)


def _functional_model(layer, input_data, call_kwargs):
    """``layer`` in a functional model with one ``keras.Input`` per tensor input."""
    if isinstance(input_data, dict):
        inputs = {key: _input_like(value, key) for key, value in input_data.items()}
        outputs = layer(**inputs, **call_kwargs)
        inputs = list(inputs.values())
    else:
        inputs = _input_like(input_data, "inputs")
        outputs = layer(inputs, **call_kwargs)
    return keras.Model(inputs, _as_list(outputs) if isinstance(outputs, (tuple, list)) else outputs)


def _input_like(array, name):
    array = np.asarray(array)
    return keras.Input(shape=array.shape[1:], dtype=array.dtype.name, name=name)


def _model_inputs(input_data):
    if isinstance(input_data, dict):
        return [np.asarray(value) for value in input_data.values()]
    return np.asarray(input_data)


def _predict(model, input_data):
    """The model's outputs in inference mode, as a list of NumPy arrays."""
    outputs = model(_model_inputs(input_data), training=False)
    return [ops.convert_to_numpy(output) for output in _as_list(outputs)]


def _check_output_mask(layer, input_data, expected_output_mask):
    first_argument = next(iter(inspect.signature(layer.call).parameters))
    if isinstance(input_data, dict):
        first_input = input_data[first_argument]
        first_mask = input_data.get(f"{first_argument}_mask", input_data.get("mask"))
    else:
        first_input, first_mask = input_data, None
    to_tensor = ops.convert_to_tensor
    mask = layer.compute_mask(
        to_tensor(first_input), None if first_mask is None else to_tensor(first_mask)
    )
    where = f"{type(layer).__name__}.compute_mask({first_argument}, mask)"
    assert mask is not None, (
        f"{where} returned None, not the expected mask (Keras passes the mask as the second "
        f"positional argument)"
    )
    np.testing.assert_array_equal(
        ops.convert_to_numpy(mask),
        np.asarray(expected_output_mask),
        err_msg=f"{where} gives the wrong output mask",
    )


def _check_save_and_load(model, layer, input_data, model_outputs, tmp_path):
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(tmp_path if tmp_path is not None else scratch) / "layer_test.keras"
        model.save(str(path))
        loaded = keras.models.load_model(str(path))
    loaded_outputs = _predict(loaded, input_data)
    _check_close("model loaded from .keras vs saved model", loaded_outputs, model_outputs)
    loaded_config = loaded.get_layer(layer.name).get_config()
    assert loaded_config == layer.get_config(), (
        f"config of {type(layer).__name__} after .keras save/load differs:\n"
        f"  saved:  {layer.get_config()}\n  loaded: {loaded_config}"
    )


def _check_fit_trains_every_weight(layer, model, input_data, output_shape):
    """One compiled ``fit`` step (training mode) to random targets of the first output's
    shape gives a finite loss and changes every trainable weight (any element of it)."""
    training_model = keras.Model(model.inputs, model.outputs[0])
    training_model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.01), loss="mse")
    targets = np.random.default_rng(0).normal(size=output_shape).astype("float32")
    before = [np.array(ops.convert_to_numpy(weight)) for weight in layer.trainable_weights]
    with warnings.catch_warnings():
        # Keras 3 on TensorFlow warns when a layer (attention) has no weights at all.
        warnings.filterwarnings("ignore", "The model does not have any trainable weights")
        history = training_model.fit(
            _model_inputs(input_data), targets, batch_size=len(targets), epochs=1, verbose=0
        )
    loss = history.history["loss"][0]
    assert np.isfinite(loss), f"fit gave a non-finite loss {loss}"
    unchanged = [
        _weight_name(weight)
        for weight, old in zip(layer.trainable_weights, before, strict=True)
        if np.array_equal(ops.convert_to_numpy(weight), old)
    ]
    assert not unchanged, f"one fit step left trainable weights unchanged: {unchanged}"


def _check_mixed_precision(layer_cls, init_kwargs, input_data, call_kwargs):
    """Under ``mixed_float16``: float16 finite outputs, float32 variables."""
    policy = keras.mixed_precision.Policy("mixed_float16")
    layer = layer_cls(**{**init_kwargs, "dtype": policy})
    outputs = [
        ops.convert_to_numpy(o) for o in _as_list(_call_layer(layer, input_data, call_kwargs))
    ]
    name = layer_cls.__name__
    for index, output in enumerate(outputs):
        if not np.issubdtype(output.dtype, np.floating):
            continue
        assert output.dtype == np.float16, (
            f"{name} under mixed_float16: output {index} is {output.dtype}, not float16"
        )
        assert np.all(np.isfinite(output)), (
            f"{name} under mixed_float16: output {index} is not finite"
        )
    wrong = [
        f"{_weight_name(weight)}: {_dtype_name(weight.dtype)}"
        for weight in layer.weights
        if _dtype_name(weight.dtype) != "float32"
        and np.issubdtype(np.dtype(_dtype_name(weight.dtype)), np.floating)
    ]
    assert not wrong, f"{name} under mixed_float16: variables not float32: {wrong}"


def _check_shapes(where, outputs, expected_shapes):
    shapes = [tuple(output.shape) for output in outputs]
    assert shapes == expected_shapes, f"{where}: output shapes {shapes}, expected {expected_shapes}"


def _check_close(where, actual, expected):
    assert len(actual) == len(expected), f"{where}: {len(actual)} outputs, not {len(expected)}"
    for index, (got, want) in enumerate(zip(actual, expected, strict=True)):
        np.testing.assert_allclose(
            got, want, rtol=TOLERANCE, atol=TOLERANCE, err_msg=f"{where}: output {index}"
        )


def _as_list(outputs):
    return list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]


def _as_shape_list(expected_output_shape):
    """``[shape]`` for one output, ``[shape, ...]`` for several."""
    shapes = list(expected_output_shape)
    if shapes and all(isinstance(shape, (tuple, list)) for shape in shapes):
        return [tuple(shape) for shape in shapes]
    return [tuple(shapes)]


def _dtype_name(dtype) -> str:
    return getattr(dtype, "name", None) or str(dtype)


def _weight_name(weight) -> str:
    return getattr(weight, "path", None) or weight.name


def _weight_names(weights):
    return [_weight_name(weight) for weight in weights]
