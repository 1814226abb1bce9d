"""Word-level tokenisation with Keras ``TextVectorization``, both ways, in TensorFlow ops.

Translation reads sentences as lower-cased words with punctuation split off (as the
Keras English-to-Spanish example does, but keeping ``¿ ¡ . , ? !`` as tokens so the
output is readable). Language models read text that is already tokenised (WikiText).
Word ids: 0 pads, 1 is every unknown word, then the reserved tokens, then the words.
Everything is TensorFlow ops, so the same code runs in ``tf.data`` and in a SavedModel.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError

PADDING_ID = 0
UNKNOWN_ID = 1
START_TOKEN, END_TOKEN = "[start]", "[end]"
PUNCTUATION = r"[.,!?¿¡;:\"()«»]"
# Punctuation that a reader expects attached to the word before / after it.
CLOSING = r"[.,!?;:)»]"
OPENING = r"[¿¡(«]"


def lower_words_and_punctuation(texts: tf.Tensor) -> tf.Tensor:
    """Lower-cased text with every punctuation mark a word of its own."""
    texts = tf.strings.lower(texts, encoding="utf-8")
    texts = tf.strings.regex_replace(texts, f"({PUNCTUATION})", r" \1 ")
    return tf.strings.strip(tf.strings.regex_replace(texts, r"\s+", " "))


def known_word_counts(ids: tf.RaggedTensor) -> list[int]:
    """How many ids of each row are words of the vocabulary (not padding or unknown)."""
    return [int(count) for count in tf.reduce_sum(tf.cast(ids > UNKNOWN_ID, tf.int32), 1).numpy()]


def join_words(words: tf.RaggedTensor) -> tf.Tensor:
    """Words joined by spaces, with punctuation attached where a reader expects it."""
    texts = tf.strings.reduce_join(words, axis=-1, separator=" ")
    texts = tf.strings.regex_replace(texts, f" ({CLOSING})", r"\1")
    return tf.strings.regex_replace(texts, f"({OPENING}) ", r"\1")


def word_vectorizer(
    vocabulary: Sequence[str] | None = None,
    *,
    max_tokens: int | None = None,
    lowercase_and_split_punctuation: bool = True,
    name: str | None = None,
) -> keras.layers.TextVectorization:
    """A ``TextVectorization`` giving each text's word ids, unpadded (ragged)."""
    return keras.layers.TextVectorization(
        max_tokens=max_tokens,
        standardize=lower_words_and_punctuation if lowercase_and_split_punctuation else None,
        split="whitespace",
        ragged=True,
        vocabulary=list(vocabulary) if vocabulary is not None else None,
        name=name,
    )


def adapted_vocabulary(
    texts: Iterable[str],
    max_tokens: int,
    reserved: Sequence[str] = (),
    lowercase_and_split_punctuation: bool = True,
) -> list[str]:
    """The most frequent words of ``texts`` after ``reserved`` tokens, without ids 0 and 1.

    ``max_tokens`` counts every id, padding and unknown included.
    """
    if max_tokens < 3 + len(reserved):
        raise KerasformerError(
            f"a vocabulary of {max_tokens} tokens leaves no room for words; use at least "
            f"{3 + len(reserved)}."
        )
    vectorizer = word_vectorizer(
        max_tokens=max_tokens - len(reserved),
        lowercase_and_split_punctuation=lowercase_and_split_punctuation,
    )
    vectorizer.adapt(tf.data.Dataset.from_tensor_slices(tf.constant(list(texts))).batch(4096))
    words = [word for word in vectorizer.get_vocabulary()[2:] if word not in reserved]
    return [*reserved, *words]


def vocabulary_table(vectorizer: keras.layers.TextVectorization) -> tf.Tensor:
    """Every id's word as a string tensor, padding ``""`` and unknown ``[UNK]`` first."""
    return tf.constant(vectorizer.get_vocabulary(include_special_tokens=True))


def ids_to_words(ids: tf.RaggedTensor | tf.Tensor, table: tf.Tensor) -> tf.RaggedTensor:
    return tf.gather(table, ids)


class WordTokenizer(tf.Module):
    """Sentences to word ids and back: `word_vectorizer` one way, `join_words` the other.

    Ids 0 and 1 are padding and unknown; ``vocabulary`` holds every other id's word, in
    id order (a target vocabulary starts with ``[start]`` and ``[end]``, ids 2 and 3).
    Lower-cases its input, so its output is lower case. A `tf.Module`: a SavedModel that
    holds it holds its lookup table.
    """

    kind = "word"
    unit = "words"

    def __init__(self, vocabulary: Sequence[str], name: str | None = None):
        super().__init__(name=name)
        self.vectorizer = word_vectorizer(vocabulary, name=name)
        self.table = tf.constant(["", "[UNK]", *vocabulary])

    @property
    def vocabulary(self) -> list[str]:
        return self.vectorizer.get_vocabulary()[2:]

    @property
    def size(self) -> int:
        """How many ids, padding and unknown included."""
        return int(self.table.shape[0])

    def ids(self, texts: tf.Tensor) -> tf.RaggedTensor:
        """Each text's word ids, unpadded."""
        return tf.cast(self.vectorizer(texts), tf.int32)

    def texts(self, ids: tf.RaggedTensor) -> tf.Tensor:
        """Each row of ids as a sentence, punctuation attached where a reader expects it."""
        return join_words(tf.gather(self.table, ids))

    def pieces(self, ids) -> list[str]:
        """The word of each id of one sentence."""
        return [word.decode("utf-8") for word in tf.gather(self.table, ids).numpy()]

    def read_pieces(self, text: str) -> list[str]:
        """The words of ``text`` as read, unknown ones included (its ids would show
        them as ``[UNK]``)."""
        return lower_words_and_punctuation(tf.constant([text]))[0].numpy().decode("utf-8").split()
