"""A randomly initialised BERT in HuggingFace's file layout, small enough for CI, and a
word-piece tokeniser written here to check kerasformer's BERT inputs against."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import numpy as np

from tests.helpers.data import COMMON_WORDS, TOPIC_WORDS

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def tiny_bert_vocabulary(extra_words: tuple[str, ...] = ()) -> list[str]:
    """The tiny BERT's ``vocab.txt``: the special tokens, then the synthetic AG News words
    (and ``extra_words``)."""
    words = {w for text in TOPIC_WORDS.values() for w in text.split()} | set(COMMON_WORDS)
    return SPECIAL_TOKENS + sorted(words | set(extra_words))


def write_tiny_bert_checkpoint(
    directory: Path, hidden: int = 16, layers: int = 2, heads: int = 2, inner: int = 32,
    max_positions: int = 64, seed: int = 0, config_overrides: dict | None = None,
    extra_words: tuple[str, ...] = (),
) -> Path:  # fmt: skip
    """A randomly initialised BERT in HuggingFace's file layout, small enough for CI.

    Its vocabulary holds the synthetic AG News words, so models built on it can learn.
    """
    from safetensors.numpy import save_file

    vocab = tiny_bert_vocabulary(extra_words)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n")
    config = {
        "model_type": "bert", "architectures": ["BertModel"], "vocab_size": len(vocab),
        "hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
        "intermediate_size": inner, "max_position_embeddings": max_positions,
        "type_vocab_size": 2, "hidden_act": "gelu", "layer_norm_eps": 1e-12,
        **(config_overrides or {}),
    }  # fmt: skip
    (directory / "config.json").write_text(json.dumps(config))
    (directory / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True}))
    rng = np.random.default_rng(seed)

    def normal(*shape, mean=0.0, std=0.2):
        return (mean + std * rng.standard_normal(shape)).astype(np.float32)

    tensors = {
        "embeddings.word_embeddings.weight": normal(len(vocab), hidden),
        "embeddings.position_embeddings.weight": normal(max_positions, hidden),
        "embeddings.token_type_embeddings.weight": normal(2, hidden),
        "embeddings.LayerNorm.weight": normal(hidden, mean=1.0),
        "embeddings.LayerNorm.bias": normal(hidden),
        "pooler.dense.weight": normal(hidden, hidden),
        "pooler.dense.bias": normal(hidden),
        "embeddings.position_ids": np.arange(max_positions, dtype=np.int64)[None],
    }
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for part in ("attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense"):  # fmt: skip
            tensors[f"{p}{part}.weight"] = normal(hidden, hidden)
            tensors[f"{p}{part}.bias"] = normal(hidden)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[f"{p}{norm}.weight"] = normal(hidden, mean=1.0)
            tensors[f"{p}{norm}.bias"] = normal(hidden)
        tensors[f"{p}intermediate.dense.weight"] = normal(inner, hidden)
        tensors[f"{p}intermediate.dense.bias"] = normal(inner)
        tensors[f"{p}output.dense.weight"] = normal(hidden, inner)
        tensors[f"{p}output.dense.bias"] = normal(hidden)
    save_file(tensors, str(directory / "model.safetensors"))
    return directory


def reference_pieces(word: str, vocabulary: dict) -> list[int]:
    """BERT's uncased basic tokeniser and greedy longest-match-first WordPiece, for one word."""
    folded = "".join(
        c for c in unicodedata.normalize("NFD", word.lower()) if unicodedata.category(c) != "Mn"
    )
    ids = []
    for token in re.findall(r"\w+|[^\w\s]", folded):
        start, pieces = 0, []
        while start < len(token):
            end = len(token)
            while end > start and (("##" if start else "") + token[start:end]) not in vocabulary:
                end -= 1
            if end == start:
                pieces = [vocabulary["[UNK]"]]
                break
            pieces.append(vocabulary[("##" if start else "") + token[start:end]])
            start = end
        ids += pieces
    return ids
