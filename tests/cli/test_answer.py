"""`kerasformer train --task question-answering`, then `kerasformer answer`."""

import io
import json
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.data import QA_WINDOWS, write_synthetic_squad
from tests.helpers.pictures import assert_not_blank, read_png

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow


def test_train_question_answering_from_the_command_line(capsys, tiny_hub_bert, tmp_path):
    data = write_synthetic_squad(tmp_path / "squad", articles=10, per_article=3)
    code, out, err = run_cli(
        capsys, "train", "--task", "question-answering", "--data-dir", str(data),
        "--preprocess", str(tiny_hub_bert.preprocess), "--encoder", str(tiny_hub_bert.encoder),
        "--seq-length", str(QA_WINDOWS["seq_length"]), "--doc-stride", "8",
        "--epochs", "1", "--batch-size", "8", "--export-dir", str(tmp_path / "qa"),
    )  # fmt: skip
    assert code == 0, err
    assert "squad: 24 train, 3 validation, 3 test questions" in out
    assert "exact_match" in out and "f1" in out
    assert (tmp_path / "qa" / "saved_model.pb").is_file()


def test_seq_length_belongs_to_question_answering(capsys):
    code, out, err = run_cli(capsys, "train", "--seq-length", "64")
    assert code == 2
    assert "--seq-length do(es) not apply to --model transformer" in err


def test_answer_prints_the_span_and_draws_its_probabilities(
    capsys, trained_question_answerer, tmp_path
):
    context = "the minister said coach profit today in the software research"
    picture = tmp_path / "span.png"
    code, out, err = run_cli(
        capsys, "answer", str(trained_question_answerer.export_dir), "--question", "which team",
        "--context", context, "--plot", str(picture),
    )  # fmt: skip
    assert code == 0, err
    answer, offsets = out.splitlines()[:2]
    assert answer == "coach profit"
    start = context.index("coach profit")
    assert offsets.startswith(f"characters {start}-{start + len('coach profit')}, score ")
    assert_not_blank(read_png(picture))


def test_answer_reads_a_context_file(capsys, trained_question_answerer, tmp_path):
    path = tmp_path / "context.txt"
    path.write_text("Zürich said: striker bank, today.", encoding="utf-8")
    code, out, err = run_cli(
        capsys, "answer", str(trained_question_answerer.export_dir), "--question", "which team",
        "--context-file", str(path),
    )  # fmt: skip
    assert code == 0, err
    # The file's text is what was read: the answer and its offsets are the file's.
    # (Which words a briefly trained model picks here, outside its training contexts,
    # is left open: it once picked "bank" alone.)
    context = path.read_text(encoding="utf-8")
    answer, offsets = out.splitlines()[:2]
    start, end = map(int, offsets.split()[1].rstrip(",").split("-"))
    assert context[start:end] == answer != ""


@pytest.mark.parametrize(
    "content, message",
    [
        ("Zürich said: striker bank.".encode("latin-1"), "is not valid UTF-8 (byte 0xfc"),
        ("Zürich said:\x00 striker bank.".encode(), "holds a NUL byte"),
    ],
)
def test_a_context_file_that_is_not_utf8_text_gets_an_error_record(
    capsys, trained_question_answerer, tmp_path, content, message
):
    path = tmp_path / "context.txt"
    path.write_bytes(content)
    code, out, err = run_cli(
        capsys, "answer", str(trained_question_answerer.export_dir), "--question", "which team",
        "--context-file", str(path), "--json",
    )  # fmt: skip
    assert code == 1
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert record["status"] == "error"
    assert f"--context-file {path} {message}" in record["message"]


def test_a_context_files_byte_order_mark_is_not_part_of_the_context(
    capsys, trained_question_answerer, tmp_path
):
    path = tmp_path / "excel.txt"
    path.write_bytes(b"\xef\xbb\xbf" + "Zürich said: striker bank, today.".encode())
    code, out, err = run_cli(
        capsys, "answer", str(trained_question_answerer.export_dir), "--question", "which team",
        "--context-file", str(path), "--json",
    )  # fmt: skip
    assert code == 0, err
    (record,) = [json.loads(line) for line in out.splitlines()]
    context = "Zürich said: striker bank, today."
    assert context[record["start"] : record["end"]] == record["answer"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--context", "  "], "--question and --context has an empty context"),
        (["--context-file", "missing.txt"], "--context-file missing.txt does not exist"),
    ],
)
def test_answer_errors_are_one_line(capsys, trained_question_answerer, extra, message):
    code, out, err = run_cli(
        capsys, "answer", str(trained_question_answerer.export_dir), "--question", "which team",
        *extra,
    )  # fmt: skip
    assert code != 0
    assert message in err and len(err.strip().splitlines()) == 1


def test_answer_reads_json_lines_one_record_each(capsys, monkeypatch, trained_question_answerer):
    export_dir = str(trained_question_answerer.export_dir)
    pair = {"question": "which team", "context": "Zürich said: striker bank, today."}
    alone = run_cli(capsys, "answer", export_dir, "--question", pair["question"], "--context",
                    pair["context"], "--json")[1]  # fmt: skip
    lines = [json.dumps(pair), "{not json", json.dumps({"question": "q"}), json.dumps(pair)]
    data = ("\n".join(lines) + "\n").encode()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    code, out, err = run_cli(capsys, "answer", export_dir, "-", "--json")
    assert code == 1
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["status"] for r in records] == ["ok", "error", "error", "ok"]
    expected = {k: v for k, v in json.loads(alone).items() if k not in ("input", "text")}
    for record in (records[0], records[3]):
        assert {k: record[k] for k in expected} == expected
    assert "line 2 of standard input is not JSON" in records[1]["message"]
    assert "not a JSON object with both keys" in records[2]["message"]
    assert err.count("\n") == 2


def test_answer_serves_from_the_saved_model_alone_as_the_keras_answerer_answers(
    trained_question_answerer, tmp_path
):
    """In a fresh process, as a user runs it, `answer` (without --plot) imports no Keras
    and no TF-Hub: the export's own signature answers, windows and all. Its answers are
    those of the Keras model read back by `load_question_answerer`."""
    from kerasformer.loading import load_question_answerer
    from tests.helpers.processes import run_each_recording_imports

    export_dir = trained_question_answerer.export_dir
    long = " ".join(["the minister said bank shares rose today in the research"] * 6)
    pairs = [("which team", "Zürich said: striker bank, today."), ("which team", long)]
    lines = [json.dumps({"question": q, "context": c}, ensure_ascii=False) for q, c in pairs]
    (result,) = run_each_recording_imports(
        [["answer", export_dir, "--input-file", write_lines(tmp_path, lines), "--json"]],
        ("tf_keras", "keras", "tensorflow_hub", "official", "tensorflow_text"),
    )
    assert result["code"] == 0, result["stderr"]
    assert result["heavy"] == []
    served = [json.loads(line) for line in result["stdout"].splitlines()]
    expected = load_question_answerer(export_dir).answer(*zip(*pairs, strict=True))
    for record, answer in zip(served, expected, strict=True):
        assert (record["answer"], record["start"], record["end"]) == (
            answer["answer"], answer["start"], answer["end"],
        )  # fmt: skip
        assert record["score"] == pytest.approx(answer["score"], abs=1e-4)
        assert record["no_answer_score"] == pytest.approx(answer["no_answer_score"], abs=1e-4)


def write_lines(directory, lines):
    path = directory / "pairs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_evaluate_scores_the_exports_answers_as_the_trainer_scored_its_own(
    capsys, trained_question_answerer, tmp_path
):
    """`evaluate --dataset squad` reads the split the trainer tested on and scores the
    export's answers: the same exact match and F1 the trainer reported for its test split."""
    export_dir = Path(trained_question_answerer.export_dir)
    data_dir = export_dir.parent / "squad"  # where the fixture wrote its synthetic SQuAD
    output = tmp_path / "squad.json"
    code, out, err = run_cli(
        capsys, "evaluate", str(export_dir), "--dataset", "squad", "--data-dir", str(data_dir),
        "--output", str(output),
    )  # fmt: skip
    assert code == 0, err
    measured = json.loads(output.read_text())
    trained = json.loads((export_dir / "metrics.json").read_text())["test"]
    assert measured["questions"] == trained["questions"] > 0
    assert (measured["exact_match"], measured["f1"]) == (trained["exact_match"], trained["f1"])
    assert "has_answer_questions" not in measured  # SQuAD v1.1: every question has one
    assert f"exact match {measured['exact_match']:.2f}  F1 {measured['f1']:.2f}" in out
