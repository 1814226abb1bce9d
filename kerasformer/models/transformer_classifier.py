"""The from-scratch transformer text classifier, a Keras ``Sequential`` model."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.models import defaults
from kerasformer.models.attention_maps import AttentionMap, blocks_self_attention
from kerasformer.tf_keras.layers import (
    MaskedAveragePooling,
    TokenAndPositionEmbedding,
    TransformerBlock,
)
from kerasformer.validation import is_whole_number

POSITIONS = defaults.CLASSIFIER_POSITIONS
DEFAULTS = defaults.TRANSFORMER_CLASSIFIER


def build_transformer_classifier(
    num_classes: int,
    *,
    vocab_size: int = DEFAULTS["vocab_size"],
    maxlen: int = DEFAULTS["maxlen"],
    embed_dim: int = DEFAULTS["embed_dim"],
    num_heads: int = DEFAULTS["num_heads"],
    ff_dim: int = DEFAULTS["ff_dim"],
    dropout: float = DEFAULTS["dropout"],
    dense_units: int = DEFAULTS["dense_units"],
    key_dim: int | None = None,
    norm_first: bool = DEFAULTS["norm_first"],
    position: str = DEFAULTS["position"],
    output_activation: str = "softmax",
    name: str = "transformer_classifier",
) -> keras.Sequential:
    """Build the seed's classifier: raw strings in, class probabilities out.

    ``TextVectorization`` -> `TokenAndPositionEmbedding` -> `TransformerBlock` ->
    ``MaskedAveragePooling`` -> ``Dropout`` -> ``Dense(dense_units, relu)`` ->
    ``Dropout`` -> ``Dense(num_classes, softmax)``. Token id 0 is padding and is masked
    from attention and from the average; a text with no token at all (empty, or only
    punctuation) pools to zeros rather than NaN. The vectorizer starts empty: call
    `adapt_vectorizer` on training text before training.

    ``position`` is ``"learned"`` (the seed's), ``"sinusoidal"`` (added by the
    embedding), ``"rotary"`` or ``"relative"`` (inside the attention). ``norm_first``
    makes the block pre-LN and adds the final layer normalisation pre-LN models need.
    ``output_activation`` ``"sigmoid"`` makes a multi-label classifier: each class's
    probability on its own.

    The model is a tf-keras model, as the trainer, the exports and the command line
    use; a Keras 3 project builds the same stack from `kerasformer.layers`.

    Args:
        num_classes: How many classes it predicts (at least 2).
        vocab_size: The vectorizer's vocabulary size, padding and unknown included.
        maxlen: Tokens a text is padded or cut to.
        embed_dim: Width of the token embeddings and of the block.
        num_heads: Attention heads in the block.
        ff_dim: Width of the block's feed-forward layer.
        dropout: Dropout rate in the block and on the head.
        dense_units: Width of the ``relu`` layer before the output.
        key_dim: Width of each attention head; None (the default) for
            ``embed_dim // num_heads``.
        norm_first: Pre-LN block (layer normalisation before attention and
            feed-forward) with a final normalisation; False (the seed's): post-LN.
        position: ``"learned"``, ``"sinusoidal"``, ``"rotary"`` or ``"relative"``.
        output_activation: ``"softmax"`` (one class per text) or ``"sigmoid"``
            (multi-label).
        name: The model's name.

    Returns:
        The uncompiled ``Sequential`` model, its vectorizer not yet adapted.

    Raises:
        ValueError: ``num_classes`` is not a whole number >= 2, or ``position`` or
            ``output_activation`` is not one of the above.

    Examples:
        >>> model = build_transformer_classifier(num_classes=4, maxlen=16, embed_dim=8)
        >>> adapt_vectorizer(model, ["stocks rise", "team wins the cup"])
        >>> model(tf.constant(["stocks win"])).shape
        TensorShape([1, 4])
    """
    if not is_whole_number(num_classes) or num_classes < 2:
        raise ValueError(f"`num_classes` must be an integer >= 2, got {num_classes!r}.")
    if position not in POSITIONS:
        raise ValueError(f"`position` must be one of {', '.join(POSITIONS)}, got {position!r}.")
    require_output_activation(output_activation)
    embedding_position, attention_position = POSITIONS[position]
    layers = [
        keras.Input(shape=(), dtype="string", name="text"),
        keras.layers.TextVectorization(
            max_tokens=vocab_size, output_sequence_length=maxlen, name="vectorizer"
        ),
        TokenAndPositionEmbedding(
            maxlen, vocab_size, embed_dim, position=embedding_position, name="embedding"
        ),
        TransformerBlock(
            embed_dim,
            num_heads,
            ff_dim,
            dropout=dropout,
            key_dim=key_dim,
            norm_first=norm_first,
            position=attention_position,
            name="transformer_block",
        ),
    ]
    if norm_first:
        # Pre-LN leaves the residual stream unnormalised; the final norm fixes its scale.
        layers.append(keras.layers.LayerNormalization(epsilon=1e-6, name="final_norm"))
    layers += [
        MaskedAveragePooling(name="pooling"),
        keras.layers.Dropout(dropout, name="pooled_dropout"),
        keras.layers.Dense(dense_units, activation="relu", name="hidden"),
        keras.layers.Dropout(dropout, name="hidden_dropout"),
        # float32 even under a mixed-precision policy: probabilities need the range.
        keras.layers.Dense(
            num_classes, activation=output_activation, dtype="float32", name="probabilities"
        ),
    ]
    return keras.Sequential(layers, name=name)


OUTPUT_ACTIVATIONS = ("softmax", "sigmoid")  # one class of many; any classes at once


def require_output_activation(activation: str) -> None:
    if activation not in OUTPUT_ACTIVATIONS:
        raise ValueError(
            f"`output_activation` must be one of {', '.join(OUTPUT_ACTIVATIONS)}, "
            f"got {activation!r}."
        )


def text_vectorizer(model: keras.Model) -> keras.layers.TextVectorization:
    """The model's ``TextVectorization`` layer.

    Args:
        model: A from-scratch classifier (`build_transformer_classifier`).

    Returns:
        The first ``TextVectorization`` layer among the model's layers.

    Raises:
        ValueError: The model has no ``TextVectorization`` layer (a BERT classifier).

    Examples:
        >>> model = build_transformer_classifier(4, maxlen=16, embed_dim=8)
        >>> adapt_vectorizer(model, ["stocks rise", "stocks fall"])
        >>> vectorizer = text_vectorizer(model)
        >>> vectorizer.name, [str(word) for word in vectorizer.get_vocabulary()]
        ('vectorizer', ['', '[UNK]', 'stocks', 'rise', 'fall'])
    """
    for layer in model.layers:
        if isinstance(layer, keras.layers.TextVectorization):
            return layer
    raise ValueError(f"Model {model.name!r} has no TextVectorization layer.")


def token_id_classifier(model: keras.Model) -> keras.Model:
    """The model after its vectorizer, on token ids of any length up to ``maxlen``.

    It shares every layer (and so every weight) with ``model``. Padding (id 0) is
    masked, so trailing padding does not change its output: a batch padded to its
    longest text gives the same probabilities as one padded to ``maxlen``, for less work.

    Args:
        model: A from-scratch classifier (`build_transformer_classifier`).

    Returns:
        A Keras model from int64 token ids ``(batch, tokens)`` to probabilities.

    Raises:
        ValueError: The model has no ``TextVectorization`` layer.

    Examples:
        >>> model = build_transformer_classifier(4, maxlen=16, embed_dim=8)
        >>> on_ids = token_id_classifier(model)
        >>> on_ids(tf.constant([[2, 3, 0]], tf.int64)).shape  # id 0 pads, 1 is unknown
        TensorShape([1, 4])
    """
    vectorizer = text_vectorizer(model)
    x = ids = keras.Input(shape=(None,), dtype="int64", name="token_ids")
    for layer in model.layers[model.layers.index(vectorizer) + 1 :]:
        x = layer(x)
    return keras.Model(ids, x, name=f"{model.name}_on_token_ids")


def drop_padding_columns(ids: tf.Tensor) -> tf.Tensor:
    """Cut a batch of padded token ids after its longest row (keeping at least one column)."""
    lengths = tf.reduce_sum(tf.cast(tf.not_equal(ids, 0), tf.int32), axis=-1)
    return ids[:, : tf.maximum(tf.reduce_max(lengths), 1)]


def padding_free_classifier(model: keras.Model) -> Callable[[tf.Tensor], tf.Tensor]:
    """A function from a batch of strings to the model's probabilities that skips padding.

    The vectorizer pads every text to ``maxlen``; this cuts the padding the whole batch
    shares before any layer computes on it. Used for evaluation and export.

    Args:
        model: A from-scratch classifier (`build_transformer_classifier`).

    Returns:
        ``classify(texts, training=False)``: a 1-D string tensor in, ``(texts,
        classes)`` probabilities out, the same as ``model(texts)``.

    Raises:
        ValueError: The model has no ``TextVectorization`` layer.

    Examples:
        >>> model = build_transformer_classifier(4, maxlen=64, embed_dim=8)
        >>> adapt_vectorizer(model, ["stocks rise", "team wins the cup"])
        >>> classify = padding_free_classifier(model)
        >>> texts = tf.constant(["stocks rise", "the cup"])
        >>> np.allclose(classify(texts), model(texts), atol=1e-6)
        True
    """
    vectorizer, on_ids = text_vectorizer(model), token_id_classifier(model)

    def classify(texts: tf.Tensor, training: bool = False) -> tf.Tensor:
        return on_ids(drop_padding_columns(vectorizer(texts)), training=training)

    return classify


def adapt_vectorizer(
    model: keras.Model, texts: Iterable[str] | tf.data.Dataset, batch_size: int = 512
) -> None:
    """Learn the model's vocabulary from training texts (never from test texts).

    The vectorizer keeps the most frequent words, up to ``vocab_size`` ids with padding
    (id 0) and the unknown word (id 1), lower-cased and stripped of punctuation.

    Args:
        model: A from-scratch classifier (`build_transformer_classifier`).
        texts: The training texts, as strings or a ``tf.data.Dataset`` of scalar strings.
        batch_size: Texts the vectorizer reads at a time.

    Raises:
        ValueError: The model has no ``TextVectorization`` layer.

    Examples:
        >>> model = build_transformer_classifier(4, maxlen=16, embed_dim=8)
        >>> adapt_vectorizer(model, ["Stocks rise.", "stocks fall"])
        >>> text_vectorizer(model)(tf.constant(["stocks rise"]))[0, :3].numpy()
        array([2, 3, 0])
    """
    if not isinstance(texts, tf.data.Dataset):
        texts = tf.data.Dataset.from_tensor_slices(np.asarray(list(texts), dtype=object))
    text_vectorizer(model).adapt(texts.batch(batch_size))


def attention_map(model: keras.Model, text: str) -> AttentionMap:
    """The self-attention of every `TransformerBlock` for one text, padding removed.

    Returns an `AttentionMap` whose layers are the blocks, in order.
    """
    if not any(isinstance(layer, TransformerBlock) for layer in model.layers):
        raise KerasformerError(
            f"model {model.name!r} has no kerasformer TransformerBlock layers to show "
            "attention for; use a model trained with --model transformer."
        )
    vectorizer = text_vectorizer(model)
    ids = vectorizer(tf.constant([text]))
    length = int(tf.math.count_nonzero(ids))
    if length == 0:
        raise KerasformerError(
            f"{text!r} has no words after lower-casing and removing punctuation; "
            "give a text with words in it."
        )
    layers = model.layers[model.layers.index(vectorizer) + 1 :]
    last_block = max(i for i, layer in enumerate(layers) if isinstance(layer, TransformerBlock))
    weights = blocks_self_attention(layers[: last_block + 1], ids[:, :length])
    vocabulary = vectorizer.get_vocabulary()
    tokens = tuple(str(vocabulary[i]) for i in ids[0, :length].numpy())
    return AttentionMap("self-attention", tokens, tokens, weights)


def attention_weights(
    model: keras.Model, text: str, block: int = 0
) -> tuple[list[str], np.ndarray]:
    """The attention weights of one `TransformerBlock` for one text, for visualisation.

    Args:
        model: A from-scratch classifier (`build_transformer_classifier`).
        text: The text, lower-cased and stripped of punctuation as the model reads it.
        block: Which `TransformerBlock`, from 0.

    Returns:
        The text's tokens (padding removed) and an array of shape
        ``(num_heads, tokens, tokens)`` whose rows sum to 1.

    Raises:
        KerasformerError: The model has no `TransformerBlock`, no block ``block``, or
            ``text`` has no words.

    Examples:
        >>> model = build_transformer_classifier(4, maxlen=16, embed_dim=8, num_heads=2)
        >>> adapt_vectorizer(model, ["stocks rise", "team wins the cup"])
        >>> tokens, weights = attention_weights(model, "Stocks rise!")
        >>> tokens, weights.shape
        (['stocks', 'rise'], (2, 2, 2))
    """
    found = attention_map(model, text)
    if not 0 <= block < found.layers:
        raise KerasformerError(
            f"model {model.name!r} has {found.layers} TransformerBlock layer(s), so there "
            f"is no block {block}; choose a block from 0 to {found.layers - 1}."
        )
    return list(found.query_tokens), found.weights[block]
