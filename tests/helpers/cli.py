"""``kerasformer`` commands run in this interpreter through `kerasformer.cli.main.main`,
with what they write captured: ``(exit status, stdout, stderr)``."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
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


# Runs several command lines in one interpreter (TensorFlow starts once) and prints, for
# each, its exit status, stdout and stderr as JSON; a traceback is reported as such. The
# process starts as the console script does (kerasformer_command).
DRIVER = r"""
import contextlib, io, json, os, sys, traceback
import kerasformer_command
kerasformer_command.use_tf_keras_only()
from kerasformer.cli.main import main

results = []
for case in json.loads(sys.argv[1]):
    os.chdir(case["cwd"])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(case["argv"])
        except SystemExit as stop:
            code = stop.code
        except BaseException:
            code = "traceback"
            err.write(traceback.format_exc())
    results.append({"code": code, "out": out.getvalue(), "err": err.getvalue()})
print("RESULTS " + json.dumps(results))
"""


def run_cases(cases: list[dict], timeout: int = 600) -> list[dict]:
    child = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(cases)],
        capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )  # fmt: skip
    lines = [line for line in child.stdout.splitlines() if line.startswith("RESULTS ")]
    assert lines, f"the driver died ({child.returncode}): {child.stderr[-3000:]}"
    return json.loads(lines[-1][len("RESULTS ") :])


def assert_one_line_error(result: dict, *phrases: str) -> None:
    assert result["code"] == 2, result
    lines = [line for line in result["err"].splitlines() if line.strip()]
    # "kerasformer: error: ..." from kerasformer, "kerasformer train: error: ..." from argparse
    assert len(lines) == 1 and re.match(r"kerasformer( \S+)?: error: ", lines[0]), result["err"]
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    assert "Epoch 1/" not in result["out"], "it trained before refusing"
