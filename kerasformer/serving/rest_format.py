"""TF Serving's REST bodies: a ``:predict`` request read into columns, and outputs written back.

A request holds either ``instances`` (the row format: one value, or one object of named
values, per example) or ``inputs`` (the columnar format: one list per input, or the list
itself for a signature of one input), and may name a ``signature_name``. Rows are
answered as ``{"predictions": [...]}`` (one value per example for a signature of one
output, else one object per example), columns as ``{"outputs": ...}`` (the tensor for one
output, else an object of tensors): TF Serving's shapes, so a client moves between the two
servers unchanged. Strings go in and out as UTF-8 text, or as ``{"b64": "..."}``, which is
how an output whose name ends in ``_bytes`` is written.

Everything here is plain Python and NumPy; a request that cannot be read is a
`BadRequest` whose message says what is wrong and what to send instead.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

import numpy as np

ROW_KEY, COLUMN_KEY = "instances", "inputs"
DEFAULT_SIGNATURE = "serving_default"
KNOWN_KEYS = {ROW_KEY, COLUMN_KEY, "signature_name"}
# What each TensorFlow dtype is read as, and how it is named in an error.
NUMPY_TYPES = {
    "string": (object, "a string"),
    "float16": (np.float16, "a number"),
    "float32": (np.float32, "a number"),
    "float64": (np.float64, "a number"),
    "int8": (np.int8, "a whole number"),
    "int16": (np.int16, "a whole number"),
    "int32": (np.int32, "a whole number"),
    "int64": (np.int64, "a whole number"),
    "uint8": (np.uint8, "a whole number"),
    "bool": (np.bool_, "true or false"),
}


class BadRequest(Exception):
    """A request the server cannot read: answered with HTTP 400 and ``{"error": message}``."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True)
class TensorSpec:
    """One input or output of a signature: its dtype name and shape (None: any length)."""

    name: str
    dtype: str
    shape: tuple[int | None, ...] | None

    @property
    def batched(self) -> bool:
        """Whether the first axis is the examples' (a scalar input is not batched)."""
        return bool(self.shape) and self.shape[0] is None


@dataclass(frozen=True)
class SignatureSpec:
    """What a signature takes and returns, by name."""

    name: str
    inputs: dict[str, TensorSpec]
    outputs: dict[str, TensorSpec]

    @property
    def batched_inputs(self) -> list[str]:
        return [name for name, spec in self.inputs.items() if spec.batched]

    @property
    def scalar_inputs(self) -> list[str]:
        return [name for name, spec in self.inputs.items() if not spec.batched]


@dataclass(frozen=True)
class PredictRequest:
    """A ``:predict`` body, read: which signature, its inputs as arrays, and the format."""

    signature: SignatureSpec
    columns: dict[str, np.ndarray]
    rows: int
    row_format: bool

    def scalars_key(self) -> tuple:
        """The values of the scalar inputs: requests batch together only where they agree."""
        return tuple((name, self.columns[name].item()) for name in self.signature.scalar_inputs)


def read_predict_request(
    body: bytes, signatures: dict[str, SignatureSpec], max_instances: int
) -> PredictRequest:
    """The request in ``body``, checked against the signature it names.

    Raises:
        BadRequest: the body is not UTF-8 JSON of TF Serving's shape, names no signature
            the model has, or holds a value the signature cannot take.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BadRequest(
            f"the request body is not UTF-8 (byte {error.start} is {body[error.start]:#04x}); "
            'send JSON text, with bytes as {"b64": "..."}.'
        ) from None
    try:
        request = json.loads(text)
    except ValueError as error:
        raise BadRequest(f"the request body is not JSON: {error}.") from None
    except RecursionError:  # json's parser gives up on deep nesting: the client's doing
        raise BadRequest("the request body is nested too deeply to read as JSON.") from None
    if not isinstance(request, dict):
        raise BadRequest(
            'the request body must be a JSON object, {"instances": [...]} or {"inputs": ...}.'
        )
    unknown = sorted(set(request) - KNOWN_KEYS)
    if unknown:
        raise BadRequest(
            f"unknown key {unknown[0]!r} in the request; use 'instances' or 'inputs', and "
            "optionally 'signature_name'."
        )
    signature = chosen_signature(request.get("signature_name", DEFAULT_SIGNATURE), signatures)
    if (ROW_KEY in request) == (COLUMN_KEY in request):
        raise BadRequest(
            "the request must hold exactly one of 'instances' (rows) and 'inputs' (columns)."
        )
    if ROW_KEY in request:
        columns, rows = read_rows(request[ROW_KEY], signature, max_instances)
    else:
        columns, rows = read_columns(request[COLUMN_KEY], signature, max_instances)
    return PredictRequest(signature, columns, rows, row_format=ROW_KEY in request)


def chosen_signature(name, signatures: dict[str, SignatureSpec]) -> SignatureSpec:
    if not isinstance(name, str) or name not in signatures:
        raise BadRequest(
            f"the model has no signature {name!r}; its signatures: {', '.join(sorted(signatures))}."
        )
    return signatures[name]


def read_rows(instances, signature: SignatureSpec, max_instances: int):
    """``instances``: one value per example (one input), or one object per example."""
    if signature.scalar_inputs:
        scalars = ", ".join(repr(name) for name in signature.scalar_inputs)
        raise BadRequest(
            f"signature {signature.name!r} takes the single values {scalars}, which rows "
            'cannot carry; send the columnar format, {"inputs": {...}}.'
        )
    require_examples(instances, "'instances'", max_instances)
    names = signature.batched_inputs
    if len(names) == 1 and not all(is_named_row(instance) for instance in instances):
        return {names[0]: column(instances, signature.inputs[names[0]], "instance")}, len(instances)
    values = {name: [] for name in names}
    for index, instance in enumerate(instances):
        if not is_named_row(instance):
            raise BadRequest(
                f"instance {index} is {json_type(instance)}; signature {signature.name!r} takes "
                f"objects with {', '.join(repr(name) for name in names)}."
            )
        require_names(instance, names, f"instance {index}")
        for name in names:
            values[name].append(instance[name])
    return {
        name: column(values[name], signature.inputs[name], f"'{name}' of instance")
        for name in names
    }, len(instances)


def is_named_row(instance) -> bool:
    """An object of named inputs, not a value: ``{"b64": ...}`` is one string's bytes."""
    return isinstance(instance, dict) and set(instance) != {"b64"}


def read_columns(inputs, signature: SignatureSpec, max_instances: int):
    """``inputs``: one list per input (an object), or the list itself for one input."""
    names = list(signature.inputs)
    if not isinstance(inputs, dict) or (len(names) == 1 and names[0] not in inputs):
        if len(names) != 1:
            raise BadRequest(
                f"'inputs' must be an object with {', '.join(repr(name) for name in names)}."
            )
        inputs = {names[0]: inputs}
    require_names(inputs, names, "'inputs'")
    columns, rows = {}, None
    for name in names:
        spec = signature.inputs[name]
        if not spec.batched:
            columns[name] = scalar(inputs[name], spec)
            continue
        require_examples(inputs[name], f"input {name!r}", max_instances)
        if rows is not None and len(inputs[name]) != rows:
            raise BadRequest(
                f"input {name!r} has {len(inputs[name])} values and another has {rows}; "
                "give every input one value per example."
            )
        rows = len(inputs[name])
        columns[name] = column(inputs[name], spec, f"'{name}' value")
    return columns, rows or 0


def require_examples(values, where: str, max_instances: int) -> None:
    if not isinstance(values, list):
        raise BadRequest(f"{where} must be a list with one value per example.")
    if not values:
        raise BadRequest(f"{where} is empty; send at least one example.")
    if len(values) > max_instances:
        raise BadRequest(
            f"{where} holds {len(values)} examples, over this server's limit of "
            f"{max_instances} (--max-instances); split them over several requests."
        )


def require_names(found: dict, names: list[str], where: str) -> None:
    missing = [name for name in names if name not in found]
    if missing:
        raise BadRequest(f"{where} has no {missing[0]!r}; give {', '.join(map(repr, names))}.")
    unknown = sorted(set(found) - set(names))
    if unknown:
        raise BadRequest(
            f"{where} has {unknown[0]!r}, which the signature does not take; give "
            f"{', '.join(map(repr, names))}."
        )


def column(values: list, spec: TensorSpec, where: str) -> np.ndarray:
    """One input's values for every example, as the array the signature takes."""
    if spec.dtype == "string":
        if spec.shape is not None and len(spec.shape) != 1:
            raise BadRequest(f"input {spec.name!r} takes nested strings, which are not served.")
        return np.array(
            [string_value(value, f"{where} {index}") for index, value in enumerate(values)],
            dtype=object,
        )
    numpy_type, noun = NUMPY_TYPES.get(spec.dtype, (None, None))
    if numpy_type is None:
        raise BadRequest(f"input {spec.name!r} is of type {spec.dtype}, which is not served.")
    array = numeric_array(values, numpy_type, noun, f"{where}s of {spec.name!r}")
    if spec.shape is not None and (
        array.ndim != len(spec.shape)
        or any(want not in (None, got) for want, got in zip(spec.shape, array.shape, strict=True))
    ):
        shape = ["?" if size is None else size for size in spec.shape]
        raise BadRequest(
            f"input {spec.name!r} takes shape {shape}; the values given have shape "
            f"{list(array.shape)}."
        )
    return array


def scalar(value, spec: TensorSpec) -> np.ndarray:
    """A single value (a scalar input), such as the ``temperature`` of a sampling signature."""
    if spec.dtype == "string":
        return np.array(string_value(value, f"input {spec.name!r}"), dtype=object)
    numpy_type, noun = NUMPY_TYPES.get(spec.dtype, (None, None))
    if numpy_type is None or isinstance(value, list | dict):
        raise BadRequest(f"input {spec.name!r} takes one value: {noun or spec.dtype}.")
    return numeric_array(value, numpy_type, noun, f"input {spec.name!r}")


def string_value(value, where: str) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, dict) and set(value) == {"b64"} and isinstance(value["b64"], str):
        try:
            return base64.b64decode(value["b64"], validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest(f"{where} is not valid base64.") from None
    raise BadRequest(f'{where} is {json_type(value)}; give a string (or {{"b64": "..."}}).')


def numeric_array(values, numpy_type, noun: str, where: str) -> np.ndarray:
    if contains(values, lambda item: isinstance(item, str | dict) or item is None):
        raise BadRequest(f"{where} must be {noun}, not text, an object or null.")
    if numpy_type is not np.bool_ and contains(values, lambda item: isinstance(item, bool)):
        raise BadRequest(f"{where} must be {noun}, not true or false.")
    if np.issubdtype(numpy_type, np.integer) and contains(
        values, lambda item: isinstance(item, float)
    ):
        raise BadRequest(f"{where} must be {noun}.")
    try:
        array = np.array(values)
    except ValueError:
        raise BadRequest(f"{where} are lists of different lengths.") from None
    if array.dtype == object:
        raise BadRequest(f"{where} are lists of different lengths.")
    if np.issubdtype(numpy_type, np.integer) and array.size:
        limits = np.iinfo(numpy_type)
        if array.min() < limits.min or array.max() > limits.max:
            raise BadRequest(f"{where} must fit in {np.dtype(numpy_type).name}.")
    return array.astype(numpy_type)


def contains(values, test) -> bool:
    if isinstance(values, list):
        return any(contains(item, test) for item in values)
    return test(values)


def json_type(value) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    return "a string"


def predict_response(
    outputs: dict[str, np.ndarray], signature: SignatureSpec, row_format: bool
) -> dict:
    """TF Serving's answer: ``predictions`` for rows, ``outputs`` for columns."""
    values = {name: json_value(array, name) for name, array in outputs.items()}
    if not row_format:
        return {"outputs": next(iter(values.values())) if len(values) == 1 else values}
    batch_sizes = {name: np.shape(array)[0] if np.ndim(array) else None for name, array in
                   outputs.items()}  # fmt: skip
    if len(set(batch_sizes.values())) != 1 or None in batch_sizes.values():
        raise BadRequest(
            f"signature {signature.name!r} returns outputs that are not one per example; "
            'ask in the columnar format, {"inputs": ...}.'
        )
    if len(values) == 1:
        return {"predictions": next(iter(values.values()))}
    (rows,) = set(batch_sizes.values())
    return {"predictions": [{name: value[row] for name, value in values.items()}
                            for row in range(rows)]}  # fmt: skip


def json_value(array, name: str):
    """An output as JSON: strings as UTF-8 text, or base64 where the name ends in _bytes."""
    array = np.asarray(array)
    if array.dtype.kind not in ("O", "S"):
        return array.tolist()
    if name.endswith("_bytes"):
        return nested(array.tolist(), lambda item: {"b64": base64.b64encode(item).decode("ascii")})
    return nested(array.tolist(), lambda item: item.decode("utf-8", "replace"))


def nested(values, convert):
    """``convert`` applied to every item of nested lists (or to a single value)."""
    if isinstance(values, list):
        return [nested(value, convert) for value in values]
    return convert(values)
