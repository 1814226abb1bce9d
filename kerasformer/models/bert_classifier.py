"""The BERT text classifier: a functional model around TF-Hub preprocess and encoder models."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.models.attention_maps import bert_attention_map
from kerasformer.models.bert_packing import (
    ENCODER_INPUTS,
    BertInputPacker,
    in_length_sorted_chunks,
)
from kerasformer.models.hub_layer import COMPILES_GRADIENT_ONCE, HubLayer  # noqa: F401
from kerasformer.models.transformer_classifier import require_output_activation
from kerasformer.network import is_url, require_reachable
from kerasformer.validation import is_whole_number

# Seed 001's handles; tfhub.dev needs the internet. Offline, convert a checkpoint with
# `kerasformer convert-bert` and pass the local directories instead.
ONLINE_PREPROCESS = "https://tfhub.dev/tensorflow/bert_en_uncased_preprocess/3"
ONLINE_ENCODER = "https://tfhub.dev/tensorflow/small_bert/bert_en_uncased_L-4_H-128_A-2/1"
ENCODER_LAYER = "encoder"
HEAD_LAYERS = ("pooled_dropout", "probabilities")
# Texts per encoder call when a batch is packed in length-sorted chunks: large enough to
# keep the matrix products efficient, small enough that lengths within a chunk are close.
INFERENCE_CHUNK = 32
T = TypeVar("T")
LOCAL_HANDLES_FIX = (
    "pass local handles instead: make them with `kerasformer convert-bert [CHECKPOINT] "
    "--out DIR`, then use --preprocess DIR/preprocess --encoder DIR/encoder."
)


def build_bert_classifier(
    num_classes: int,
    preprocess: str | Path = ONLINE_PREPROCESS,
    encoder: str | Path = ONLINE_ENCODER,
    dropout: float = 0.1,
    trainable: bool = False,
    output_activation: str = "softmax",
    name: str = "bert_classifier",
) -> keras.Model:
    """Build seed 001's functional BERT classifier: raw strings in, probabilities out.

    ``Input(string)`` -> ``HubLayer(preprocess)`` -> ``HubLayer(encoder)`` ->
    ``Dropout`` on ``pooled_output`` -> ``Dense(num_classes, softmax)``.

    Args:
        num_classes: Number of classes (at least 2).
        preprocess: TF-Hub handle (URL or local directory) of a BERT preprocess model;
            by default seed 001's on tfhub.dev, which needs the internet. Offline,
            ``kerasformer convert-bert --out DIR`` writes ``DIR/preprocess``.
        encoder: TF-Hub handle of the matching BERT encoder (``DIR/encoder``); by
            default seed 001's small BERT on tfhub.dev.
        dropout: Dropout rate on the pooled output.
        trainable: Whether the encoder's weights are trained (fine-tuning); False (the
            default) trains the head alone.
        output_activation: ``"softmax"`` (one class), or ``"sigmoid"`` (multi-label).
        name: Model name.

    Returns:
        The uncompiled functional tf-keras model. A local handle is kept as an absolute
        path, so the saved model finds it again from any working directory.

    Raises:
        KerasformerError: ``num_classes`` is not a whole number >= 2, or a handle is not
            a SavedModel directory, cannot be reached or cannot be loaded.
        ValueError: ``output_activation`` is neither ``"softmax"`` nor ``"sigmoid"``.

    Examples:
        >>> model = build_bert_classifier(4, "hub/minilm/preprocess", "hub/minilm/encoder")
        >>> model(tf.constant(["I love transformers"])).shape
        TensorShape([1, 4])
    """
    if not is_whole_number(num_classes) or num_classes < 2:
        raise KerasformerError(f"num_classes must be an integer >= 2, got {num_classes!r}.")
    require_output_activation(output_activation)
    text = keras.Input(shape=(), dtype=tf.string, name="text")
    encoder_inputs = hub_layer(preprocess, "preprocess", trainable=False)(text)
    outputs = hub_layer(encoder, ENCODER_LAYER, trainable=trainable)(encoder_inputs)
    pooled = keras.layers.Dropout(dropout, name="pooled_dropout")(outputs["pooled_output"])
    # float32 even under a mixed-precision policy: softmax probabilities need the range.
    probabilities = keras.layers.Dense(
        num_classes, activation=output_activation, dtype="float32", name="probabilities"
    )(pooled)
    return keras.Model(text, probabilities, name=name)


def hub_layer(handle: str | Path, name: str, trainable: bool) -> HubLayer:
    """`HubLayer` for a URL or a local SavedModel, with one-line errors.

    A local handle is kept as an absolute path, so that the saved model finds it again
    from any working directory.
    """
    return load_hub_handle(
        absolute_handle(handle), name, lambda h: HubLayer(h, trainable=trainable, name=name)
    )


def absolute_handle(handle: str | Path) -> str:
    """A URL as it is; a local path made absolute (symbolic links kept, not resolved)."""
    handle = str(handle)
    return handle if is_url(handle) else os.path.abspath(handle)


def load_hub_handle(handle: str | Path, name: str, load: Callable[[str], T]) -> T:
    """``load(handle)`` for a TF-Hub URL or SavedModel directory; one-line errors.

    ``name`` is the model's role and command-line flag (``preprocess``, ``encoder``).
    """
    handle = str(handle)
    if is_url(handle):
        require_reachable(handle, f"the {name} model {handle}", LOCAL_HANDLES_FIX)
        return _load_hub_handle(handle, name, load)
    if not (Path(handle) / "saved_model.pb").is_file():
        raise KerasformerError(
            f"--{name} {handle} is not a SavedModel directory (no saved_model.pb); "
            + LOCAL_HANDLES_FIX
        )
    return _load_hub_handle(handle, name, load)


def _load_hub_handle(handle: str, name: str, load: Callable[[str], T]) -> T:
    try:
        return load(handle)
    except Exception as error:  # hub raises many kinds: network, format, missing ops
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise KerasformerError(
            f"cannot load the {name} model {handle} ({type(error).__name__}: {message}); "
            f"{LOCAL_HANDLES_FIX}"
        ) from None


def encoder_layer(model: keras.Model):
    """The model's TF-Hub encoder layer, whose ``trainable`` the recipes switch."""
    try:
        return model.get_layer(ENCODER_LAYER)
    except ValueError:
        raise KerasformerError(
            f"model {model.name!r} has no layer named {ENCODER_LAYER!r}."
        ) from None


def bert_preprocess_layer(model: keras.Model) -> keras.layers.Layer | None:
    """The layer that turns strings into BERT word pieces (``input_word_ids``), if any."""
    for layer in model.layers:
        output = getattr(layer, "output", None)
        if isinstance(output, dict) and "input_word_ids" in output:
            return layer
    return None


def bert_attention_maps(model: keras.Model, text: str, second: str | None = None) -> list:
    """The encoder's self-attention over one text, or a pair of texts, word by word piece.

    The classifier's own preprocess model tokenises; the attention comes from its
    encoder's current (possibly fine-tuned) weights.
    """
    preprocess = bert_preprocess_layer(model)
    if preprocess is None or not hasattr(preprocess, "resolved_object"):
        raise KerasformerError(f"model {model.name!r} has no TF-Hub BERT preprocess model.")
    encoder = encoder_layer(model).resolved_object
    return [bert_attention_map(preprocess.resolved_object, encoder, text, second)]


def is_bert_classifier(model: keras.Model) -> bool:
    return bert_preprocess_layer(model) is not None


def bert_classifier_on_encoder_inputs(model: keras.Model) -> keras.Model:
    """The classifier from packed encoder inputs of any length on, sharing every weight.

    The string-in model's own graph fixes the preprocess model's sequence length; this one
    takes ``input_word_ids``, ``input_mask`` and ``input_type_ids`` of shape
    ``[batch, any length]``, as `BertInputPacker` packs them.
    """
    try:
        encoder, dropout, head = (model.get_layer(name) for name in (ENCODER_LAYER, *HEAD_LAYERS))
    except ValueError:
        raise KerasformerError(
            f"model {model.name!r} is not a BERT classifier from build_bert_classifier "
            f"(it needs layers {ENCODER_LAYER!r}, {', '.join(map(repr, HEAD_LAYERS))}); "
            "train it with --input-pipeline strings."
        ) from None
    inputs = {key: keras.Input(shape=(None,), dtype=tf.int32, name=key) for key in ENCODER_INPUTS}
    probabilities = head(dropout(encoder(inputs)["pooled_output"]))
    return keras.Model(inputs, probabilities, name=f"{model.name}_on_encoder_inputs")


class PackedBertClassifier:
    """A BERT classifier run on strings without the preprocess model's fixed padding.

    Same weights and, padding being masked, the same probabilities as ``model(texts)``:
    the texts are tokenised, ordered by length, and classified in chunks packed to their
    own longest text (see `in_length_sorted_chunks`).

    Args:
        model: A string-in classifier from `build_bert_classifier`.
        chunk_size: Texts per encoder call.

    Example:

    >>> classify = PackedBertClassifier(model)
    >>> classify(tf.constant(["Stocks rose", "The striker scored"])).shape
    TensorShape([2, 4])
    """

    def __init__(self, model: keras.Model, chunk_size: int = INFERENCE_CHUNK):
        preprocess = bert_preprocess_layer(model)
        if preprocess is None:
            raise KerasformerError(f"model {model.name!r} has no BERT preprocess layer.")
        if not is_whole_number(chunk_size) or chunk_size < 1:
            raise KerasformerError(f"chunk_size must be a whole number >= 1, got {chunk_size!r}.")
        self.packer = BertInputPacker(preprocess)
        self.core = bert_classifier_on_encoder_inputs(model)
        self.chunk_size = chunk_size
        self.num_classes = int(model.output_shape[-1])

    def __call__(self, texts: tf.Tensor) -> tf.Tensor:
        return self.probabilities_and_pieces(texts)[0]

    def probabilities_and_pieces(self, texts: tf.Tensor) -> tuple[tf.Tensor, tf.RaggedTensor]:
        """The probabilities, and the word pieces of each text that the encoder read."""
        pieces = self.packer.word_pieces(texts)
        probabilities = in_length_sorted_chunks(
            self.packer,
            lambda inputs: self.core(inputs, training=False),
            pieces,
            self.chunk_size,
            self.num_classes,
        )
        return probabilities, pieces
