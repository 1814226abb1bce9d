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
"""Each classifier family's name (``"transformer"``, ``"bert"``) and its builder.

A builder is called as ``MODELS[name](num_classes, train_texts, **options)`` and returns
a `TextClassifier`; `build_text_classifier` does the same with one-line errors. Kept for
one release: `kerasformer.registry` names every model now.

Examples:
    >>> sorted(MODELS)
    ['bert', 'transformer']
"""


def build_text_classifier(
    name: str, num_classes: int, train_texts: Iterable[str], **options
) -> TextClassifier:
    """Build a classifier of the family ``name`` names in `kerasformer.registry`.

    Vocabularies come from ``train_texts``. The result knows its family: how to run it
    on strings, train it on token ids, count its known words and show its attention.

    Args:
        name: The family: ``"transformer"`` (from scratch) or ``"bert"`` (a TF-Hub BERT).
        num_classes: How many classes it predicts (at least 2).
        train_texts: The training texts whose words make the from-scratch vocabulary
            (never the test texts); a BERT brings its own vocabulary and ignores them.
        **options: The family's builder's keyword arguments: those of
            `build_transformer_classifier` (``vocab_size``, ``maxlen``, ``embed_dim``...)
            or of `build_bert_classifier` (``preprocess``, ``encoder``, ``trainable``...).

    Returns:
        The string-in classifier, as the `TextClassifier` of its family.

    Raises:
        KerasformerError: ``name`` is no classifier family, or the family's builder
            refuses ``num_classes`` or ``options``.

    Examples:
        >>> texts = ["stocks rose", "the team won the cup", "a new phone", "the vote"]
        >>> small = dict(maxlen=16, embed_dim=8, ff_dim=8)
        >>> classifier = build_text_classifier("transformer", 4, texts, **small)
        >>> classifier.family
        'transformer'
        >>> classifier(tf.constant(["stocks won"])).shape
        TensorShape([1, 4])
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
    """Build a classifier by name, ready to compile; vocabularies come from ``train_texts``.

    The Keras model of `build_text_classifier`'s result: raw strings in, class
    probabilities out.

    Args:
        name: The family: ``"transformer"`` (from scratch) or ``"bert"`` (a TF-Hub BERT).
        num_classes: How many classes it predicts (at least 2).
        train_texts: The training texts whose words make the from-scratch vocabulary
            (never the test texts); a BERT brings its own vocabulary and ignores them.
        **options: The family's builder's keyword arguments: those of
            `build_transformer_classifier` or of `build_bert_classifier`.

    Returns:
        The uncompiled tf-keras model.

    Raises:
        KerasformerError: ``name`` is no classifier family, or the family's builder
            refuses ``num_classes`` or ``options``.

    Examples:
        >>> texts = ["stocks rose", "the team won the cup", "a new phone", "the vote"]
        >>> model = build_classifier("transformer", 4, texts, maxlen=16, embed_dim=8, ff_dim=8)
        >>> model.name, model.output_shape
        ('transformer_classifier', (None, 4))
    """
    return build_text_classifier(name, num_classes, train_texts, **options).model


def classifier_attention_maps(
    model: keras.Model, text: str, second: str | None = None
) -> list[AttentionMap]:
    """Every attention of a classifier for one text: BERT's encoder, or the blocks of the
    from-scratch transformer. ``second`` (a sentence pair) is for BERT only.

    Args:
        model: A classifier `build_classifier` built (or `load_keras_model` loaded).
        text: The text, or a sentence pair's first text.
        second: A sentence pair's second text; None (the default) for one text.

    Returns:
        One `AttentionMap` of its self-attention: every block (or encoder layer) and
        head, over the text's tokens with padding removed.

    Raises:
        KerasformerError: The model has no attention to show, ``text`` has no words, or
            ``second`` is given to a from-scratch classifier.

    Examples:
        >>> texts = ["stocks rose", "the team won the cup", "a new phone", "the vote"]
        >>> model = build_classifier("transformer", 4, texts, maxlen=16, embed_dim=8, ff_dim=8)
        >>> (found,) = classifier_attention_maps(model, "the team won")
        >>> found.name, found.query_tokens, found.weights.shape
        ('self-attention', ('the', 'team', 'won'), (1, 2, 3, 3))
    """
    return TextClassifier.of(model).attention_maps(text, second)


def has_text_vectorizer(model: keras.Model) -> bool:
    """Whether ``model`` is a from-scratch transformer classifier, which reads raw strings
    through its own ``TextVectorization`` layer (a BERT classifier does not).

    Args:
        model: A string-in classifier.

    Returns:
        True for a from-scratch transformer classifier, False for any other.

    Examples:
        >>> texts = ["stocks rose", "the team won the cup", "a new phone", "the vote"]
        >>> model = build_classifier("transformer", 4, texts, maxlen=16, embed_dim=8, ff_dim=8)
        >>> has_text_vectorizer(model)
        True
    """
    return TextClassifier.of(model).family == "transformer"


def string_classifier(model: keras.Model) -> Callable[[tf.Tensor], tf.Tensor]:
    """The fastest way to run ``model`` on a batch of strings, with the same results.

    Models with their own vectorizer skip shared padding; BERT models pack texts in
    length-sorted chunks to their own length; others are called as they are.

    Args:
        model: A string-in classifier.

    Returns:
        A function from a 1-D string tensor to ``(texts, classes)`` probabilities.

    Examples:
        >>> texts = ["stocks rose", "the team won the cup", "a new phone", "the vote"]
        >>> model = build_classifier("transformer", 4, texts, maxlen=16, embed_dim=8, ff_dim=8)
        >>> classify = string_classifier(model)
        >>> classify(tf.constant(["stocks rose", "the cup"])).shape
        TensorShape([2, 4])
    """
    return TextClassifier.of(model).string_function()
