"""A trained translation model with its tokenizers: strings in, strings out.

`Translator` turns sentences into word or subword ids, decodes with the model (greedy or beam
search, the decoder's key/value cache on by default) and turns ids back into
sentences, all in TensorFlow ops, so the same functions run eagerly, in ``tf.data`` and
inside an exported SavedModel. It also gives the attention alignment of a sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.models.attention_maps import AttentionMap
from kerasformer.models.generation import decode, ids_before_end
from kerasformer.models.length_limits import sentence_problem
from kerasformer.models.rnn_translator import MODEL_NAME as RNN_NAME
from kerasformer.models.subword_tokenizer import SubwordTokenizer
from kerasformer.models.transformer_translator import SOURCE_INPUT, TARGET_INPUT
from kerasformer.models.word_tokenizer import (
    END_TOKEN,
    START_TOKEN,
    WordTokenizer,
    known_word_counts,
)
from kerasformer.registry import TASKS, resolve

TARGET_RESERVED = (START_TOKEN, END_TOKEN)
GREEDY = 1  # a beam of one: greedy decoding, the default
START_ID, END_ID = 2, 3  # after padding (0) and unknown (1)


def family_of(model) -> str:
    """The registry name of a bare translation model (a ``model.keras`` from an export
    written before exports named it, or the user's own): the one place that tells them
    apart, by the name each builder gives its model."""
    return "rnn" if model.name == RNN_NAME else "transformer"


def decoding_for(model, cached: bool = True, family: str | None = None):
    """The decoding steps of a translation model of ``family`` (a registry model name)."""
    entry = TASKS["translation"].model(family or family_of(model))
    return resolve(entry.decoding)(model, cached=cached)


@dataclass(frozen=True)
class Alignment:
    """Which source words each generated word attended to.

    `Translator.alignment` returns it, and `kerasformer.plots.plot_alignment` draws it.

    Args:
        source_tokens: The source sentence's tokens as the model read them, unknown
            ones included.
        target_tokens: The generated tokens, then ``[end]``.
        weights: ``(layers, heads, target, source)`` cross-attention weights, each row
            summing to 1 over the source tokens; the RNN has one layer and one head.

    Examples:
        >>> from kerasformer.loading import load_translator
        >>> translator = load_translator("saved_models/spa_eng-transformer")
        >>> alignment = translator.alignment("I see the sea.")
        >>> alignment.source_tokens, alignment.target_tokens[-1]
        (['i', 'see', 'the', 'sea', '.'], '[end]')
        >>> alignment.weights.shape[2:] == (len(alignment.target_tokens), 5)
        True
    """

    source_tokens: list[str]
    target_tokens: list[str]  # the generated words, then [end]
    weights: np.ndarray  # (layers, heads, target, source); the RNN has one of each


Tokenizer = WordTokenizer | SubwordTokenizer


def word_tokenizer_for(vocabulary: Sequence[str] | Tokenizer, name: str) -> Tokenizer:
    """A tokenizer as given, or a vocabulary (a list of words) as a `WordTokenizer`."""
    if isinstance(vocabulary, WordTokenizer | SubwordTokenizer):
        return vocabulary
    return WordTokenizer(list(vocabulary), name=name)


class Translator:
    """A translation model and its source and target tokenizers.

    Each tokenizer is a `WordTokenizer` (lower-cased words; given as its vocabulary, a
    list of words) or a `SubwordTokenizer` (SentencePiece). Ids 0 and 1 pad and stand
    for unknown tokens, and the target's ids 2 and 3 start and end a sentence, so a word
    target vocabulary starts with ``[start]`` and ``[end]``.

    Args:
        model: A translation model (``{"source_ids", "target_ids"}`` to target logits)
            whose vocabulary sizes are the tokenizers' (``len(words) + 2``).
        source_tokenizer: The source language's tokenizer, or its word vocabulary.
        target_tokenizer: The target language's tokenizer, or its word vocabulary
            (``[start]``, ``[end]``, then the words).
        maxlen: Most tokens of a source sentence; a translation gets ``maxlen - 1``
            at most.
        cached: Whether decoding keeps the decoder's keys and values between steps
            (faster, same translations); False recomputes every step from the start.
        family: The model's registry name (``"transformer"``, ``"rnn"``); None (the
            default) tells it from the model's name.

    Raises:
        ValueError: A target vocabulary does not start with ``[start]`` and ``[end]``.
        KerasformerError: One tokenizer reads words and the other subwords.

    Examples:
        >>> from kerasformer.models.transformer_translator import build_transformer_translator
        >>> source, target = ["i", "see", "the", "sea", "."], ["[start]", "[end]", "veo", "mar"]
        >>> model = build_transformer_translator(7, 6, maxlen=16, embed_dim=8, num_heads=2)
        >>> translator = Translator(model, source, target, maxlen=16)
        >>> translator.source_lengths(["I see the sea."]), translator.known_words(["I see a ship."])
        ([5], [3])
        >>> translator.translate(["I see the sea."])  # untrained: words of the target's
        ['...']
    """

    def __init__(
        self,
        model,
        source_tokenizer: Sequence[str] | Tokenizer,
        target_tokenizer: Sequence[str] | Tokenizer,
        maxlen: int,
        cached: bool = True,
        family: str | None = None,
    ):
        if isinstance(target_tokenizer, Sequence) and (
            tuple(target_tokenizer[:2]) != TARGET_RESERVED
        ):
            raise ValueError(f"the target vocabulary must start with {TARGET_RESERVED}.")
        self.model = model
        self.maxlen = maxlen
        self.source_tokenizer = word_tokenizer_for(source_tokenizer, "source_words")
        self.target_tokenizer = word_tokenizer_for(target_tokenizer, "target_words")
        if self.source_tokenizer.kind != self.target_tokenizer.kind:
            raise KerasformerError(
                f"a translator's two tokenizers must be of one kind, got "
                f"{self.source_tokenizer.kind} and {self.target_tokenizer.kind}; give two "
                "word tokenizers or two subword tokenizers."
            )
        self.family = family or family_of(model)
        self.decoding = decoding_for(model, cached, self.family)

    @property
    def source_vocabulary(self) -> list[str]:
        return self.source_tokenizer.vocabulary

    @property
    def target_vocabulary(self) -> list[str]:
        return self.target_tokenizer.vocabulary

    # -- ids -------------------------------------------------------------------------

    def source_ids(self, texts: tf.Tensor) -> tf.RaggedTensor:
        """Each source sentence's token ids, unpadded."""
        return self.source_tokenizer.ids(texts)

    def target_ids(self, texts: tf.Tensor) -> tf.RaggedTensor:
        """Each target sentence's token ids between ``[start]`` and ``[end]``."""
        ids = self.target_tokenizer.ids(texts)
        rows = ids.nrows()
        start = tf.fill([rows, 1], START_ID)
        end = tf.fill([rows, 1], END_ID)
        return tf.concat([start, ids, end], axis=1)

    def known_words(self, texts: Sequence[str]) -> list[int]:
        """How many tokens of each sentence are in the source vocabulary."""
        if not len(texts):
            return []
        return known_word_counts(self.source_ids(tf.constant(list(texts), dtype=tf.string)))

    def source_lengths(self, texts: Sequence[str]) -> list[int]:
        """How many tokens (ids) each source sentence has for this model."""
        return token_counts(self.source_tokenizer, texts)

    def target_lengths(self, texts: Sequence[str]) -> list[int]:
        """How many tokens (ids) each target sentence has, without ``[start]`` and ``[end]``."""
        return token_counts(self.target_tokenizer, texts)

    def translate_ids(self, source_ids: tf.Tensor, beam_width: int = GREEDY) -> tf.Tensor:
        """Generated target ids ``(batch, maxlen - 1)`` for padded ``source_ids``."""
        max_length = self.maxlen - 1
        cache = self.decoding.initial_cache(source_ids, max_length)
        ids, _ = decode(
            self._step,
            tf.fill([tf.shape(source_ids)[0]], START_ID),
            cache,
            vocab_size=self.target_tokenizer.size,
            max_length=max_length,
            end_id=END_ID,
            beam_width=beam_width,
        )
        return ids

    def _step(self, ids, index, cache):
        logits, cache = self.decoding.step(ids, index, cache)
        # Padding and [start] are never a next word; [end] stops instead of padding.
        never = tf.one_hot([0, START_ID], tf.shape(logits)[-1], on_value=-1e9)
        return logits + tf.reduce_sum(never, axis=0), cache

    # -- strings ---------------------------------------------------------------------

    def translate_tensor(self, texts: tf.Tensor, beam_width: int = GREEDY) -> tf.Tensor:
        """Translations of a batch of strings; an empty source gives an empty string.

        A sentence longer than ``maxlen`` tokens fails with an InvalidArgumentError that
        says so (graph code cannot raise kerasformer's errors).
        """
        ids = self.source_ids(texts)
        lengths = ids.row_lengths()
        check = tf.debugging.assert_less_equal(
            tf.reduce_max(tf.concat([lengths, [0]], 0)),
            tf.cast(self.maxlen, lengths.dtype),
            message=(
                f"a sentence is longer than the model limit of {self.maxlen} "
                f"{self.source_tokenizer.unit}; split it."
            ),
        )
        with tf.control_dependencies([check]):
            padded = ids.to_tensor()
        generated = ids_before_end(self.translate_ids(padded, beam_width), END_ID)
        sentences = self.target_tokenizer.texts(generated)
        return tf.where(tf.equal(lengths, 0), tf.constant(""), sentences)

    def translate(
        self, texts: Sequence[str], beam_width: int = GREEDY, batch_size: int = 256
    ) -> list[str]:
        """Translate sentences (greedy, or beam search with ``beam_width`` > 1)."""
        self.require_translatable(texts)
        function = self._translate_function(beam_width)
        # Batches of similar length: a batch decodes until its longest output ends.
        order = np.argsort(self.source_lengths(texts), kind="stable")
        outputs = [""] * len(texts)
        for start in range(0, len(texts), batch_size):
            chosen = order[start : start + batch_size]
            batch = tf.constant([texts[i] for i in chosen], dtype=tf.string)
            for index, text in zip(chosen, function(batch).numpy(), strict=True):
                outputs[index] = text.decode("utf-8")
        return outputs

    def _translate_function(self, beam_width: int):
        functions = self.__dict__.setdefault("_functions", {})
        if beam_width not in functions:
            # Any number of sentences: traced once, not again for the second batch size.
            functions[beam_width] = tf.function(
                lambda texts: self.translate_tensor(texts, beam_width),
                input_signature=[tf.TensorSpec([None], tf.string)],
            )
        return functions[beam_width]

    def require_translatable(self, texts: Sequence[str]) -> None:
        """One-line errors for what cannot be translated: no words, too many tokens."""
        if isinstance(texts, str):
            raise KerasformerError("pass a list of sentences, not one string.")
        for index, length in enumerate(self.source_lengths(texts)):
            problem = self.length_problem(length)
            if problem is not None:
                raise KerasformerError(f"sentence {index + 1} {problem}.")

    def problem(self, text: str) -> str | None:
        """Why ``text`` cannot be translated (no words, too many), or None if it can."""
        return self.length_problem(self.source_lengths([text])[0])

    def length_problem(self, length: int) -> str | None:
        return sentence_problem(length, self.maxlen, self.source_tokenizer.unit)

    # -- attention -------------------------------------------------------------------

    def alignment(self, text: str, beam_width: int = GREEDY) -> Alignment:
        """Translate ``text`` and return the attention of each generated word."""
        self.require_translatable([text])
        source = self.source_ids(tf.constant([text])).to_tensor()
        generated = ids_before_end(self.translate_ids(source, beam_width), END_ID)
        target_input = tf.concat([[[START_ID]], generated.to_tensor()], axis=1)
        weights = self.decoding.cross_attention_stack(source, target_input)
        return Alignment(
            source_tokens=self.source_tokenizer.read_pieces(text),
            target_tokens=[*self.target_tokenizer.pieces(generated[0].numpy()), END_TOKEN],
            weights=weights.numpy()[:, 0],
        )

    def attention_maps(self, text: str) -> list[AttentionMap]:
        """Translate ``text`` (greedily) and return every attention the model paid.

        The transformer gives its encoder self-attention (source words), decoder
        self-attention and cross-attention (decoder rows: ``[start]`` and the words
        generated, each the token that position reads); the RNN its Bahdanau attention
        as one layer with one head.
        """
        self.require_translatable([text])
        source = self.source_ids(tf.constant([text])).to_tensor()
        generated = ids_before_end(self.translate_ids(source), END_ID)
        target_input = tf.concat([[[START_ID]], generated.to_tensor()], axis=1)
        source_tokens = tuple(self.source_tokenizer.read_pieces(text))
        target_tokens = tuple(self.target_tokenizer.pieces(target_input[0].numpy()))
        found = self.decoding.named_attention(source, target_input)
        keys = {"encoder self-attention": (source_tokens, source_tokens),
                "decoder self-attention": (target_tokens, target_tokens),
                "cross-attention": (target_tokens, source_tokens)}  # fmt: skip
        return [AttentionMap(name, *keys[name], found[name]) for name in keys if name in found]


def model_inputs(source_ids, target_ids) -> dict:
    return {SOURCE_INPUT: source_ids, TARGET_INPUT: target_ids}


def token_counts(tokenizer: Tokenizer, texts: Sequence[str]) -> list[int]:
    """How many ids ``tokenizer`` gives each of ``texts``."""
    if not len(texts):
        return []
    return tokenizer.ids(tf.constant(list(texts), dtype=tf.string)).row_lengths().numpy().tolist()
