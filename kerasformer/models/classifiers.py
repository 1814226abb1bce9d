"""Classifiers by name: build one of the families `kerasformer.registry` names, and use it."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.models.attention_maps import AttentionMap
from kerasformer.models.text_classifier import TextClassifier
from kerasformer.registry import TASKS, resolve

CLASSIFICATION = TASKS["classification"]
# Name to builder, for one release: kerasformer.registry names every model now.
MODELS = {entry.name: resolve(entry.builder).build for entry in CLASSIFICATION.models}


def build_text_classifier(
    name: str, num_classes: int, train_texts: Iterable[str], **options
) -> TextClassifier:
    """Build a classifier of the family ``name`` names in `kerasformer.registry`.

    Vocabularies come from ``train_texts``. The result knows its family: how to run it
    on strings, train it on token ids, count its known words and show its attention.
    """
    if name not in CLASSIFICATION.model_names:
        raise KerasformerError(
            f"unknown model {name!r}; choose one of: {', '.join(sorted(MODELS))}."
        )
    try:
        return resolve(CLASSIFICATION.model(name).builder).build(
            num_classes, train_texts, **options
        )
    except (TypeError, ValueError) as error:
        raise KerasformerError(f"cannot build model {name!r}: {error}") from error


def build_classifier(
    name: str, num_classes: int, train_texts: Iterable[str], **options
) -> keras.Model:
    """Build a classifier by name, ready to compile; vocabularies come from ``train_texts``."""
    return build_text_classifier(name, num_classes, train_texts, **options).model


def classifier_attention_maps(
    model: keras.Model, text: str, second: str | None = None
) -> list[AttentionMap]:
    """Every attention of a classifier for one text: BERT's encoder, or the blocks of the
    from-scratch transformer. ``second`` (a sentence pair) is for BERT only."""
    return TextClassifier.of(model).attention_maps(text, second)


def has_text_vectorizer(model: keras.Model) -> bool:
    return TextClassifier.of(model).family == "transformer"


def string_classifier(model: keras.Model) -> Callable[[tf.Tensor], tf.Tensor]:
    """The fastest way to run ``model`` on a batch of strings, with the same results.

    Models with their own vectorizer skip shared padding; BERT models pack texts in
    length-sorted chunks to their own length; others are called as they are.
    """
    return TextClassifier.of(model).string_function()
