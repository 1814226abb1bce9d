"""Ready-made models: classifiers by name, translators, a language model, and decoding."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.layers import backend as layers_backend
from kerasformer.models import bert_question_answerer  # noqa: F401  (registers SpanLogitMask)
from kerasformer.models.attention_maps import AttentionMap
from kerasformer.models.bert_classifier import (
    PackedBertClassifier,
    bert_attention_maps,
    build_bert_classifier,
    is_bert_classifier,
)
from kerasformer.models.transformer_classifier import (
    adapt_vectorizer,
    attention_map,
    attention_weights,
    build_transformer_classifier,
    padding_free_classifier,
    text_vectorizer,
    token_id_classifier,
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


def classifier_attention_maps(
    model: keras.Model, text: str, second: str | None = None
) -> list[AttentionMap]:
    """Every attention of a classifier for one text: BERT's encoder, or the blocks of the
    from-scratch transformer. ``second`` (a sentence pair) is for BERT only."""
    if is_bert_classifier(model):
        return bert_attention_maps(model, text, second)
    if second is not None:
        raise KerasformerError(
            "a second text is for BERT models, which read sentence pairs; this classifier "
            "reads one text."
        )
    return [attention_map(model, text)]


def has_text_vectorizer(model: keras.Model) -> bool:
    vectorizer = layers_backend.keras.layers.TextVectorization
    return any(isinstance(layer, vectorizer) for layer in model.layers)


def string_classifier(model: keras.Model) -> Callable[[tf.Tensor], tf.Tensor]:
    """The fastest way to run ``model`` on a batch of strings, with the same results.

    Models with their own vectorizer skip shared padding; BERT models pack texts in
    length-sorted chunks to their own length; others are called as they are.
    """
    if has_text_vectorizer(model):
        return padding_free_classifier(model)
    if is_bert_classifier(model):
        return PackedBertClassifier(model)
    return model


__all__ = [
    "MODELS",
    "AttentionMap",
    "classifier_attention_maps",
    "adapt_vectorizer",
    "attention_weights",
    "build_bert_classifier",
    "build_classifier",
    "build_transformer_classifier",
    "has_text_vectorizer",
    "padding_free_classifier",
    "string_classifier",
    "text_vectorizer",
    "token_id_classifier",
]
