"""Tiny untrained translators and a language model, scaled so that decoding them is worth
checking: each sequence they make is computed again in NumPy from their logits."""

from __future__ import annotations

import numpy as np

from kerasformer.backend import keras
from kerasformer.models.language_model import TextGenerator, build_transformer_language_model
from kerasformer.models.rnn_translator import build_rnn_translator
from kerasformer.models.transformer_translator import build_transformer_translator

SOURCE_WORDS = ["tom", "sleeps", "eats", "."]
# A target vocabulary of 6 ids: 0 padding, 1 unknown, 2 [start], 3 [end], 4 sí, 5 no.
TARGET_WORDS = ["[start]", "[end]", "sí", "no"]
START, END = 2, 3
LM_WORDS = ["<eos>", "the", "cat", "sat", "on", "mat", "a", "dog", "."]
LM_MAXLEN = 8


def tiny_translator_model(kind, seed=0):
    """A translator from SOURCE_WORDS to TARGET_WORDS: ``kind`` "rnn", or the transformer's
    ``position`` ("learned", "relative", ...)."""
    keras.utils.set_random_seed(seed)
    source_vocab, target_vocab = len(SOURCE_WORDS) + 2, len(TARGET_WORDS) + 2
    if kind == "rnn":
        model = build_rnn_translator(source_vocab, target_vocab, embed_dim=8, units=16, dropout=0)
    else:
        model = build_transformer_translator(
            source_vocab, target_vocab, maxlen=8, embed_dim=16, num_heads=2, ff_dim=16,
            num_layers=2, dropout=0.0, position=kind,
        )  # fmt: skip
    return with_trained_scales(model, seed)


def with_trained_scales(model, seed, end_id=END):
    """Fresh weights give nearly uniform next-token distributions that hardly depend on
    the words read, under which "[end]" at once is always the best sequence; embeddings and
    T5 tables drawn from N(0, 1), logits 3 times larger and [end] a little less likely make
    sequences that beam search, greedy decoding and the length penalty tell apart."""
    rng = np.random.default_rng(seed)
    for weight in model.weights:
        if "embedding" in weight.name or "relative_position_bias" in weight.name:
            weight.assign(rng.normal(0.0, 1.0, weight.shape).astype("float32"))
    logits = model.get_layer("logits")
    kernel, bias = logits.get_weights()
    bias[end_id] -= 1.0
    logits.set_weights([3 * kernel, bias])
    return model


def tiny_text_generator() -> TextGenerator:
    """A rotary transformer language model over LM_WORDS, its window LM_MAXLEN tokens."""
    keras.utils.set_random_seed(2)
    model = build_transformer_language_model(
        len(LM_WORDS) + 2, maxlen=LM_MAXLEN, embed_dim=16, num_heads=2, ff_dim=16,
        num_layers=2, dropout=0.0, position="rotary",
    )  # fmt: skip
    model = with_trained_scales(model, seed=2, end_id=2 + LM_WORDS.index("<eos>"))
    return TextGenerator(model, LM_WORDS, end_token="<eos>")


def tiny_model() -> keras.Sequential:
    """One Dense layer of 3 inputs and 2 outputs: weights a training callback can set."""
    return keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
