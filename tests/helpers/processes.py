"""Code and ``kerasformer`` commands run in a fresh interpreter, as a user's would run.

There, nothing has imported TensorFlow, tensorflow_text or kerasformer's layers before the
code does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# The start of code for `run_python` that must do without kerasformer: from there on,
# importing it fails, as it does where only TensorFlow serves an export.
WITHOUT_KERASFORMER = """
import sys
from pathlib import Path

class NoKerasformer:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "kerasformer":
            raise ImportError("kerasformer must not be needed to serve an exported model")

sys.meta_path.insert(0, NoKerasformer())
"""

# Runs several command lines in one interpreter, to pay TensorFlow's start-up once, each
# in its own working directory if it names one, and prints each one's exit status, stdout
# and stderr as JSON. SystemExit (argparse's) gives its status, as the console script
# would; any other exception escaping main() is the status "crash", its traceback on
# stderr. The process starts, and runs each command, as the console script does
# (kerasformer_command).
COMMANDS_IN_ONE_PROCESS = """
import contextlib, io, json, os, sys, traceback
import kerasformer_command
kerasformer_command.use_tf_keras_only()
{imports}
from kerasformer_command import main

results = []
for case in json.loads(sys.argv[1]):
    if case["cwd"] is not None:
        os.chdir(case["cwd"])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(case["argv"])
        except SystemExit as stop:
            code = stop.code
        except BaseException:  # a crash is what these tests look for: record it
            traceback.print_exc()
            code = "crash"
    results.append({{"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}})
print("RESULTS " + json.dumps(results))
"""


# Runs each command line in turn and records, after each, its exit status, its stdout and
# stderr, and which of the modules named in argv[2] are in sys.modules. Modules stay
# imported, so the first case that imports one is the one a test names.
EACH_COMMAND_LINE = """
import contextlib, io, json, sys
import kerasformer_command
kerasformer_command.use_tf_keras_only()
from kerasformer_command import main

heavy = json.loads(sys.argv[2])
found = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code
    found.append({"argv": argv, "code": code, "stdout": out.getvalue(),
                  "stderr": err.getvalue(),
                  "heavy": [name for name in heavy if name in sys.modules]})
print(json.dumps(found))
"""


def environment(tf_log_level: str | None = "2") -> dict[str, str]:
    """This process's environment, with TensorFlow's C++ log level set (None: as it is)."""
    if tf_log_level is None:
        return dict(os.environ)
    return {**os.environ, "TF_CPP_MIN_LOG_LEVEL": tf_log_level}


def run_python(
    code: str, *args: str, timeout: int = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run code in a fresh interpreter, as a user's separate process would, with this
    process's environment and ``env`` on top of it."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**environment(), **(env or {})},
    )


def run_python_json(code: str, *args: str, timeout: int = 300, env: dict[str, str] | None = None):
    """What ``code`` prints last, read as JSON; the fresh interpreter must exit with 0."""
    result = run_python(code, *args, timeout=timeout, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def run_commands(
    *commands: list, cwd: str | Path | None = None, imports: tuple[str, ...] = (),
    timeout: int = 300,
) -> list[dict]:  # fmt: skip
    """Exit status, stdout and stderr of each ``kerasformer`` command, in one fresh process.

    ``cwd`` is the working directory of every command (None: this process's). ``imports``
    are modules imported before any command runs (their import-time output then stays
    out of the first command's).
    """
    cases = [{"cwd": cwd, "argv": command} for command in commands]
    return run_cases(cases, imports=imports, timeout=timeout, tf_log_level="2")


def run_cases(
    cases: list[dict], imports: tuple[str, ...] = (), timeout: int = 600,
    tf_log_level: str = "3",
) -> list[dict]:  # fmt: skip
    """`run_commands` for commands that each have their own working directory: each case
    is ``{"argv": [...], "cwd": DIR or None}``."""
    code = COMMANDS_IN_ONE_PROCESS.format(
        imports="\n".join(f"import {module}" for module in imports)
    )
    cases = [
        {
            "cwd": None if case["cwd"] is None else str(case["cwd"]),
            "argv": list(map(str, case["argv"])),
        }
        for case in cases
    ]
    child = subprocess.run(
        [sys.executable, "-c", code, json.dumps(cases)],
        capture_output=True, text=True, timeout=timeout, env=environment(tf_log_level),
    )  # fmt: skip
    lines = [line for line in child.stdout.splitlines() if line.startswith("RESULTS ")]
    assert lines and child.returncode == 0, (
        f"the process died ({child.returncode}): {child.stderr[-3000:]}"
    )
    return json.loads(lines[-1][len("RESULTS ") :])


def run_kerasformer(
    *args, stdin: bytes | None = None, text: bool = True, tf_log_level: str | None = "2",
    timeout: int = 300,
) -> subprocess.CompletedProcess:  # fmt: skip
    """``python -m kerasformer_command ARGS`` (what the ``kerasformer`` console script
    runs) in a fresh interpreter, as from a shell.

    ``stdin`` is fed to it (None: this process's standard input is inherited); with
    ``text=False`` arguments, input and output are raw bytes. ``tf_log_level`` is the
    TF_CPP_MIN_LOG_LEVEL it runs with (None: the one of this environment, if any).
    """
    return subprocess.run(
        [sys.executable, "-m", "kerasformer_command", *args],
        input=stdin,
        capture_output=True,
        text=text,
        timeout=timeout,
        env=environment(tf_log_level),
    )


def run_saved_model_cli(export_dir, input_exprs: str) -> subprocess.CompletedProcess:
    """``saved_model_cli run`` (the console script TensorFlow installs) on the export's
    ``serving_default`` signature, given ``--input_exprs``."""
    cli = shutil.which("saved_model_cli")
    assert cli, "saved_model_cli comes with tensorflow"
    return subprocess.run(
        [cli, "run", "--dir", str(export_dir), "--tag_set", "serve",
         "--signature_def", "serving_default", "--input_exprs", input_exprs],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def run_console_script(
    *args, cwd: Path | None = None, stdin: str | None = None, timeout: int = 900
) -> subprocess.CompletedProcess:
    """The installed ``kerasformer`` console script, as a user types it: TensorFlow's
    logging left as it is. ``cwd`` None: this process's working directory."""
    command = shutil.which("kerasformer")
    assert command, "the kerasformer console script is not installed (pip install -e .)"
    return subprocess.run(
        [command, *map(str, args)], cwd=cwd, input=stdin, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


def run_each_recording_imports(command_lines: list[list[str]], modules: tuple[str, ...]):
    """Each ``kerasformer`` command line run in turn in one fresh interpreter: its exit
    status, stdout, stderr, and which of ``modules`` were imported by then."""
    command_lines = [[str(word) for word in argv] for argv in command_lines]
    return run_python_json(EACH_COMMAND_LINE, json.dumps(command_lines), json.dumps(modules))
