"""`kerasformer train --train-file`: a user's own table trains, exports and predicts."""

import json
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.cli import assert_refused_in_one_line, run_cli
from tests.helpers.data import (
    synthetic_squad_v2_document,
    topic_rows,
    write_json,
    write_topic_csv,
)
from tests.helpers.processes import run_commands

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

TINY = ["--epochs", "1", "--batch-size", "16", "--vocab-size", "200", "--maxlen", "16",
        "--embed-dim", "8", "--num-heads", "1", "--ff-dim", "8"]  # fmt: skip


def test_a_csv_trains_under_its_own_name_and_predicts_in_a_fresh_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_topic_csv(tmp_path / "tickets.csv", topic_rows(copies=8))
    (trained,) = run_commands(
        ["train", "--train-file", "tickets.csv", "--text-column", "body",
         "--label-column", "topic", *TINY],
    )  # fmt: skip
    assert trained["code"] == 0, trained
    export_dir = tmp_path / "saved_models" / "tickets-transformer"
    assert f"Exported to {export_dir.relative_to(tmp_path)}" in trained["stdout"]
    metrics = json.loads((export_dir / "metrics.json").read_text())
    assert metrics["config"]["train_file"] == "tickets.csv"
    assert metrics["config"]["dataset"] == "tickets"
    assert metrics["config"]["data_options"] == {"text_column": "body", "label_column": "topic"}
    assert metrics["sizes"] == {"train": 38, "validation": 5, "test": 5}
    assert (export_dir / "assets" / "class_names.txt").read_text().split() == ["sport", "travel"]
    predicted, distilled = run_commands(
        ["predict", str(export_dir), "A record lap", "--json"],
        ["distill", "--teacher", str(export_dir), "--train-file", "tickets.csv",
         "--text-column", "body", "--label-column", "topic", *TINY],
    )  # fmt: skip
    assert predicted["code"] == 0, predicted
    record = json.loads(predicted["stdout"].splitlines()[0])
    assert record["class"] in ("sport", "travel")
    assert sorted(record["probabilities"]) == ["sport", "travel"]
    # The same file distils a student from that export.
    assert distilled["code"] == 0, distilled["stderr"][-3000:]
    student = tmp_path / "saved_models" / "tickets-transformer-distilled"
    assert json.loads((student / "metrics.json").read_text())["sizes"] == metrics["sizes"]


def test_own_data_mistakes_are_one_line_before_training(tmp_path):
    write_topic_csv(tmp_path / "tickets.csv", topic_rows(copies=2))
    (tmp_path / "tickets.jsonl").write_text('{"text": "a", "label": "x"}\n')
    (tmp_path / "folder" / "a").mkdir(parents=True)
    (tmp_path / "folder" / "b").mkdir()
    cases = [
        (
            ["train", "--dataset", "bbc_news", "--train-file", "tickets.csv"],
            ("--dataset and --train-file both name the training data",),
        ),
        (
            ["train", "--data-dir", "ag", "--train-file", "tickets.csv"],
            ("--data-dir and --train-file both name the training data",),
        ),
        (
            ["train", "--validation-file", "tickets.csv"],
            ("validation_file go(es) with your own training data; give --train-file too",),
        ),
        (["train", "--text-column", "body"], ("text_column go(es) with your own training data",)),
        (
            ["train", "--train-file", "tickets.jsonl", "--delimiter", ";"],
            ("--delimiter do(es) not apply to tickets.jsonl, a JSON Lines file",),
        ),
        (
            ["train", "--train-file", "folder", "--text-column", "body"],
            ("--text-column do(es) not apply to folder, a folder of class folders",),
        ),
        (
            "train --train-file tickets.csv --text-column message --label-column topic".split(),
            ("tickets.csv has no column 'message' (text_column)", "'body', 'topic'"),
        ),
    ]
    assert_refused_in_one_line(cases, cwd=tmp_path)
    assert not (tmp_path / "saved_models").exists()


SMALL_SEQUENCE_MODEL = ["--epochs", "1", "--batch-size", "8", "--vocab-size", "60",
                        "--maxlen", "8", "--embed-dim", "8", "--num-heads", "1", "--ff-dim", "8",
                        "--num-layers", "1"]  # fmt: skip


def test_pairs_and_a_corpus_train_and_answer_in_a_fresh_process(tmp_path, monkeypatch):
    """Translation's and the language model's own files, end to end: each export read back
    by another process (SQuAD JSON's: the SQuAD 2.0 test below)."""
    monkeypatch.chdir(tmp_path)
    pairs = "".join(f"one {i} two\tuno {i} dos\n" for i in range(40))
    (tmp_path / "eng-spa.tsv").write_text("English\tSpanish\n" + pairs, "utf-8")
    paragraphs = "\n".join(f"the cat sat on mat {i} .\nit was warm .\n" for i in range(30))
    (tmp_path / "story.txt").write_text(paragraphs, "utf-8")
    trained = run_commands(
        ["train", "--task", "translation", "--train-file", "eng-spa.tsv",
         "--source-column", "English", "--target-column", "Spanish", *SMALL_SEQUENCE_MODEL],
        ["train", "--task", "language-model", "--train-file", "story.txt",
         *SMALL_SEQUENCE_MODEL],
        timeout=600,
    )  # fmt: skip
    for result in trained:
        assert result["code"] == 0, result["stderr"][-3000:]
    exports = tmp_path / "saved_models"
    translator = json.loads((exports / "eng-spa-transformer" / "translator.json").read_text())
    assert (translator["source_language"], translator["target_language"]) == (
        "English", "Spanish"
    )  # fmt: skip
    for name, sizes in (("eng-spa-transformer", {"train": 32, "validation": 4, "test": 4}),
                        ("story-transformer", None)):  # fmt: skip
        metrics = json.loads((exports / name / "metrics.json").read_text())
        assert metrics["config"]["dataset"] == name.rsplit("-", 1)[0]
        if sizes:
            assert metrics["sizes"] == sizes
    translated, generated = run_commands(
        ["translate", exports / "eng-spa-transformer", "one 3 two"],
        ["generate", exports / "story-transformer", "the cat", "--max-tokens", "3"],
    )  # fmt: skip
    for result in (translated, generated):
        assert result["code"] == 0, result["stderr"][-3000:]
    assert len(translated["stdout"].splitlines()) == 1
    assert generated["stdout"].startswith("the cat")


def movie_review(split, i):
    """Reviews whose words give the class away: the tiny model can learn them."""
    words = ("great fine lovely", "awful dull boring")[i % 2]
    return {"text": f"{split} {words} film {i}", "label": i % 2}


def test_a_tfds_dataset_by_name_trains_and_its_export_predicts_elsewhere(
    capsys, tmp_path, monkeypatch, offline
):
    from tests.helpers.tfds_mock import prepared_dataset

    monkeypatch.chdir(tmp_path)
    prepared = tmp_path / "tfds"
    with prepared_dataset(prepared, "imdb_reviews", {"train": 80, "test": 20}, movie_review):
        code, out, err = run_cli(
            capsys, "train", "--dataset", "tfds:imdb_reviews", "--tfds-data-dir", str(prepared),
            *TINY,
        )  # fmt: skip
    assert code == 0, err[-3000:]
    assert "tfds:imdb_reviews: text from 'text', labels from 'label' (2 classes: neg, pos)" in out
    export_dir = tmp_path / "saved_models" / "imdb_reviews-transformer"
    metrics = json.loads((export_dir / "metrics.json").read_text())
    assert metrics["sizes"] == {"train": 72, "validation": 8, "test": 20}
    assert metrics["config"]["dataset"] == "imdb_reviews"
    assert metrics["data"]["classes"]["train"] == {"neg": 36, "pos": 36}
    (predicted,) = run_commands(["predict", str(export_dir), "a lovely film", "--json"])
    assert predicted["code"] == 0, predicted
    assert json.loads(predicted["stdout"])["class"] in ("neg", "pos")


def test_tfds_mistakes_are_one_line(tmp_path):
    cases = [
        (
            ["train", "--dataset", "tfds:imdb_reviewz"],
            (
                "tfds:imdb_reviewz is not a TensorFlow Datasets dataset",
                "did you mean tfds:imdb_reviews?",
            ),
        ),
        (
            ["train", "--dataset", "tfds:imdb_reviews", "--tfds-data-dir", str(tmp_path / "none")],
            ("tfds:imdb_reviews is not prepared in", "tfds build imdb_reviews"),
        ),
        (
            ["train", "--tfds-data-dir", str(tmp_path)],
            ("--tfds-data-dir goes with a TensorFlow Datasets dataset; give --dataset tfds:NAME",),
        ),
        (
            ["train", "--dataset", "tfds:imdb_reviews", "--data-dir", str(tmp_path)],
            ("--data-dir does not apply to tfds:imdb_reviews; pass", "--tfds-data-dir"),
        ),
        (
            ["train", "--dataset", "tfds:imdb_reviews", "--delimiter", ","],
            ("--delimiter do(es) not apply to tfds:imdb_reviews",),
        ),
        (
            ["train", "--task", "translation", "--dataset", "tfds:wmt14_translate/de-en"],
            ("--task translation does not read TensorFlow Datasets datasets",),
        ),
        (["train", "--dataset", "imdb"], ("invalid choice: 'imdb'", "or tfds:NAME")),
    ]
    assert_refused_in_one_line(cases, cwd=tmp_path)
    assert not (tmp_path / "saved_models").exists()


def test_the_data_summary_is_printed_with_its_warnings_and_kept_in_the_metrics(
    capsys, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    train = [(f"match report {i}", "sport") for i in range(12)]
    train += [(f"train to rome {i}", "travel") for i in range(12)]
    train += [("a rare one", "weather"), ("rain again", "weather")]
    write_topic_csv(tmp_path / "train.csv", train)
    write_topic_csv(tmp_path / "valid.csv", [("goal", "sport"), ("bus", "travel")])
    # Two of three test texts are training texts, once in other case and spacing.
    test = [("MATCH  report 3", "sport"), ("train to rome 4", "travel"), ("sun", "weather")]
    write_topic_csv(tmp_path / "test.csv", test)
    code, out, err = run_cli(
        capsys, "train", "--train-file", "train.csv", "--validation-file", "valid.csv",
        "--test-file", "test.csv", "--text-column", "body", "--label-column", "topic", *TINY,
    )  # fmt: skip
    assert code == 0, err[-3000:]
    assert "in train: sport 12, travel 12, weather 2 (imbalance 6.0x)" in out
    warnings = [line for line in out.splitlines() if line.startswith("warning: ")]
    assert warnings[0].startswith("warning: class 'weather' has 2 training examples")
    assert warnings[1].startswith("warning: 2 of 3 test texts (66.7%) are also in train")
    assert len(warnings) == 2
    metrics = json.loads(
        (tmp_path / "saved_models" / "train-transformer" / "metrics.json").read_text()
    )
    summary = metrics["data"]
    assert summary["duplicates"]["test_in_train"] == 2
    assert [f"warning: {w}" for w in summary["warnings"]] == warnings
    assert summary["max_length"] == 16 and summary["words"]["max"] == 4  # "train to rome 10"


def test_squad_2_json_trains_and_reports_answerable_and_unanswerable_apart(
    capsys, tmp_path, monkeypatch, tiny_hub_bert
):
    """Unanswerable questions train and are scored as SQuAD 2.0 scores them. A threshold
    no score reaches abstains from every question, which fixes the scores exactly, in
    training and in `evaluate` of its export on the whole file."""
    monkeypatch.chdir(tmp_path)
    document = synthetic_squad_v2_document(10, 6, seed=0)
    write_json(tmp_path / "v2.json", document)
    bert = ["--preprocess", tiny_hub_bert.preprocess, "--encoder", tiny_hub_bert.encoder,
            "--seq-length", "32", "--doc-stride", "16", "--epochs", "1",
            "--batch-size", "8"]  # fmt: skip
    trained, abstaining = run_commands(
        ["train", "--task", "question-answering", "--model", "bert", "--train-file",
         "v2.json", *bert, "--export-dir", "qa"],
        ["train", "--task", "question-answering", "--model", "bert", "--train-file",
         "v2.json", *bert, "--export-dir", "silent", "--null-threshold=-1e30"],
        timeout=600,
    )  # fmt: skip
    for result in (trained, abstaining):
        assert result["code"] == 0, result["stderr"][-3000:]
    assert "no_answer_f1" in trained["stdout"]  # printed beside EM and F1
    impossible = {q["id"] for a in document["data"] for p in a["paragraphs"] for q in p["qas"]
                  if q["is_impossible"]}  # fmt: skip
    for export in ("qa", "silent"):
        test = json.loads((tmp_path / export / "metrics.json").read_text())["test"]
        data_ids = test["questions"]
        assert test["has_answer_questions"] + test["no_answer_questions"] == data_ids
        assert test["no_answer_questions"] > 0 and test["has_answer_questions"] > 0
    silent = json.loads((tmp_path / "silent" / "metrics.json").read_text())["test"]
    assert (silent["no_answer_exact_match"], silent["no_answer_f1"]) == (100.0, 100.0)
    assert (silent["has_answer_exact_match"], silent["has_answer_f1"]) == (0.0, 0.0)
    share = silent["no_answer_questions"] / silent["questions"]
    assert silent["exact_match"] == pytest.approx(100 * share)
    assert len(impossible) == 20
    settings = json.loads((tmp_path / "qa" / "question_answerer.json").read_text())
    assert settings["null_threshold"] == 0.0  # SQuAD 2.0 data: BERT's default
    context = "said coach profit today"
    answered, silent_answer = run_commands(
        ["answer", "qa", "--question", "which team", "--context", context, "--json"],
        ["answer", "silent", "--question", "which team", "--context", context, "--json"],
    )
    record = json.loads(answered["stdout"].splitlines()[0])
    assert "no_answer_score" in record
    assert context[record["start"] : record["end"]] == record["answer"] or record["start"] == -1
    nothing = json.loads(silent_answer["stdout"].splitlines()[0])
    assert (nothing["answer"], nothing["start"], nothing["end"]) == ("", -1, -1)
    assert_evaluate_scores_answerable_and_unanswerable_apart(capsys, document, len(impossible))


def assert_evaluate_scores_answerable_and_unanswerable_apart(capsys, document, impossible):
    """`evaluate` on the SQuAD 2.0 file: the abstaining export's scores are fixed; the
    other's no-answer exact match is the share of unanswerable questions its served
    answers leave empty."""
    from kerasformer.loading.exported_question_answerer import ExportedQuestionAnswerer

    scores = {}
    for export in ("qa", "silent"):
        code, out, err = run_cli(capsys, "evaluate", export, "--test-file", "v2.json",
                                 "--output", f"{export}.json")  # fmt: skip
        assert code == 0, err
        assert f"{impossible} without an answer: exact match" in out
        scores[export] = json.loads(Path(f"{export}.json").read_text())
    silent = scores["silent"]
    assert silent["questions"] == 60 and silent["no_answer_questions"] == impossible
    assert (silent["no_answer_exact_match"], silent["has_answer_f1"]) == (100.0, 0.0)
    assert silent["exact_match"] == pytest.approx(100 * impossible / 60)
    questions = [(p["context"], q) for a in document["data"] for p in a["paragraphs"]
                 for q in p["qas"] if q["is_impossible"]]  # fmt: skip
    served = ExportedQuestionAnswerer("qa").answer(
        [q["question"] for _, q in questions], [context for context, _ in questions]
    )
    left_empty = sum(answer["answer"] == "" for answer in served)
    assert scores["qa"]["no_answer_exact_match"] == pytest.approx(100 * left_empty / impossible)


TAGS = {"sport": ["goal", "match", "cup"], "travel": ["flight", "hotel", "trip"],
        "food": ["pizza", "pasta", "soup"]}  # fmt: skip


def write_tagged_csv(path, count=150):
    """Texts of one or two topics' words; each text's tags are its topics."""
    rng = np.random.default_rng(0)
    lines = ["body,tags"]
    for i in range(count):
        tags = sorted(rng.choice(list(TAGS), size=1 + i % 2, replace=False))
        words = [str(rng.choice(TAGS[tag])) for tag in tags for _ in range(3)]
        lines.append(f'{" ".join(words)} n{i},"{",".join(tags)}"')
    path.write_text("\n".join(lines) + "\n", "utf-8")


SERVE_LABELS = """
import json, sys
import tensorflow as tf
served = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
out = served(inputs=tf.constant(json.loads(sys.argv[2])))
print(json.dumps({"labels": [s.decode() for s in out["labels"].numpy()],
                  "probabilities": out["probabilities"].numpy().tolist()}))
"""


def test_multi_label_trains_with_a_threshold_and_its_export_returns_the_labels_over_it(
    tmp_path, monkeypatch
):
    from tests.helpers.processes import run_python_json

    monkeypatch.chdir(tmp_path)
    write_tagged_csv(tmp_path / "tags.csv")
    (trained,) = run_commands(
        ["train", "--train-file", "tags.csv", "--text-column", "body", "--label-column",
         "tags", "--multi-label", *TINY],
    )  # fmt: skip
    assert trained["code"] == 0, trained["stderr"][-3000:]
    assert "micro_f1" in trained["stdout"] and "macro_f1" in trained["stdout"]
    export = tmp_path / "saved_models" / "tags-transformer"
    metrics = json.loads((export / "metrics.json").read_text())
    threshold = json.loads((export / "classifier.json").read_text())["threshold"]
    assert metrics["test"]["threshold"] == metrics["validation"]["threshold"] == threshold
    train_rows = metrics["sizes"]["train"]
    assert sum(metrics["data"]["classes"]["train"].values()) > train_rows  # two tags count twice
    texts = ["goal match pizza", "hotel trip", "soup"]
    served = run_python_json(SERVE_LABELS, str(export), json.dumps(texts))
    names = ("food", "sport", "travel")  # sorted training labels: the export's order
    for labels, row in zip(served["labels"], served["probabilities"], strict=True):
        expected = [name for name, p in zip(names, row, strict=True) if p > threshold]
        assert labels == ",".join(expected)
    (predicted,) = run_commands(["predict", str(export), *texts, "--json"])
    records = [json.loads(line) for line in predicted["stdout"].splitlines()]
    assert [",".join(r["labels"]) for r in records] == served["labels"]
