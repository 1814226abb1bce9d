"""Sentences to SentencePiece subword ids and back, in TensorFlow ops.

A subword vocabulary covers every word of the language it was trained on, rare ones
spelled in pieces, so translations keep their casing and need no ``[UNK]``. The model is
trained with the `sentencepiece` library and applied with `tensorflow_text`'s
``SentencepieceTokenizer``, so the same ids come out in ``tf.data``, eagerly and inside
an exported SavedModel, and turning ids back into text is exact up to SentencePiece's
normalisation (NFKC, runs of spaces read as one).
"""

from __future__ import annotations

import functools
import hashlib
import io
from collections.abc import Iterable

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError

# The word tokenizer's ids: 0 pads, 1 is unknown, 2 and 3 start and end a target.
RESERVED_IDS = dict(pad_id=0, unk_id=1, bos_id=2, eos_id=3)
SMALLEST_VOCABULARY = 8  # the four reserved ids and a few pieces


def require_subword_vocabulary_size(vocab_size: int) -> None:
    if vocab_size < SMALLEST_VOCABULARY:
        raise KerasformerError(
            f"a subword vocabulary of {vocab_size} ids is too small; use at least "
            f"{SMALLEST_VOCABULARY}."
        )


def train_subwords(texts: Iterable[str], vocab_size: int, seed: int = 0) -> bytes:
    """A SentencePiece unigram model of ``vocab_size`` ids (the four reserved included),
    trained on ``texts``, as the bytes of its ``.model`` file."""
    import sentencepiece

    require_subword_vocabulary_size(vocab_size)
    model = io.BytesIO()
    sentencepiece.set_random_generator_seed(seed)
    try:
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(list(texts)), model_writer=model, vocab_size=vocab_size,
            model_type="unigram", character_coverage=1.0, minloglevel=2,
            hard_vocab_limit=False, **RESERVED_IDS,
        )  # fmt: skip
    except RuntimeError as error:
        if "required_chars" in str(error):  # fewer ids than the texts have characters
            raise KerasformerError(
                f"a subword vocabulary of {vocab_size} ids cannot hold every character of "
                "the training texts; use a larger --vocab-size."
            ) from None
        raise KerasformerError(f"cannot train a subword vocabulary: {error}") from error
    return model.getvalue()


class SubwordTokenizer(tf.Module):
    """Sentences to SentencePiece ids and back, with the word tokenizer's reserved ids.

    Args:
        model: the bytes of a SentencePiece ``.model`` file whose ids 0 to 3 are
            padding, unknown, start and end (as `train_subwords` makes them).

    Example:

    >>> tokenizer = SubwordTokenizer(train_subwords(sentences, vocab_size=8000))
    >>> tokenizer.texts(tokenizer.ids(tf.constant(["¿Dónde está?"]))).numpy()
    array([b'\\xc2\\xbfD\\xc3\\xb3nde est\\xc3\\xa1?'], dtype=object)
    """

    kind = "sentencepiece"
    unit = "subword tokens"

    def __init__(self, model: bytes, name: str | None = None):
        import tensorflow_text

        super().__init__(name=name)
        self.model = bytes(model)
        # The model's resource is shared by the name of the op that creates it: under one
        # name, two tokenizers reloaded from a SavedModel would both read one model (the
        # target's ids detokenised by the source's). Named by the model's own hash, two
        # tokenizers share a resource only when they share a model.
        digest = hashlib.sha256(self.model).hexdigest()[:16]
        self.tokenizer = tensorflow_text.SentencepieceTokenizer(
            model=self.model, out_type=tf.int32, name=f"sentencepiece_{digest}"
        )
        if self._pieces[:4] != ("<pad>", "<unk>", "<s>", "</s>"):
            raise KerasformerError(
                "the SentencePiece model must have ids 0-3 as <pad>, <unk>, <s>, </s> "
                f"(train it with train_subwords); its first ids are {list(self._pieces[:4])}."
            )

    @functools.cached_property  # kept out of the tf.Module's tracked attributes
    def _pieces(self) -> tuple[str, ...]:
        everything = self.tokenizer.id_to_string(tf.range(self.tokenizer.vocab_size()))
        return tuple(piece.decode("utf-8") for piece in everything.numpy())

    @property
    def vocabulary(self) -> list[str]:
        """Every id's piece after padding and unknown, in id order."""
        return list(self._pieces[2:])

    @property
    def size(self) -> int:
        """How many ids, padding and unknown included."""
        return len(self._pieces)

    def ids(self, texts: tf.Tensor) -> tf.RaggedTensor:
        """Each text's subword ids, unpadded."""
        return self.tokenizer.tokenize(texts)

    def texts(self, ids: tf.RaggedTensor) -> tf.Tensor:
        """Each row of ids as text, its pieces joined and its spaces restored."""
        return self.tokenizer.detokenize(ids)

    def pieces(self, ids) -> list[str]:
        """The piece of each id of one sentence (``▁`` marks the start of a word)."""
        return [self._pieces[int(i)] for i in ids]

    def read_pieces(self, text: str) -> list[str]:
        """The pieces ``text`` is read as."""
        return self.pieces(self.ids(tf.constant([text]))[0].numpy())
