"""Words and known-word counts as an export's word tokenizer reads them, in TensorFlow's
string ops and a vocabulary file: what the signature readers (`ExportedTranslator`,
`ExportedGenerator`) check before decoding, without the Keras tokenizer."""

from __future__ import annotations

from kerasformer.backend import tf


def split_words(texts) -> list[list[str]]:
    """Each text's words as TensorFlow's whitespace split gives them (TextVectorization's
    ``split="whitespace"``)."""
    return [[word.decode("utf-8") for word in row] for row in tf.strings.split(texts).to_list()]


def known_counts(words: list[list[str]], vocabulary: frozenset[str]) -> list[int]:
    """How many of each text's words are in ``vocabulary``: the words a word tokenizer
    gives an id above the unknown one."""
    return [sum(word in vocabulary for word in row) for row in words]
