"""Ready-made classifiers, by name."""

from __future__ import annotations

from collections.abc import Iterable

from kerasformer.backend import keras
from kerasformer.errors import KerasformerError
from kerasformer.models.bert_classifier import build_bert_classifier
from kerasformer.models.transformer_classifier import (
    adapt_vectorizer,
    attention_weights,
    build_transformer_classifier,
    text_vectorizer,
)


def _prepared_transformer(num_classes: int, train_texts: Iterable[str], **options) -> keras.Model:
    model = build_transformer_classifier(num_classes, **options)
    adapt_vectorizer(model, train_texts)
    return model


def _prepared_bert(num_classes: int, train_texts: Iterable[str], **options) -> keras.Model:
    del train_texts  # the pretrained preprocess model brings its own vocabulary
    return build_bert_classifier(num_classes, **options)


MODELS = {"transformer": _prepared_transformer, "bert": _prepared_bert}


def build_classifier(
    name: str, num_classes: int, train_texts: Iterable[str], **options
) -> keras.Model:
    """Build a classifier by name, ready to compile; vocabularies come from ``train_texts``."""
    if name not in MODELS:
        raise KerasformerError(
            f"unknown model {name!r}; choose one of: {', '.join(sorted(MODELS))}."
        )
    try:
        return MODELS[name](num_classes, train_texts, **options)
    except (TypeError, ValueError) as error:
        raise KerasformerError(f"cannot build model {name!r}: {error}") from error


__all__ = [
    "MODELS",
    "adapt_vectorizer",
    "attention_weights",
    "build_bert_classifier",
    "build_classifier",
    "build_transformer_classifier",
    "text_vectorizer",
]
