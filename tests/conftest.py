"""Shared fixtures: small synthetic data written by the tests, and one trained BBC model."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

# Session fixtures that take minutes to make. pytest-xdist makes each once per worker, so
# the tests that use one run on one worker (setup.cfg: --dist loadgroup).
SHARED_ON_ONE_WORKER = ("trained_bbc", "minilm_hub", "trained_question_answerer")


def pytest_collection_modifyitems(items):
    for item in items:
        shared = [name for name in SHARED_ON_ONE_WORKER if name in item.fixturenames]
        if shared:
            item.add_marker(pytest.mark.xdist_group(shared[0]))


TOPIC_WORDS = {
    1: "minister election government treaty parliament embassy war summit",
    2: "match team goal season coach league striker tournament",
    3: "shares profit market bank stocks investors earnings merger",
    4: "software computer internet chip space research satellite browser",
}
COMMON_WORDS = "the a of in on said today new after over".split()


def synthetic_rows(count: int, seed: int) -> list[tuple[str, str, str]]:
    """AG News-style rows whose class is told by its topic words."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(count):
        label = i % 4 + 1
        words = list(rng.choice(TOPIC_WORDS[label].split(), 4)) + list(rng.choice(COMMON_WORDS, 4))
        rng.shuffle(words)
        rows.append((str(label), " ".join(words[:3]).title(), " ".join(words[3:])))
    return rows


def write_ag_csv(path: Path, rows, header: bool = False) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL)
        if header:
            writer.writerow(["Class Index", "Title", "Description"])
        writer.writerows(rows)
    return path


@pytest.fixture(scope="session")
def tiny_ag_news_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ag_news_csv")
    write_ag_csv(root / "train.csv", synthetic_rows(240, seed=0))
    write_ag_csv(root / "test.csv", synthetic_rows(80, seed=1), header=True)
    return root


@pytest.fixture(scope="session")
def trained_bbc(tmp_path_factory):
    """The default model trained on BBC News with default settings, exported once."""
    from kerasformer.training import TrainingConfig, train

    export_dir = tmp_path_factory.mktemp("exports") / "bbc_news-transformer"
    return train(TrainingConfig(dataset="bbc_news", export_dir=str(export_dir)), verbose=0)


@pytest.fixture(scope="session")
def tiny_transformer(tiny_ag_news_dir, tmp_path_factory):
    """A small transformer trained for one epoch on the synthetic AG News words, exported."""
    from kerasformer.training import TrainingConfig, train

    export_dir = tmp_path_factory.mktemp("tiny_transformer") / "ag_news-transformer"
    options = dict(vocab_size=200, maxlen=32, embed_dim=8, num_heads=2, ff_dim=8)
    config = TrainingConfig(
        dataset="ag_news", data_dir=str(tiny_ag_news_dir), epochs=1, batch_size=32,
        model_options=options, export_dir=str(export_dir),
    )  # fmt: skip
    return train(config, verbose=0)


def run_python(code: str, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run code in a fresh interpreter, as a user's separate process would."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def write_tiny_bert_checkpoint(
    directory: Path, hidden: int = 16, layers: int = 2, heads: int = 2, inner: int = 32,
    max_positions: int = 64, seed: int = 0, config_overrides: dict | None = None,
) -> Path:  # fmt: skip
    """A randomly initialised BERT in HuggingFace's file layout, small enough for CI.

    Its vocabulary holds the synthetic AG News words, so models built on it can learn.
    """
    import json

    from safetensors.numpy import save_file

    words = sorted({w for text in TOPIC_WORDS.values() for w in text.split()} | set(COMMON_WORDS))
    vocab = SPECIAL_TOKENS + words
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


@pytest.fixture(scope="session")
def tiny_bert_checkpoint(tmp_path_factory) -> Path:
    return write_tiny_bert_checkpoint(tmp_path_factory.mktemp("tiny_bert") / "hf")


@pytest.fixture(scope="session")
def tiny_hub_bert(tiny_bert_checkpoint, tmp_path_factory):
    """The tiny BERT in TF-Hub format (preprocess + encoder), converted once per session."""
    from kerasformer.export import convert_bert

    return convert_bert(
        tiny_bert_checkpoint, tmp_path_factory.mktemp("hub") / "tiny", seq_length=32
    )


def synthetic_squad_document(articles: int, questions_per_article: int, seed: int) -> dict:
    """SQuAD v1.1-style JSON whose answer is a sports word and the business word after it.

    Contexts are 30 to 40 words of filler (common words and words of other topics), so
    the tiny BERT's 32-token windows must be cut several to a context; a model that
    learns the task has to read every window and pick the right one.
    """
    rng = np.random.default_rng(seed)
    filler = COMMON_WORDS + " ".join(TOPIC_WORDS[t] for t in (1, 4)).split()
    sports, business = TOPIC_WORDS[2].split(), TOPIC_WORDS[3].split()
    data = []
    for article in range(articles):
        paragraphs = []
        for question in range(questions_per_article):
            words = list(rng.choice(filler, int(rng.integers(30, 41))))
            answer = f"{rng.choice(sports)} {rng.choice(business)}"
            at = int(rng.integers(0, len(words)))
            context = " ".join(words[:at] + [answer] + words[at:])
            start = len(" ".join(words[:at])) + (1 if at else 0)
            assert context[start : start + len(answer)] == answer
            qas = [{
                "id": f"{article}-{question}",
                "question": "which team",
                "answers": [{"text": answer, "answer_start": start}],
            }]  # fmt: skip
            paragraphs.append({"context": context, "qas": qas})
        data.append({"title": f"Article {article}", "paragraphs": paragraphs})
    return {"version": "1.1", "data": data}


def write_synthetic_squad(directory: Path, articles: int = 20, per_article: int = 30,
                          seed: int = 0) -> Path:  # fmt: skip
    import json

    directory.mkdir(parents=True, exist_ok=True)
    document = synthetic_squad_document(articles, per_article, seed)
    (directory / "dev-v1.1.json").write_text(json.dumps(document), encoding="utf-8")
    return directory


QA_WINDOWS = {"seq_length": 32, "doc_stride": 8, "max_question_tokens": 4}


@pytest.fixture(scope="session")
def trained_question_answerer(tiny_hub_bert, tmp_path_factory):
    """The tiny BERT fine-tuned on synthetic SQuAD (5 epochs, a few seconds), exported."""
    from kerasformer.training import TrainingConfig, train

    root = tmp_path_factory.mktemp("qa")
    config = TrainingConfig(
        task="question-answering", model="bert", dataset="squad",
        data_dir=str(write_synthetic_squad(root / "squad")), epochs=5, batch_size=16,
        fine_tune_learning_rate=1e-3, export_dir=str(root / "export"),
        model_options={"preprocess": str(tiny_hub_bert.preprocess),
                       "encoder": str(tiny_hub_bert.encoder), **QA_WINDOWS},
    )  # fmt: skip
    return train(config, verbose=0)


@pytest.fixture(scope="session")
def minilm_hub(tmp_path_factory):
    """The real MiniLM converted once per session by `kerasformer convert-bert`, the console
    script a user runs, in a process of its own."""
    import shutil

    from kerasformer.export.convert_bert import HubBert

    out = tmp_path_factory.mktemp("minilm_hub") / "minilm"
    command = shutil.which("kerasformer")
    assert command, "the kerasformer console script is not installed (pip install -e .)"
    result = subprocess.run(
        [command, "convert-bert", "--out", str(out)], capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return HubBert(preprocess=out / "preprocess", encoder=out / "encoder")


@pytest.fixture(scope="session")
def minilm_preprocess(tmp_path_factory):
    """MiniLM's real preprocess model (uncased wordpieces, offsets), without its encoder."""
    import tensorflow_hub as hub

    from kerasformer.export.convert_bert import default_bert_checkpoint_dir, export_preprocess

    path = tmp_path_factory.mktemp("minilm") / "preprocess"
    vocab = default_bert_checkpoint_dir() / "vocab.txt"
    export_preprocess(path, vocab, lower_case=True, seq_length=128)
    return hub.load(str(path))
