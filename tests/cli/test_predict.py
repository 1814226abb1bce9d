"""`kerasformer predict`: one record per input, bad inputs reported alone, exit status."""

import io
import json
import subprocess
import sys

import numpy as np
import pytest

from kerasformer.backend import tf
from tests.helpers.cli import run_cli, run_cli_expecting_exit
from tests.helpers.data import synthetic_rows
from tests.helpers.processes import run_kerasformer

BAD_LINE = 500  # 1-based line of standard input that is not UTF-8
NO_KNOWN_WORD_LINES = {10: "", 20: "?!", 30: "日本語のニュース", 40: "📈📉🚀"}
STDIN_LINES = 1000


def run_predict(*args, stdin: bytes = b"") -> subprocess.CompletedProcess:
    """The command in its own process; arguments and stdin are passed as raw bytes."""
    # TensorFlow's C++ log (e.g. "failed call to cuInit" without a GPU) is not ours.
    return run_kerasformer("predict", *args, stdin=stdin, text=False, tf_log_level="3")


def stdin_texts() -> list[bytes]:
    texts = [f"{title} {body}".encode() for _, title, body in synthetic_rows(STDIN_LINES, seed=7)]
    for line, text in NO_KNOWN_WORD_LINES.items():
        texts[line - 1] = text.encode()
    texts[BAD_LINE - 1] = b"caf\xe9 au lait"
    return texts


@pytest.fixture(scope="module")
def stdin_run(tiny_transformer):
    """`predict MODEL --json FIRST - LAST` over 1,000 lines with one bad line among them."""
    lines = stdin_texts()
    result = run_predict(
        str(tiny_transformer.export_dir), "--json", "team goal", "-", "shares profit",
        stdin=b"\n".join(lines) + b"\n",
    )  # fmt: skip
    records = [json.loads(line) for line in result.stdout.decode().splitlines()]
    return result, records, lines


def test_every_input_line_gets_one_record_in_order(stdin_run):
    # Used to: blank lines dropped (outputs no longer lined up with inputs) and
    # `predict MODEL TEXT - TEXT` ignored stdin silently.
    _, records, lines = stdin_run
    assert [record["input"] for record in records] == list(range(1, STDIN_LINES + 3))
    expected = ["team goal", *(line.decode("utf-8", "backslashreplace") for line in lines)]
    assert [record["text"] for record in records] == [*expected, "shares profit"]


def test_one_bad_line_is_an_error_record_and_exit_status_1(stdin_run):
    # Used to: a traceback (UnicodeDecodeError), and no prediction at all.
    result, records, _ = stdin_run
    assert result.returncode == 1
    bad = records[BAD_LINE]  # after the one text argument before '-'
    assert bad == {
        "input": BAD_LINE + 1,
        "text": "caf\\xe9 au lait",
        "status": "error",
        "message": f"line {BAD_LINE} of standard input is not valid UTF-8 (byte 0xe9 at "
        "position 3); save the text as UTF-8",
    }


def test_the_good_lines_are_still_predicted_as_the_keras_model_does(stdin_run, tiny_transformer):
    _, records, _ = stdin_run
    good = [record for record in records if record["status"] == "ok"]
    assert len(good) == STDIN_LINES + 2 - 1 - len(NO_KNOWN_WORD_LINES)
    expected = tiny_transformer.model.predict(
        tf.constant([record["text"] for record in good]), verbose=0
    )
    names = tiny_transformer.data.class_names
    served = np.array([[record["probabilities"][name] for name in names] for record in good])
    np.testing.assert_allclose(served, expected, atol=6e-5)
    assert [record["class"] for record in good] == [names[i] for i in expected.argmax(axis=1)]


def test_lines_without_known_words_are_warnings_with_a_guess(stdin_run):
    # Used to: unknown words got a confident class, punctuation-only text an error.
    _, records, _ = stdin_run
    for line in NO_KNOWN_WORD_LINES:
        record = records[line]
        assert record["status"] == "warning" and record["known_tokens"] == 0
        assert record["message"].startswith("no word the model knows")
        assert sum(record["probabilities"].values()) == pytest.approx(1, abs=1e-3)


def test_stderr_has_one_line_per_problem_and_no_traceback(stdin_run):
    result, _, _ = stdin_run
    warning = "has no word the model knows (empty, punctuation only, or only words outside"
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1 + len(NO_KNOWN_WORD_LINES)
    for line, number in zip(lines[:-1], sorted(NO_KNOWN_WORD_LINES), strict=True):
        assert line.startswith(f"kerasformer: warning: line {number} of standard input {warning}")
    assert lines[-1] == (
        f"kerasformer: error: line {BAD_LINE} of standard input is not valid UTF-8 "
        "(byte 0xe9 at position 3); save the text as UTF-8."
    )


@pytest.mark.slow
def test_undecodable_argument_is_an_error_entry_among_predicted_ones(tiny_transformer):
    # Used to: a traceback (UnicodeEncodeError on the surrogate escapes Python made).
    result = run_predict(str(tiny_transformer.export_dir), "team goal", b"caf\xe9", "bank")
    assert result.returncode == 1
    assert result.stderr.decode().splitlines() == [
        "kerasformer: error: text argument 2 is not valid UTF-8 (byte 0xe9 at position 3); "
        "save the text as UTF-8."
    ]
    entries = result.stdout.decode().splitlines()
    assert len(entries) == 6  # two lines per text
    assert entries[2].split() == ["ERROR", "caf\\xe9"]
    assert entries[0].endswith(" team goal") and entries[4].endswith(" bank")


@pytest.mark.slow
def test_warnings_alone_exit_0_and_are_marked_in_the_table(tiny_transformer):
    result = run_predict(str(tiny_transformer.export_dir), "📈📉🚀", "team goal")
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert result.stderr.decode().splitlines() == [
        "kerasformer: warning: text argument 1 has no word the model knows (empty, punctuation "
        "only, or only words outside its vocabulary), so its class is a guess; give text in "
        "the language the model was trained on."
    ]
    entries = result.stdout.decode().splitlines()
    assert entries[1].endswith("(a guess: no known words)")
    assert "guess" not in entries[3]


def run_with_stdin(capsys, monkeypatch, data: bytes, *argv) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    return run_cli(capsys, "predict", *argv)


def test_dash_twice_is_refused(capsys, monkeypatch, tmp_path):
    code, out, err = run_with_stdin(capsys, monkeypatch, b"a\n", str(tmp_path), "-", "x", "-")
    assert (code, out) == (2, "")
    assert err == (
        "kerasformer: error: '-' is given 2 times, but standard input can be read only "
        "once; give '-' once, where its lines belong among the inputs.\n"
    )


def test_dash_with_empty_stdin_is_refused(capsys, monkeypatch, tmp_path):
    code, out, err = run_with_stdin(capsys, monkeypatch, b"", str(tmp_path), "x", "-")
    assert (code, out) == (2, "")
    assert err == (
        "kerasformer: error: '-' reads inputs from standard input, but it was empty; pipe "
        "one input per line into it, or drop '-'.\n"
    )


def test_help_documents_records_and_exit_status(capsys):
    _, out, _ = run_cli_expecting_exit(capsys, "predict", "--help")
    help_text = " ".join(out.split())
    assert "exactly one record, in input order" in help_text
    assert (
        "exit status: 0 every input answered (warnings allowed); 1 some inputs failed; 2 "
        "nothing was read" in help_text
    )
