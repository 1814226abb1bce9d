"""One version of one model, loaded: its signatures, its metadata, and a call on columns.

A version is a SavedModel directory (``EXPORT/N/``, or an export's own top level). It is
loaded as `kerasformer.loading.serving_function` loads an export, with TensorFlow alone
(TF Text's ops only for a BERT export), every variable read back first so a damaged file
fails here rather than in a request. It is served only once it has answered a warm-up
request made from its own signature.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kerasformer.backend import import_tensorflow_without_keras, tf
from kerasformer.files.export_kind import QUESTION_ANSWERER, TAGGER, ExportKind
from kerasformer.serving.rest_format import DEFAULT_SIGNATURE, BadRequest, SignatureSpec, TensorSpec

LOG = logging.getLogger("kerasformer.serving")
# A tagger pads its per-text lists to the batch's longest: cut back to a request's own.
TAGGER_ENTITY_OUTPUTS = ("entity_texts", "entity_types", "entity_starts", "entity_ends",
                         "entity_scores")  # fmt: skip
TAGGER_WORD_OUTPUTS = ("words", "tags")


@dataclass(eq=False)  # one object per loaded version: compared and hashed by identity
class Servable:
    """A loaded version: ``signatures`` by name, and the functions that compute them.

    Args:
        model: The model's name on the server.
        version: Its version number.
        directory: The SavedModel directory.
        kind: What kerasformer exported there, or None for another SavedModel.
        functions: Each signature's concrete function.
        signatures: What each signature takes and returns.
        signature_defs: The SavedModel's ``SignatureDef`` s as JSON, for ``/metadata``.
    """

    model: str
    version: int
    directory: Path
    kind: ExportKind | None
    functions: dict = field(repr=False)
    signatures: dict[str, SignatureSpec] = field(repr=False)
    signature_defs: dict = field(repr=False)
    # Its request batchers, kept with it: a version swapped out takes them along.
    batchers: dict = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, model: str, version: int, directory: Path, kind: ExportKind | None) -> Servable:
        """Load ``directory`` and answer one warm-up request; raise if either fails."""
        from kerasformer.loading.serving_function import load_saved_model

        import_tensorflow_without_keras()
        loaded, saved_model = load_saved_model(Path(directory))
        functions = dict(loaded.signatures)
        servable = cls(
            model, version, Path(directory), kind, functions,
            {name: signature_spec(name, function) for name, function in functions.items()},
            signature_defs_json(saved_model),
        )  # fmt: skip
        # Keep the loaded object alive: the functions hold only weak references to it.
        servable._loaded = loaded
        servable.warm_up()
        return servable

    def predict(self, signature: str, columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Run ``signature`` on ``columns``; a value the graph refuses is a `BadRequest`."""
        spec = self.signatures[signature]
        arguments = {
            name: tf.constant(values, dtype=tf.as_dtype(spec.inputs[name].dtype))
            for name, values in columns.items()
        }
        try:
            outputs = self.functions[signature](**arguments)
        except (tf.errors.InvalidArgumentError, ValueError, TypeError) as error:
            raise BadRequest(f"the model refused the inputs: {first_line(error)}") from None
        return {name: value.numpy() for name, value in outputs.items()}

    def warm_up(self) -> None:
        """Call ``serving_default`` (and each other signature of batched inputs) once."""
        for name, spec in self.signatures.items():
            if spec.scalar_inputs or not spec.inputs:
                continue
            try:
                self.predict(name, warm_up_columns(spec, self.kind))
            except Exception:
                if name == DEFAULT_SIGNATURE:
                    raise
                LOG.warning("%s version %d: signature %s failed its warm-up request",
                            self.model, self.version, name)  # fmt: skip

    def can_batch(self, signature: str) -> bool:
        """Whether requests to ``signature`` can be answered by one call, split back.

        Outputs of one fixed shape per example split exactly. A tagger's entity and word
        lists are padded to the longest in the call; they are cut back to each request's
        own longest, as the request alone would get them. Any other output whose shape
        depends on the batch is not gathered.
        """
        spec = self.signatures[signature]
        if self.kind is TAGGER and signature == DEFAULT_SIGNATURE:
            return True
        return all(
            output.shape is not None and output.batched and None not in output.shape[1:]
            for output in spec.outputs.values()
        )

    def rows(self, signature: str, outputs: dict[str, np.ndarray], start: int, stop: int) -> dict:
        """The outputs of examples ``start:stop`` of a gathered call, as they alone get them."""
        part = {name: value[start:stop] for name, value in outputs.items()}
        if self.kind is TAGGER and signature == DEFAULT_SIGNATURE:
            entities = int(part["entity_counts"].max(initial=0))
            words = int((part["words"] != b"").sum(axis=1).max(initial=0))
            for name in TAGGER_ENTITY_OUTPUTS:
                part[name] = part[name][:, :entities]
            for name in TAGGER_WORD_OUTPUTS:
                part[name] = part[name][:, :words]
        return part

    def metadata(self) -> dict:
        """TF Serving's answer to ``GET .../metadata``."""
        return {
            "model_spec": {"name": self.model, "signature_name": "", "version": str(self.version)},
            "metadata": {"signature_def": {"signature_def": self.signature_defs}},
        }


def signature_spec(name: str, function) -> SignatureSpec:
    inputs = {
        key: TensorSpec(key, spec.dtype.name, shape_of(spec.shape))
        for key, spec in function.structured_input_signature[1].items()
    }
    outputs = {
        key: TensorSpec(key, spec.dtype.name, shape_of(spec.shape))
        for key, spec in function.structured_outputs.items()
    }
    return SignatureSpec(name, inputs, outputs)


def shape_of(shape) -> tuple[int | None, ...] | None:
    return None if shape.rank is None else tuple(shape.as_list())


def signature_defs_json(saved_model) -> dict:
    """The SavedModel's signatures as TF Serving's metadata writes them (proto JSON)."""
    from google.protobuf.json_format import MessageToDict

    signature_defs = saved_model.meta_graphs[0].signature_def
    return {
        name: MessageToDict(signature_defs[name], preserving_proto_field_name=True)
        for name in sorted(signature_defs)
    }


def warm_up_columns(spec: SignatureSpec, kind: ExportKind | None) -> dict[str, np.ndarray]:
    """One example for every input: a short text for strings, zeros for numbers."""
    columns = {}
    for name, tensor in spec.inputs.items():
        if tensor.dtype == "string":
            text = "What is this?" if kind is QUESTION_ANSWERER and name == "question" else (
                "This is a warm-up request."
            )  # fmt: skip
            columns[name] = np.array([text.encode()], dtype=object)
        else:
            shape = [1] + [size or 1 for size in (tensor.shape or (None,))[1:]]
            columns[name] = np.zeros(shape, dtype=tensor.dtype)
    return columns


def first_line(error: Exception) -> str:
    """The line of an error that says what is wrong: a graph's failed assertion's own
    words (a sampling ``top_p`` out of range), else the message's first line."""
    message = getattr(error, "message", None) or str(error)
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("assertion failed:"):
            # "assertion failed: [top_p must be in (0, 1] ...; got] [1.5]": the words, unbracketed.
            words = line.removeprefix("assertion failed:").replace("] [", " ")
            return words.strip(" []")[:500]
    return (lines[0] if lines else type(error).__name__)[:500]
