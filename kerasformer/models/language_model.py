"""A decoder-only transformer language model (GPT-style, seed 003), and text generation.

Token ids go through ``TokenAndPositionEmbedding`` and causal
``TransformerDecoderBlock`` s without cross-attention; the logits at each position score
the next token. `TextGenerator` continues a prompt one token at a time with the
decoders' key/value cache, sampling with temperature, top-k and top-p (or greedily).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.models import defaults
from kerasformer.models.attention_maps import AttentionMap
from kerasformer.models.decoder_stack import DecoderStack, decoder_stack
from kerasformer.models.generation import Sampling, decode
from kerasformer.models.length_limits import prompt_problem, require_max_tokens
from kerasformer.models.word_tokenizer import UNKNOWN_ID, known_word_counts, word_vectorizer

MODEL_NAME = "transformer_language_model"
EMBEDDING_NAME = "token_embedding"
DEFAULTS = defaults.LANGUAGE_MODEL
DEFAULT_MAX_TOKENS = defaults.DEFAULT_MAX_TOKENS


def build_transformer_language_model(
    vocab_size: int,
    *,
    maxlen: int = DEFAULTS["maxlen"],
    embed_dim: int = DEFAULTS["embed_dim"],
    num_heads: int = DEFAULTS["num_heads"],
    ff_dim: int = DEFAULTS["ff_dim"],
    num_layers: int = DEFAULTS["num_layers"],
    dropout: float = DEFAULTS["dropout"],
    position: str = DEFAULTS["position"],
    norm_first: bool = DEFAULTS["norm_first"],
    tie_embeddings: bool = DEFAULTS["tie_embeddings"],
    adaptive_cutoffs: Sequence[int] | None = DEFAULTS["adaptive_cutoffs"],
):
    """Token ids ``(batch, length <= maxlen)`` to next-token logits ``(batch, length, vocab)``.

    ``tie_embeddings`` makes the output layer the transposed input embedding (Press &
    Wolf 2017), which holds most of a small model's weights. ``adaptive_cutoffs`` (with
    tied embeddings) makes it an adaptive softmax over frequency-ranked ids, e.g.
    ``[2000, 10000]``; the model then gives log-probabilities as its logits, and
    `next_token_loss_model` trains it without forming them.

    Example:

    >>> model = build_transformer_language_model(500, maxlen=16, embed_dim=32)
    >>> tuple(model([[4, 9, 2]]).shape)
    (1, 3, 500)
    """
    if not isinstance(num_layers, int) or num_layers < 1:
        raise KerasformerError(f"num_layers must be a whole number >= 1, got {num_layers!r}.")
    ids = keras.Input((None,), dtype="int32", name="token_ids")
    logits = decoder_stack(
        ids, embedding_name=EMBEDDING_NAME, vocab_size=vocab_size, maxlen=maxlen,
        embed_dim=embed_dim, num_heads=num_heads, ff_dim=ff_dim, num_layers=num_layers,
        dropout=dropout, position=position, norm_first=norm_first,
        tie_embeddings=tie_embeddings, adaptive_cutoffs=adaptive_cutoffs,
    )  # fmt: skip
    return keras.Model(ids, logits, name=MODEL_NAME)


def next_token_loss_model(model) -> keras.Model:
    """``[token ids, next ids]`` in, each position's ``-log p(next id)`` out, on ``model``'s
    weights (tied embeddings).

    The model to fit when the output is an adaptive softmax: its loss scores only each
    target's cluster, where ``model`` forms every word's log-probability.
    """
    stack = DecoderStack.of(model, EMBEDDING_NAME)
    ids = keras.Input((None,), dtype="int32", name="token_ids")
    targets = keras.Input((None,), dtype="int32", name="next_ids")
    losses = stack.embedding(stack.hidden(ids), reverse=True, targets=targets)
    return keras.Model([ids, targets], losses, name=MODEL_NAME + "_loss")


class TextGenerator:
    """A language model and its vocabulary: a prompt in, its continuation out.

    The vocabulary holds every token but padding and unknown (ids 0 and 1); text is
    split on whitespace as it comes (WikiText is tokenised already), and generated
    tokens are joined with spaces.

    Args:
        model: A language model from `build_transformer_language_model`, whose
            vocabulary size is ``len(vocabulary) + 2``.
        vocabulary: The tokens of ids 2, 3 and on, in id order.
        end_token: The token that ends a line of text: generation stops there, and a
            prompt is read after it, as a new line. It must be in ``vocabulary``.

    Raises:
        ValueError: ``end_token`` is not in ``vocabulary``.

    Examples:
        >>> vocabulary = ["<eos>", "the", "cat", "sat"]
        >>> model = build_transformer_language_model(6, maxlen=16, embed_dim=8, num_heads=2)
        >>> generator = TextGenerator(model, vocabulary, end_token="<eos>")
        >>> generator.known_words(["the cat", "a dog"])
        [2, 0]
        >>> generator.generate(["the cat"], max_tokens=4, sampling=Sampling(top_k=2))
        ['...']
    """

    def __init__(self, model, vocabulary: Sequence[str], end_token: str = "<eos>"):
        if end_token not in vocabulary:
            raise ValueError(f"the end token {end_token!r} is not in the vocabulary.")
        self.model = model
        self.vectorizer = word_vectorizer(
            vocabulary, lowercase_and_split_punctuation=False, name="words"
        )
        self.table = tf.constant(["", "[UNK]", *vocabulary])
        self.end_token = end_token
        self.end_id = 2 + list(vocabulary).index(end_token)
        self.decoder = DecoderStack.of(model, EMBEDDING_NAME)

    @property
    def vocabulary(self) -> list[str]:
        return self.vectorizer.get_vocabulary()[2:]

    @property
    def maxlen(self) -> int:
        return self.decoder.maxlen

    def token_ids(self, texts: tf.Tensor) -> tf.RaggedTensor:
        return tf.cast(self.vectorizer(texts), tf.int32)

    def generate_tensor(self, prompts: tf.Tensor, max_tokens: int, sampling: Sampling):
        """Continuations of a batch of prompts, as strings (prompts not repeated).

        The prompt and its continuation must fit the context window: a prompt may have
        at most ``maxlen - max_tokens - 1`` tokens (an InvalidArgumentError says so).
        """
        prompt_ids = self.token_ids(prompts)
        lengths = prompt_ids.row_lengths()
        limit = self.maxlen - max_tokens - 1  # the prompt follows a start-of-line token
        check = tf.debugging.assert_less_equal(
            tf.reduce_max(tf.concat([lengths, [0]], 0)),
            tf.cast(limit, lengths.dtype),
            message=f"a prompt is longer than {limit} tokens (the model window of "
            f"{self.maxlen}, less {max_tokens} to generate and one to start); shorten it.",
        )
        with tf.control_dependencies([check]):
            generated = self.generate_ids(prompt_ids, max_tokens, sampling)
        words = tf.gather(self.table, generated)
        return tf.strings.reduce_join(words, axis=-1, separator=" ")

    def generate_ids(self, prompt_ids: tf.RaggedTensor, max_tokens: int, sampling: Sampling):
        """Generated ids, ragged, each row up to its end token (excluded)."""

        # One prompt at a time keeps each row's positions its own (prompts differ in
        # length, and the cache has one write position for the whole batch).
        def one(row):
            return self._generate_one(row, max_tokens, sampling)

        rows = tf.map_fn(one, prompt_ids, fn_output_signature=tf.TensorSpec([max_tokens], tf.int32))
        stop = tf.logical_or(tf.equal(rows, self.end_id), tf.equal(rows, 0))
        keep = tf.equal(tf.cumsum(tf.cast(stop, tf.int32), axis=1), 0)
        return tf.ragged.boolean_mask(rows, keep)

    def _generate_one(self, prompt, max_tokens, sampling):
        prompt = tf.concat([[self.end_id], prompt], axis=0)[None]  # a new line starts text
        length = tf.shape(prompt)[1]
        cache = self.decoder.empty_caches(1, self.maxlen)
        # Fill the cache with every prompt token but the last, which starts the loop.
        x = self.decoder.embedding(prompt[:, :-1])
        for block in self.decoder.blocks:
            x, cache[block.name] = block(x, cache=cache[block.name], cache_index=0, training=False)
        offset = length - 1

        def step(ids, index, state):
            logits, state = self.decoder.step(ids, index + offset, state)
            never = tf.one_hot([0, UNKNOWN_ID], tf.shape(logits)[-1], on_value=-1e9)
            return logits + tf.reduce_sum(never, axis=0), state

        ids, _ = decode(
            step, prompt[:, -1], cache, vocab_size=int(self.table.shape[0]),
            max_length=max_tokens, end_id=self.end_id, sampling=sampling,
        )  # fmt: skip
        return ids[0]

    def known_words(self, prompts: Sequence[str]) -> list[int]:
        """How many words of each prompt are in the vocabulary."""
        if not len(prompts):
            return []
        return known_word_counts(self.token_ids(tf.constant(list(prompts), dtype=tf.string)))

    def attention_maps(self, prompt: str) -> list[AttentionMap]:
        """The causal self-attention of every block over ``prompt``.

        The model reads the prompt after a start-of-line token (the end token), as it
        does when generating, so that token is the first row and column.
        """
        problem = self.problem(prompt, 0)
        if problem is not None:
            raise KerasformerError(f"the prompt {problem}.")
        ids = tf.concat([[self.end_id], self.token_ids(tf.constant([prompt]))[0]], axis=0)
        _, own, _ = self.decoder.full_with_attention(ids[None])
        weights = np.stack([np.asarray(scores[0], np.float64) for scores in own])
        tokens = tuple(word.decode("utf-8") for word in tf.gather(self.table, ids).numpy())
        return [AttentionMap("self-attention", tokens, tokens, weights)]

    def require_max_tokens(self, max_tokens: int) -> None:
        require_max_tokens(max_tokens, self.maxlen)

    def problem(self, prompt: str, max_tokens: int) -> str | None:
        """Why ``prompt`` cannot be continued by ``max_tokens`` tokens, or None if it can."""
        length = int(self.token_ids(tf.constant([prompt])).row_lengths()[0])
        return prompt_problem(length, max_tokens, self.maxlen)

    def generate(
        self,
        prompts: Sequence[str],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        sampling: Sampling | None = None,
    ) -> list[str]:
        """Continue each prompt by up to ``max_tokens`` tokens (greedy if no sampling)."""
        if isinstance(prompts, str):
            raise KerasformerError("pass a list of prompts, not one string.")
        self.require_max_tokens(max_tokens)
        sampling = sampling or Sampling(temperature=0.0)
        for index, prompt in enumerate(prompts):
            problem = self.problem(prompt, max_tokens)
            if problem is not None:
                raise KerasformerError(f"prompt {index + 1} {problem}.")
        outputs = self.generate_tensor(tf.constant(list(prompts)), max_tokens, sampling)
        return [text.decode("utf-8") for text in outputs.numpy()]
