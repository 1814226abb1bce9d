"""Export a classifier or tagger as a LiteRT (TensorFlow Lite) model for phones and small devices.

LiteRT has no string ops (lower-casing, regular expressions, splitting, hash tables:
TF issues #42673, #49973), so the ``.tflite`` model reads token ids and Python makes
them: `kerasformer.litert.word_ids.WordIds` for a classifier (the ids of its
``TextVectorization``, from ``NAME.vocab.txt``), `SequenceTagger`'s word and character
ids for a tagger. Only builtin ops are allowed, so ``ai-edge-litert`` alone runs it.
See `kerasformer.litert.files` for the files written.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from tqdm.auto import tqdm

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.export.saved_model_files import save_signatures
from kerasformer.files.export_kind import CLASSIFIER, TAGGER, export_kind
from kerasformer.files.whole_file import write_whole_file
from kerasformer.litert import files as litert_files
from kerasformer.litert.files import (
    FORMAT,
    FORMAT_KEY,
    MODEL_SHA256,
    QUANTIZATIONS,
    SIGNATURE,
    TAGGER_SHA256,
    VOCABULARY_SHA256,
    LiteRTFiles,
    fingerprint,
    tagger_fingerprint,
)
from kerasformer.loading.exported_classifier import ExportedClassifier
from kerasformer.loading.keras_model import load_keras_model
from kerasformer.loading.tagger import load_tagger


def export_litert(
    export_dir: str | Path, out: str | Path, quantize: str = "dynamic", progress: bool = True
) -> list[Path]:
    """Convert a from-scratch classifier or tagger export to ``out`` (a ``.tflite`` file)
    with its settings (and a classifier's vocabulary) beside it.

    The model's ``serving_default`` signature takes ``token_ids`` ``(batch, words)``
    (a classifier) or ``word_ids`` ``(1, words)`` and ``char_ids`` ``(1, words, chars)``
    (a tagger), all int32, and returns ``probabilities``. Every file is converted
    before any is written, and each is written whole. Returns the files written, the
    model first.
    """
    if quantize not in QUANTIZATIONS:
        raise KerasformerError(
            f"--quantize {quantize!r} is not one of: {', '.join(QUANTIZATIONS)}."
        )
    files = LiteRTFiles(Path(out))
    steps = tqdm(total=3, desc="Converting to LiteRT", unit=" steps", disable=not progress or None)
    with steps:
        module, settings, vocabulary = signature_module(Path(export_dir))
        steps.update()
        model = converted(module, quantize)
        steps.update()
        settings = {FORMAT_KEY: FORMAT, **settings, "quantize": quantize}
        written = write_files(files, model, settings, vocabulary)
        steps.update()
    return written


def signature_module(export_dir: Path) -> tuple[tf.Module, dict, list[str] | None]:
    """The model on ids as a module with its signature, its settings and vocabulary."""
    kind = export_kind(export_dir)
    if kind is CLASSIFIER:
        return classifier_module(export_dir)
    if kind is TAGGER:
        return tagger_module(export_dir)
    what = f"{export_dir} is {kind.noun}" if kind else f"{export_dir} is not a kerasformer export"
    raise KerasformerError(
        f"{what}; export-litert takes a classifier (`kerasformer train`) or a tagger "
        "(`kerasformer train --task ner`)."
    )


def classifier_module(export_dir: Path) -> tuple[tf.Module, dict, list[str]]:
    """The classifier on token ids (int32, any batch and length), as a module to convert."""
    from kerasformer.models.text_classifier import TextClassifier

    exported = ExportedClassifier(export_dir)
    on_ids = TextClassifier.of(load_keras_model(export_dir)).word_id_model()
    module = tf.Module()
    module.model = on_ids.model

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32, name="token_ids")])
    def serve(token_ids):
        return {"probabilities": module.model(tf.cast(token_ids, tf.int64), training=False)}

    module.serve = serve
    settings = {"kind": litert_files.CLASSIFIER, "inputs": ["token_ids"],
                "outputs": ["probabilities"], "max_length": on_ids.max_length,
                "class_names": list(exported.class_names),
                "threshold": exported.threshold}  # fmt: skip
    return module, settings, on_ids.vocabulary


def tagger_module(export_dir: Path) -> tuple[tf.Module, dict, None]:
    """The tagger on one sentence's word and character ids, as a module to convert."""
    tagger = load_tagger(export_dir)
    module = tf.Module()
    module.model = tagger.word_id_model()

    # Batch 1: a BiLSTM over masked, varying lengths needs TensorFlow ops LiteRT lacks
    # (tensorflow#58668), and the runner tags one sentence at a time anyway.
    @tf.function(input_signature=[
        tf.TensorSpec([1, None], tf.int32, name="word_ids"),
        tf.TensorSpec([1, None, None], tf.int32, name="char_ids"),
    ])  # fmt: skip
    def serve(word_ids, char_ids):
        logits = module.model({"word_ids": word_ids, "char_ids": char_ids}, training=False)
        return {"probabilities": tf.nn.softmax(tf.cast(logits, tf.float32))}

    module.serve = serve
    settings = {"kind": litert_files.TAGGER, "inputs": ["word_ids", "char_ids"],
                "outputs": ["probabilities"], "tagger": tagger.settings()}  # fmt: skip
    return module, settings, None


def converted(module: tf.Module, quantize: str) -> bytes:
    """The ``.tflite`` bytes of ``module.serve``, builtin ops only."""
    with tempfile.TemporaryDirectory(prefix="kerasformer-litert-") as scratch:
        save_signatures(module, scratch, {SIGNATURE: module.serve})
        converter = tf.lite.TFLiteConverter.from_saved_model(scratch, signature_keys=[SIGNATURE])
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
        if quantize != "none":
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
        if quantize == "float16":
            converter.target_spec.supported_types = [tf.float16]
        try:
            return converter.convert()
        except Exception as error:  # the converter raises its own classes, or plain ones
            lines = [line for line in str(error).splitlines() if line.strip()] or [repr(error)]
            first = next((line for line in lines if "error" in line.lower()), lines[0])
            raise KerasformerError(
                f"LiteRT cannot convert this model with builtin ops only: {' '.join(first.split())}"
            ) from None


def write_files(
    files: LiteRTFiles, model: bytes, settings: dict, vocabulary: list[str] | None
) -> list[Path]:
    """Each file written whole; the settings hold the vocabulary's fingerprint, so a
    vocabulary left from another export is refused on loading, not read wrongly."""
    written = [files.model]
    settings = {**settings, MODEL_SHA256: fingerprint(model)}
    if isinstance(settings.get("tagger"), dict):
        settings[TAGGER_SHA256] = tagger_fingerprint(settings["tagger"])
    if vocabulary is not None:
        data = "".join(f"{word}\n" for word in vocabulary).encode("utf-8")
        settings = {**settings, VOCABULARY_SHA256: fingerprint(data)}
        written.append(write_whole_file(files.vocabulary, lambda path: path.write_bytes(data)))
    text = json.dumps(settings, ensure_ascii=False, indent=1)
    written.append(write_whole_file(files.settings, lambda path: path.write_text(text, "utf-8")))
    write_whole_file(files.model, lambda path: path.write_bytes(model))
    return written
