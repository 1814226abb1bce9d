"""Named-entity taggers from scratch: words and their characters in, a tag per word out.

Both models read lower-cased word ids and each word's character ids; the characters go
through a `CharacterCNN` (Ma & Hovy, 2016), so case and shape reach the tagger although
the word vocabulary is lower-cased. ``rnn`` is the classic BiLSTM tagger; ``transformer``
runs kerasformer's `TransformerBlock` s (rotary positions, so no length limit) over the
same features. `SequenceTagger` owns a model with its vocabularies and tag names; what
it does with the probabilities (decoding, entities, raw text) is `EntityTagger`'s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.models import defaults
from kerasformer.models.block_stack import stack_blocks
from kerasformer.models.word_tagger import (  # noqa: F401  (their old home)
    MAX_WORD_CHARACTERS,
    PADDING_ID,
    UNKNOWN_ID,
    WordTagger,
)
from kerasformer.models.word_windows import read_in_windows
from kerasformer.tf_keras.layers import CharacterCNN, TransformerBlock

COMMON = defaults.TAGGER_COMMON
RNN_DEFAULTS = defaults.RNN_TAGGER
TRANSFORMER_DEFAULTS = defaults.TRANSFORMER_TAGGER


def tagger_model(name: str, num_tags: int, word_vocab_size: int, char_vocab_size: int,
                 features: dict, body):  # fmt: skip
    """``{"word_ids", "char_ids"}`` in; each word's embedding beside its character
    features (`CharacterCNN`), masked where padded, through ``body``; tag logits out.

    ``features`` holds ``embed_dim``, ``char_embed_dim``, ``char_filters`` and ``dropout``.
    """
    word_ids = keras.Input((None,), dtype="int32", name="word_ids")
    char_ids = keras.Input((None, None), dtype="int32", name="char_ids")
    words = keras.layers.Embedding(
        word_vocab_size, features["embed_dim"], mask_zero=True, name="word_embedding"
    )(word_ids)
    characters = CharacterCNN(
        char_vocab_size, features["char_embed_dim"], features["char_filters"],
        name="characters",
    )(char_ids)  # fmt: skip
    joined = keras.layers.Concatenate(name="word_features")([words, characters])
    hidden = body(keras.layers.Dropout(features["dropout"])(joined))
    logits = keras.layers.Dense(num_tags, dtype="float32", name="tag_logits")(hidden)
    return keras.Model({"word_ids": word_ids, "char_ids": char_ids}, logits, name=name)


def build_rnn_tagger(
    num_tags: int,
    word_vocab_size: int,
    char_vocab_size: int,
    *,
    embed_dim: int = RNN_DEFAULTS["embed_dim"],
    units: int = RNN_DEFAULTS["units"],
    dropout: float = RNN_DEFAULTS["dropout"],
    char_embed_dim: int = RNN_DEFAULTS["char_embed_dim"],
    char_filters: int = RNN_DEFAULTS["char_filters"],
):
    """A BiLSTM of ``units`` each way over word and character features:
    ``{"word_ids", "char_ids"}`` to tag logits ``(batch, words, num_tags)``.

    Example:

    >>> model = build_rnn_tagger(9, 500, 80, embed_dim=16, units=16)
    >>> ids = {"word_ids": np.array([[4, 9]]), "char_ids": np.array([[[3, 4], [5, 0]]])}
    >>> tuple(model(ids).shape)
    (1, 2, 9)
    """
    features = dict(embed_dim=embed_dim, dropout=dropout, char_embed_dim=char_embed_dim,
                    char_filters=char_filters)  # fmt: skip

    def bilstm(hidden):
        hidden = keras.layers.Bidirectional(
            keras.layers.LSTM(units, return_sequences=True), name="bilstm"
        )(hidden)
        return keras.layers.Dropout(dropout)(hidden)

    return tagger_model("rnn_tagger", num_tags, word_vocab_size, char_vocab_size, features, bilstm)


def build_transformer_tagger(
    num_tags: int,
    word_vocab_size: int,
    char_vocab_size: int,
    *,
    embed_dim: int = TRANSFORMER_DEFAULTS["embed_dim"],
    num_heads: int = TRANSFORMER_DEFAULTS["num_heads"],
    ff_dim: int = TRANSFORMER_DEFAULTS["ff_dim"],
    num_layers: int = TRANSFORMER_DEFAULTS["num_layers"],
    dropout: float = TRANSFORMER_DEFAULTS["dropout"],
    char_embed_dim: int = TRANSFORMER_DEFAULTS["char_embed_dim"],
    char_filters: int = TRANSFORMER_DEFAULTS["char_filters"],
):
    """Pre-LN transformer blocks with rotary positions over word and character features:
    ``{"word_ids", "char_ids"}`` to tag logits ``(batch, words, num_tags)``.

    Example:

    >>> model = build_transformer_tagger(9, 500, 80, embed_dim=16, num_heads=2, ff_dim=32)
    >>> ids = {"word_ids": np.array([[4, 9]]), "char_ids": np.array([[[3, 4], [5, 0]]])}
    >>> tuple(model(ids).shape)
    (1, 2, 9)
    """
    features = dict(embed_dim=embed_dim, dropout=dropout, char_embed_dim=char_embed_dim,
                    char_filters=char_filters)  # fmt: skip

    def blocks(hidden):
        return stack_blocks(
            keras.layers.Dense(embed_dim, name="projection")(hidden),
            lambda index: TransformerBlock(
                embed_dim, num_heads, ff_dim, dropout=dropout, norm_first=True,
                position="rotary", name=f"transformer_block_{index}",
            ),
            num_layers, norm_first=True, norm_name="final_norm",
        )  # fmt: skip

    return tagger_model(
        "transformer_tagger", num_tags, word_vocab_size, char_vocab_size, features, blocks
    )


def word_vocabulary(sentences, vocab_size: int, min_count: int) -> list[str]:
    """The lower-cased words seen at least ``min_count`` times, most frequent first,
    ``vocab_size`` ids in all with padding and unknown. Rarer words train the unknown id,
    which unseen words get."""
    counts = Counter(word.lower() for words in sentences for word in words)
    kept = [word for word, count in counts.most_common() if count >= min_count]
    return kept[: max(vocab_size - 2, 0)]


def character_vocabulary(sentences) -> list[str]:
    counts = Counter(c for words in sentences for word in words for c in word)
    return [character for character, _ in counts.most_common()]


class SequenceTagger(WordTagger):
    """A from-scratch tagging model, its word and character vocabularies and its tag names.

    Args:
        model: Keras model, ``{"word_ids", "char_ids"}`` to tag logits.
        words: Lower-cased word vocabulary (ids from 2; 0 pads, 1 is unknown).
        characters: Character vocabulary (ids from 2).
        tag_names: The tags, in the model's output order.
        decoding: ``"constrained"`` (IOB2 Viterbi) or ``"argmax"``.

    Example:

    >>> tagger.tag(["Angela Merkel visited Paris."])[0]["entities"]
    [{'text': 'Angela Merkel', 'type': 'PER', 'start': 0, 'end': 13, 'score': ...}, ...]
    """

    def __init__(
        self, model, words: Sequence[str], characters: Sequence[str],
        tag_names: Sequence[str], decoding: str = "constrained",
    ):  # fmt: skip
        super().__init__(words, characters, tag_names, decoding)
        self.model = model

    def word_id_model(self):
        return self.model

    def ragged_features(self, sentences) -> dict[str, tf.RaggedTensor]:
        """``word_ids`` ``(sentences, None)`` and ``char_ids`` ``(sentences, None, None)``.

        Built from flat arrays and row lengths: ``tf.ragged.constant`` on nested lists
        takes minutes for CoNLL's 200,000 words.
        """
        words = [word for sentence in sentences for word in sentence]
        word_counts = np.fromiter((len(s) for s in sentences), np.int64, len(sentences))
        characters = self.char_ids(words)
        char_counts = np.fromiter((len(c) for c in characters), np.int64, len(characters))
        flat_characters = np.fromiter(
            (c for chars in characters for c in chars), np.int32, int(char_counts.sum())
        )
        return {
            "word_ids": tf.RaggedTensor.from_row_lengths(
                np.asarray(self.word_ids(words), np.int32), word_counts, validate=False
            ),
            "char_ids": tf.RaggedTensor.from_nested_row_lengths(
                flat_characters, [word_counts, char_counts], validate=False
            ),
        }

    def tag_ids(self, tags) -> tf.RaggedTensor:
        return tag_ids(self.tag_names, tags)

    def probabilities(self, sentences, batch_size: int = 64) -> list[np.ndarray]:
        """Each sentence's ``(words, tags)`` tag probabilities; a sentence of more than
        `WORD_WINDOW` words read window by window, as the SavedModel reads it."""
        out: list[np.ndarray] = []
        for begin in range(0, len(sentences), batch_size):
            chunk = list(sentences[begin : begin + batch_size])
            features = padded_features(self.ragged_features(chunk))
            logits = read_in_windows(lambda window: self.model(window, training=False), features)
            probs = tf.nn.softmax(tf.cast(logits, tf.float32)).numpy()
            out += [probs[i, : len(words)] for i, words in enumerate(chunk)]
        return out

    def serving_reader(self) -> tf.Module:
        return WordFeatureReader(self)


class WordFeatureReader(tf.Module):
    """A `SequenceTagger`'s vocabularies as lookup tables and its model, in TF ops:
    words and their code points in, tag probabilities out (see `EntityTagger`). A text
    of more than `WORD_WINDOW` words is read in overlapping windows (`read_in_windows`)."""

    def __init__(self, tagger: SequenceTagger):
        super().__init__(name="word_feature_reader")
        self.model = tagger.model
        self.words = lookup_table(tagger.words or [""], tf.string)
        self.characters = lookup_table(
            np.array([ord(c) for c in tagger.characters] or [0], np.int64), tf.int64
        )

    def __call__(self, words: tf.RaggedTensor, codes: tf.RaggedTensor) -> tf.Tensor:
        word_ids = tf.ragged.map_flat_values(
            self.words.lookup, tf.strings.lower(words, encoding="utf-8")
        )
        codes = codes.with_values(codes.values[:, :MAX_WORD_CHARACTERS])
        char_ids = tf.ragged.map_flat_values(self.characters.lookup, codes)
        features = {
            "word_ids": tf.cast(word_ids, tf.int32),
            "char_ids": tf.cast(char_ids, tf.int32),
        }
        longest = tf.reduce_max(tf.pad(words.row_lengths(), [[0, 1]]))
        logits = read_in_windows(
            lambda window: self.model(window, training=False), padded_features(features)
        )[:, : tf.cast(longest, tf.int32)]
        return tf.nn.softmax(tf.cast(logits, tf.float32))


def lookup_table(keys, key_dtype) -> tf.lookup.StaticHashTable:
    """Key ``i`` to id ``i + 2`` (0 pads, 1 is unknown); unknown keys to 1."""
    values = tf.range(2, len(keys) + 2, dtype=tf.int64)
    initializer = tf.lookup.KeyValueTensorInitializer(tf.constant(keys, key_dtype), values)
    return tf.lookup.StaticHashTable(initializer, default_value=UNKNOWN_ID)


def tag_ids(tag_names: Sequence[str], tags) -> tf.RaggedTensor:
    """``(sentences, None)`` int32 ids of each sentence's tags."""
    index = {tag: i for i, tag in enumerate(tag_names)}
    counts = np.fromiter((len(row) for row in tags), np.int64, len(tags))
    ids = np.fromiter((index[tag] for row in tags for tag in row), np.int32, int(counts.sum()))
    return tf.RaggedTensor.from_row_lengths(ids, counts, validate=False)


def padded_features(features: dict[str, tf.RaggedTensor]) -> dict[str, tf.Tensor]:
    """The ragged ids padded with 0, at least one word and one character wide: a batch of
    empty texts still runs through the model (as padding)."""

    def padded(ids: tf.RaggedTensor) -> tf.Tensor:
        dense = ids.to_tensor()
        short = [tf.maximum(0, 1 - tf.shape(dense)[axis]) for axis in range(1, ids.shape.rank)]
        return tf.pad(dense, [[0, 0], *[[0, missing] for missing in short]])

    return {name: padded(ids) for name, ids in features.items()}
