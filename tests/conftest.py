"""Shared fixtures: small synthetic data written by the tests, tiny models trained on it,
one trained BBC model and the real MiniLM. Their helpers are in tests/helpers/."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.cores import worker_thread_pools

# The tests check what XLA computes, not how fast: XLA's CPU compiler without its
# optimisation passes compiles a tiny BERT's training step in less than half the time
# (108 s to 45 s for one test). Set before anything compiles; subprocesses inherit it.
os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0")

# Each pytest-xdist worker's TensorFlow (and every process it starts) sizes its thread pools
# to its share of the cores, not to all of them: two workers on two cores otherwise run
# twice the threads there are cores for (five heavy test files, one run each: 449 s to
# 423 s; the default classifier's step on 32 texts, two processes at once: 0.71-0.78 s to
# 0.62 s).
os.environ.update(worker_thread_pools())

from tests.helpers.bert import write_tiny_bert_checkpoint
from tests.helpers.data import (
    QA_WINDOWS,
    ner_words,
    synthetic_ner_sentences,
    synthetic_rows,
    write_ag_csv,
    write_conll,
    write_synthetic_squad,
)
from tests.helpers.made_once import made_once
from tests.helpers.processes import run_console_script

# Each test's CPU seconds, subprocesses included, in the closing report (--cpu-report);
# pytester runs that plugin in a pytest of its own (tests/test_cpu_report.py).
pytest_plugins = ("tests.helpers.cpu_report", "pytester")

# Session fixtures that take minutes to make. pytest-xdist makes each once per worker, so
# the tests that use one run on one worker (setup.cfg: --dist loadgroup).
SHARED_ON_ONE_WORKER = ("trained_bbc", "minilm_hub", "trained_question_answerer", "tiny_taggers")
# A test that uses one of these is slow (tests/README.md): each trains or converts for
# tens of seconds before the test starts.
SLOW_FIXTURES = (*SHARED_ON_ONE_WORKER, "minilm_preprocess")


def pytest_addoption(parser):
    parser.addoption(
        "--docs-examples", action="store_true",
        help="also run the docs' examples (marker docs_examples; .ci/run's docs stage)",
    )  # fmt: skip


# Before pytest-xdist's own hook reads the groups: added after it, they group nothing.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    if not config.getoption("--docs-examples"):
        # Deselected, not skipped: the docs stage of .ci/run runs them (tests/README.md).
        examples = [item for item in items if item.get_closest_marker("docs_examples")]
        if examples:
            config.hook.pytest_deselected(items=examples)
            items[:] = [item for item in items if item not in examples]
    shared_by_module = {}
    for item in items:
        if any(name in item.fixturenames for name in SLOW_FIXTURES):
            item.add_marker(pytest.mark.slow)
        shared = shared_fixture(item)
        if shared and uses_a_module_fixture(item):
            shared_by_module.setdefault(item.module.__name__, shared)
    for item in items:
        shared = shared_fixture(item)
        if shared:
            item.add_marker(pytest.mark.xdist_group(shared))
        elif uses_a_module_fixture(item):
            # A module fixture is made once per worker too: its tests stay together, on
            # the worker of the shared fixture some of them need, if any.
            module = item.module.__name__
            item.add_marker(pytest.mark.xdist_group(shared_by_module.get(module, module)))


def shared_fixture(item) -> str | None:
    """The first of `SHARED_ON_ONE_WORKER` the test uses, if any."""
    return next((name for name in SHARED_ON_ONE_WORKER if name in item.fixturenames), None)


def uses_a_module_fixture(item) -> bool:
    definitions = getattr(item, "_fixtureinfo", None)
    if definitions is None:
        return False
    return any(
        fixture.scope == "module"
        for fixtures in definitions.name2fixturedefs.values()
        for fixture in fixtures
    )


@pytest.fixture
def offline(monkeypatch):
    """Every new connection fails at once, as on a machine without DNS (patched where
    kerasformer.network looks)."""
    import socket

    def refuse(address, timeout):
        raise OSError("Name or service not known")

    monkeypatch.setattr(socket, "create_connection", refuse)


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


# The from-scratch taggers' sizes: as small as still learns the synthetic templates.
TINY_TAGGER_FLAGS = {
    "rnn": ["--embed-dim", "16", "--units", "16"],
    "transformer": ["--embed-dim", "16", "--num-heads", "2", "--ff-dim", "32",
                    "--num-layers", "1"],
}  # fmt: skip


@pytest.fixture(scope="session")
def tiny_ner_files(tmp_path_factory) -> dict[str, Path]:
    """Synthetic CoNLL files: 160 training sentences, 40 test sentences."""
    root = tmp_path_factory.mktemp("tiny_ner")
    return {
        "train": write_conll(root / "train.txt", synthetic_ner_sentences(160, seed=0)),
        "test": write_conll(root / "test.txt", synthetic_ner_sentences(40, seed=1)),
    }


@pytest.fixture(scope="session")
def tiny_taggers(tiny_ner_files, tmp_path_factory) -> dict[str, Path]:
    """The BiLSTM and the transformer tagger (`TINY_TAGGER_FLAGS`), each trained by
    ``kerasformer train --task ner`` on `tiny_ner_files` for 6 epochs and exported with a
    TF Serving version folder, ``1/``: model name -> export directory."""
    from tests.helpers.cli import run_cli_in_fixture

    root = tmp_path_factory.mktemp("tiny_taggers")
    for model, flags in TINY_TAGGER_FLAGS.items():
        code, out, err = run_cli_in_fixture(
            "train", "--task", "ner", "--model", model, "--train-file",
            str(tiny_ner_files["train"]), "--test-file", str(tiny_ner_files["test"]),
            "--epochs", "6", "--learning-rate", "0.01", "--batch-size", "16",
            "--export-dir", str(root / model), "--serving-version", "1", *flags,
        )  # fmt: skip
        assert code == 0, err
        assert "1/ for TF Serving" in out.splitlines()[-1]
    return {model: root / model for model in TINY_TAGGER_FLAGS}


@pytest.fixture(scope="session")
def tiny_bert_checkpoint(tmp_path_factory) -> Path:
    """A tiny random BERT in HuggingFace's files, written once for every worker."""
    return made_once(tmp_path_factory, "tiny_bert_checkpoint", write_tiny_bert_checkpoint)


@pytest.fixture(scope="session")
def tiny_hub_bert(tiny_bert_checkpoint, tmp_path_factory):
    """The tiny BERT in TF-Hub format (preprocess + encoder), converted once for every
    worker (a conversion takes about 12 s)."""
    from kerasformer.convert.convert_bert import HubBert
    from kerasformer.export import convert_bert

    out = made_once(
        tmp_path_factory, "tiny_hub_bert",
        lambda directory: convert_bert(tiny_bert_checkpoint, directory, seq_length=32),
    )  # fmt: skip
    return HubBert(preprocess=out / "preprocess", encoder=out / "encoder")


@pytest.fixture(scope="session")
def tiny_ner_bert(tmp_path_factory):
    """A tiny random BERT whose vocabulary holds the synthetic NER words, in TF-Hub format,
    converted once for every worker."""
    from kerasformer.convert.convert_bert import HubBert
    from kerasformer.export import convert_bert

    def make(directory: Path) -> None:
        checkpoint = write_tiny_bert_checkpoint(directory / "hf", extra_words=ner_words())
        convert_bert(checkpoint, directory / "hub", seq_length=32)

    out = made_once(tmp_path_factory, "tiny_ner_bert", make) / "hub"
    return HubBert(preprocess=out / "preprocess", encoder=out / "encoder")


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
    from kerasformer.convert.convert_bert import HubBert

    out = tmp_path_factory.mktemp("minilm_hub") / "minilm"
    result = run_console_script("convert-bert", "--out", out)
    assert result.returncode == 0, result.stderr[-3000:]
    return HubBert(preprocess=out / "preprocess", encoder=out / "encoder")


@pytest.fixture(scope="session")
def minilm_preprocess(tmp_path_factory):
    """MiniLM's real preprocess model (uncased wordpieces, offsets), without its encoder."""
    import tensorflow_hub as hub

    from kerasformer.convert.convert_bert import default_bert_checkpoint_dir, export_preprocess

    path = tmp_path_factory.mktemp("minilm") / "preprocess"
    vocab = default_bert_checkpoint_dir() / "vocab.txt"
    export_preprocess(path, vocab, lower_case=True, seq_length=128)
    return hub.load(str(path))
