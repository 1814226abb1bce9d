"""The folder the docs' examples run in, laid out as the pages assume: the repository's
folder after the quick start, with ``../shared/data/`` beside it, only every dataset,
file and export in it tiny.

``user/`` is the working folder:
- the files the pages train on (``tickets.csv``, ``eng-fra.tsv``, ``novel.txt``,
  ``faq.json``, ``paragraph.txt``, ``more_news.txt``, ``ag_2000/``) and the short data
  paths of the README (``ag_news_csv`` and the rest, links into ``../shared/data``);
- ``saved_models/``: a from-scratch BBC News classifier, a translator, a language model,
  a BiLSTM tagger and a BERT question answerer, exported by the command line, and two
  LiteRT models; ``hub/minilm``: the tiny BERT converted, where MiniLM's conversion would be.
  A page's examples start without these, but for those the page names in an
  ``<!-- examples start from: PATH ... -->`` comment (`tests/docs/examples.py`).

``shared/data/`` holds AG News, spa-eng, WikiText-2, SQuAD and CoNLL-2003 in their own
layouts, and ``bert/`` the tiny BERT checkpoint MiniLM's conversions stand in for.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.bert import write_tiny_bert_checkpoint
from tests.helpers.data import (
    TOPIC_WORDS,
    synthetic_ner_sentences,
    synthetic_rows,
    synthetic_squad_document,
    write_ag_csv,
    write_conll,
    write_spa_txt,
    write_synthetic_squad,
    write_wiki_tokens,
)
from tests.helpers.processes import run_commands

SHORT_DATA_PATHS = ("ag_news_csv", "spa-eng", "wikitext-2", "squad", "conll2003")
# The tiny exports' sizes: one epoch, as small as a model of each kind gets.
SMALL = ["--epochs", "1", "--embed-dim", "8", "--num-heads", "2", "--ff-dim", "8"]
EXPORTS = [
    ["train", "--maxlen", "64", "--vocab-size", "2000", *SMALL],
    ["export-litert", "saved_models/bbc_news-transformer", "--out",
     "saved_models/bbc_news-transformer.tflite"],
    ["train", "--task", "translation", "--data-dir", "../shared/data/spa-eng", *SMALL],
    ["train", "--task", "language-model", "--data-dir", "../shared/data/wikitext-2", *SMALL],
    ["train", "--task", "ner", "--model", "rnn", "--data-dir", "../shared/data/conll2003",
     "--epochs", "1", "--embed-dim", "8", "--units", "8"],
    ["export-litert", "saved_models/conll2003-rnn", "--out", "saved_models/conll2003-rnn.tflite"],
    ["convert-bert", "../shared/bert", "--out", "hub/minilm"],
    ["train", "--task", "question-answering", "--data-dir", "../shared/data/squad",
     "--preprocess", "hub/minilm/preprocess", "--encoder", "hub/minilm/encoder",
     "--seq-length", "64", "--doc-stride", "32", "--epochs", "1", "--batch-size", "16"],
]  # fmt: skip


def write_workspace(root: Path) -> None:
    """Fill ``root`` (which must not exist) with ``user/`` and ``shared/``."""
    write_shared_data(root / "shared" / "data")
    write_bert_checkpoint(root / "shared" / "bert")
    user = root / "user"
    write_user_files(user)
    for name in SHORT_DATA_PATHS:
        (user / name).symlink_to(Path("..") / "shared" / "data" / name)
    results = run_commands(*EXPORTS, cwd=user, timeout=900)
    for command, result in zip(EXPORTS, results, strict=True):
        assert result["code"] == 0, f"kerasformer {' '.join(command)}: {result['stderr'][-2000:]}"


def write_shared_data(data: Path) -> None:
    (data / "ag_news_csv").mkdir(parents=True)
    write_ag_csv(data / "ag_news_csv" / "train.csv", synthetic_rows(240, seed=0))
    write_ag_csv(data / "ag_news_csv" / "test.csv", synthetic_rows(80, seed=1), header=True)
    write_spa_txt(data / "spa-eng")
    write_wiki_tokens(data / "wikitext-2")
    write_synthetic_squad(data / "squad", articles=10, per_article=6)
    (data / "conll2003").mkdir()
    write_conll(data / "conll2003" / "train.txt", synthetic_ner_sentences(160, seed=0))
    write_conll(data / "conll2003" / "valid.txt", synthetic_ner_sentences(40, seed=1))


def write_bert_checkpoint(directory: Path) -> None:
    """A tiny random BERT that reads every word of the pages' examples, with positions
    enough for the sequence lengths the pages ask for."""
    words = " ".join(TOPIC_WORDS.values()) + (
        " time flies like an arrow fruit banana who won super bowl 50 denver broncos"
        " angela merkel met emmanuel macron in paris shares rose on monday"
    )
    extra_words = tuple(sorted(set(words.split())))
    # Four heads: the pages draw head 2 of MiniLM's twelve.
    write_tiny_bert_checkpoint(directory, heads=4, max_positions=512, extra_words=extra_words)


def write_user_files(user: Path) -> None:
    user.mkdir(parents=True)
    teams = {
        "accounts": ["I cannot log in", "Password reset fails", "My account is locked"],
        "billing": ["I was charged twice", "Refund my last invoice", "Update my card"],
        "shipping": ["Where is my parcel", "The box arrived broken", "Change my address"],
    }
    rows = [f'"{text} ({i})",{team}' for i in range(8) for team, texts in teams.items()
            for text in texts]  # fmt: skip
    (user / "tickets.csv").write_text("body,team\n" + "\n".join(rows) + "\n", "utf-8")
    pairs = ["Hello.\tBonjour.", "Thank you.\tMerci.", "Good night.\tBonne nuit.",
             "I like tea.\tJ'aime le thé.", "Where is it?\tOù est-ce ?"]  # fmt: skip
    lines = [f"{english} ({i})\t{french} ({i})" for i in range(12) for english, french in
             (pair.split("\t") for pair in pairs)]  # fmt: skip
    (user / "eng-fra.tsv").write_text("English\tFrench\n" + "\n".join(lines) + "\n", "utf-8")
    paragraphs = ["The cat sat on the mat.\nThe dog ran under the rug.\n"] * 12
    (user / "novel.txt").write_text("\n".join(paragraphs), "utf-8")
    (user / "faq.json").write_text(json.dumps(synthetic_squad_document(10, 4, seed=2)), "utf-8")
    (user / "paragraph.txt").write_text(
        "Super Bowl 50 was won by the Denver Broncos, who beat the Carolina Panthers.\n", "utf-8"
    )
    (user / "more_news.txt").write_text(
        "\n".join(" ".join(row[1:]) for row in synthetic_rows(40, seed=3)) + "\n", "utf-8"
    )
    (user / "ag_2000").mkdir()
    write_ag_csv(user / "ag_2000" / "train.csv", synthetic_rows(120, seed=4))
    write_ag_csv(user / "ag_2000" / "test.csv", synthetic_rows(40, seed=5), header=True)
