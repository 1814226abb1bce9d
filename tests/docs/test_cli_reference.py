"""The command-line reference page is what ``--help`` prints: each section of the page the
docs build generates equals the installed ``kerasformer`` command's own help, run as a
user runs it."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "scripts" / "cli_reference.py"


def load_generator():
    spec = importlib.util.spec_from_file_location("cli_reference", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = load_generator()
COMMAND_LINES = list(GENERATOR.command_help_texts())


def printed_help(command_line: str) -> str:
    executable = shutil.which("kerasformer")
    assert executable, "the kerasformer console script is not installed (pip install -e .)"
    arguments = command_line.split()[1:]
    result = subprocess.run(
        [executable, *arguments], capture_output=True, text=True, timeout=60,
        env={**os.environ, "COLUMNS": str(GENERATOR.HELP_COLUMNS)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_reference_covers_the_top_level_help_and_every_command():
    # The command list: the lines indented by four under "COMMAND", before the options.
    listing = printed_help("kerasformer --help").split("\n  COMMAND\n", 1)[1].split("\n\n")[0]
    commands = [line.split()[0] for line in listing.splitlines() if line[4] != " "]
    assert COMMAND_LINES == ["kerasformer --help"] + [f"kerasformer {c} --help" for c in commands]
    assert len(commands) >= 11


@pytest.mark.parametrize("command_line", COMMAND_LINES)
def test_reference_section_is_what_help_prints(command_line):
    page = GENERATOR.cli_reference()
    title = command_line.removesuffix(" --help")
    section = page.split(f"## `{title}`\n", 1)[1].split("\n## ", 1)[0]
    assert section.strip() == f"```text\n{printed_help(command_line).rstrip()}\n```"
