"""``kerasformer`` commands run in this interpreter through `kerasformer.cli.main.main`,
with what they write captured: ``(exit status, stdout, stderr)``."""

from __future__ import annotations

import io
import re
import traceback
from contextlib import redirect_stderr, redirect_stdout

import pytest

from kerasformer.cli.main import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_cli_expecting_exit(capsys, *argv):
    """For command lines that argparse ends (bad arguments, --help): the status it exits with."""
    with pytest.raises(SystemExit) as caught:
        main(list(argv))
    out, err = capsys.readouterr()
    return caught.value.code, out, err


def run_cli_in_fixture(*argv):
    """``(exit status, stdout, stderr)``; an escaping exception is status None, its traceback
    on stderr (module fixtures cannot use capsys)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exit:
            code = exit.code
        except Exception:
            traceback.print_exc()
            code = None
    return code, out.getvalue(), err.getvalue()


def assert_one_line_error(result: dict, *phrases: str) -> None:
    assert result["code"] == 2, result
    lines = [line for line in result["stderr"].splitlines() if line.strip()]
    # "kerasformer: error: ..." from kerasformer, "kerasformer train: error: ..." from argparse
    assert len(lines) == 1 and re.match(r"kerasformer( \S+)?: error: ", lines[0]), result["stderr"]
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    assert "Epoch 1/" not in result["stdout"], "it trained before refusing"


def assert_refused_in_one_line(cases: list[tuple[list, tuple[str, ...]]], cwd) -> None:
    """Run each case's ``kerasformer`` command (all in one fresh process, in ``cwd``); each
    must fail with one error line that holds the case's phrases, before any training."""
    from tests.helpers.processes import run_commands

    results = run_commands(*(argv for argv, _ in cases), cwd=cwd)
    for result, (_, phrases) in zip(results, cases, strict=True):
        assert_one_line_error(result, *phrases)
