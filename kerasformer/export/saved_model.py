"""Export a classifier as a SavedModel that maps raw strings to class probabilities.

The export directory is a SavedModel (``saved_model_cli`` and ``tf.saved_model.load``
work on it without kerasformer installed) with the Keras model beside it:

    saved_model.pb, variables/, assets/class_names.txt   the SavedModel
    model.keras                                          the Keras model, for kerasformer
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from kerasformer.backend import keras, tf
from kerasformer.export.staged_directory import require_replaceable, staged_directory
from kerasformer.models import has_text_vectorizer, text_vectorizer, token_id_classifier
from kerasformer.models.bert_classifier import PackedBertClassifier, bert_preprocess_layer
from kerasformer.models.transformer_classifier import (
    drop_padding_columns,
    one_unknown_word_if_empty,
)

INPUT_NAME = "inputs"
CLASS_NAMES_FILE = "class_names.txt"
KERAS_FILE = "model.keras"


class ClassifierServing(tf.Module):
    """What the SavedModel holds: the model, its class names, and the serving functions.

    ``serve`` returns, per text, ``probabilities``, ``predicted_class`` and
    ``known_tokens``: how many of the tokens the model read are in its vocabulary. Every
    text gets a finite probability row; one with no known token (empty, punctuation,
    emoji, a script the model never saw) gets a guess, which callers flag by
    ``known_tokens == 0``. Only TensorFlow ops are traced, so no kerasformer is needed
    to serve it.
    """

    # TextVectorization's fixed ids: 0 pads, 1 stands for every out-of-vocabulary word.
    PADDING_ID = 0
    OOV_ID = 1
    # BERT word pieces that stand for no word of the text.
    BERT_NON_WORDS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
    BERT_SPECIAL_IDS = ("padding_id", "start_of_sequence_id", "end_of_segment_id")

    def __init__(self, model: keras.Model, class_names: Sequence[str], class_names_file: Path):
        super().__init__(name="classifier_serving")
        self.model = model
        # Same weights as the model; also counts the known tokens of each text.
        self._classify = self.counting_classifier(model)
        self.class_names = tf.constant(list(class_names), dtype=tf.string)
        self.class_names_file = tf.saved_model.Asset(str(class_names_file))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=INPUT_NAME)])
    def serve(self, inputs):
        probabilities, known_tokens = self._classify(inputs)
        return {
            "probabilities": probabilities,
            "predicted_class": tf.gather(self.class_names, tf.argmax(probabilities, axis=-1)),
            "known_tokens": known_tokens,
        }

    @tf.function(input_signature=[])
    def get_class_names(self):
        return {"class_names": self.class_names}

    @classmethod
    def counting_classifier(cls, model: keras.Model) -> Callable:
        """A function from strings to (probabilities, known tokens per text) for ``model``."""
        if has_text_vectorizer(model):
            return cls.vectorizer_classifier(model)
        preprocess = bert_preprocess_layer(model)
        if preprocess is None:
            raise ValueError(
                f"cannot export model {model.name!r}: it has neither a TextVectorization "
                "layer nor a BERT preprocess layer (output 'input_word_ids') to tell which "
                "words it knows; build it with kerasformer.models.build_classifier."
            )
        return cls.bert_classifier(model, preprocess)

    @classmethod
    def vectorizer_classifier(cls, model: keras.Model) -> Callable:
        """For models with a TextVectorization: skips the padding a whole batch shares."""
        vectorizer, on_ids = text_vectorizer(model), token_id_classifier(model)

        def classify(texts):
            ids = drop_padding_columns(vectorizer(texts))
            known_tokens = tf.reduce_sum(tf.cast(ids > cls.OOV_ID, tf.int32), axis=-1)
            probabilities = on_ids(one_unknown_word_if_empty(ids), training=False)
            return probabilities, known_tokens

        return classify

    @classmethod
    def bert_classifier(cls, model: keras.Model, preprocess: keras.layers.Layer) -> Callable:
        """For BERT models: texts packed in length-sorted chunks, as long as they are."""
        packed = PackedBertClassifier(model)
        non_words = sorted(cls.bert_non_word_ids(preprocess))

        def classify(texts):
            probabilities, pieces = packed.probabilities_and_pieces(texts)
            is_non_word = tf.reduce_any(
                pieces.flat_values[:, None] == tf.constant(non_words, pieces.dtype), axis=-1
            )
            known = pieces.with_flat_values(tf.cast(tf.logical_not(is_non_word), tf.int32))
            return probabilities, tf.reduce_sum(known, axis=-1)

        return classify

    @classmethod
    def bert_non_word_ids(cls, preprocess: keras.layers.Layer) -> set[int]:
        """Ids of [PAD], [CLS], [SEP] (from the tokenizer) and [UNK] (from its vocab file).

        The preprocess model's ``tokenize.get_special_tokens_dict`` has no unknown-token
        id, so that one is looked up by name in ``assets/vocab.txt`` of its handle.
        """
        import tensorflow_hub as hub

        special = preprocess.resolved_object.tokenize.get_special_tokens_dict()
        ids = {int(special[key]) for key in cls.BERT_SPECIAL_IDS}
        vocab_file = Path(hub.resolve(preprocess.get_config()["handle"])) / "assets/vocab.txt"
        if vocab_file.is_file():
            vocab = vocab_file.read_text(encoding="utf-8").splitlines()
            ids |= {i for i, piece in enumerate(vocab) if piece.strip() in cls.BERT_NON_WORDS}
        return ids


def export_classifier(
    model: keras.Model, class_names: Sequence[str], export_dir: str | Path, overwrite: bool = True
) -> Path:
    """Write the SavedModel and ``model.keras`` to ``export_dir``, replacing it whole.

    The ``serving_default`` signature takes ``inputs``, a batch of strings, and returns
    ``probabilities`` (one per class, summing to 1) and ``predicted_class`` (its name).
    A second signature, ``class_names``, returns the class names in output order.

    The export is written beside ``export_dir`` and swapped in complete, so a failure or
    a killed process never leaves half a model; an existing ``export_dir`` is replaced
    only if kerasformer wrote it (and ``overwrite`` is true).
    """
    require_replaceable(export_dir, overwrite, flag="--export-dir", kind="classifier")
    with staged_directory(export_dir, "classifier", overwrite) as staging:
        write_classifier(model, class_names, staging)
    return Path(export_dir)


def write_classifier(model: keras.Model, class_names: Sequence[str], directory: Path) -> None:
    """Write the SavedModel and ``model.keras`` into ``directory`` (which may exist, empty)."""
    if len(class_names) != model.output_shape[-1]:
        raise ValueError(
            f"{len(class_names)} class names for a model with {model.output_shape[-1]} outputs."
        )
    with tempfile.TemporaryDirectory(prefix="kerasformer-assets-") as assets:
        names_file = Path(assets) / CLASS_NAMES_FILE
        names_file.write_text("".join(f"{name}\n" for name in class_names), encoding="utf-8")
        serving = ClassifierServing(model, class_names, names_file)
        tf.saved_model.save(
            serving,
            str(directory),
            signatures={
                "serving_default": serving.serve,
                "class_names": serving.get_class_names,
            },
        )
    model.save(Path(directory) / KERAS_FILE)
