"""The command-line reference page, made from the `kerasformer` command's own parsers.

Imported by ``gen_pages.py`` at build time and by ``tests/docs/test_cli_reference.py``,
which checks every section against ``kerasformer ... --help`` run as a user runs it.
"""

from __future__ import annotations

import os

# The width `--help` is drawn at here; the test runs each `kerasformer ... --help` at the
# same COLUMNS and compares.
HELP_COLUMNS = 100


def command_help_texts() -> dict[str, str]:
    """``kerasformer --help`` and each command's ``--help``, as argparse prints them at
    ``HELP_COLUMNS`` columns, keyed by the command line that prints them."""
    from kerasformer.cli.main import build_parser

    parser = build_parser()
    # argparse reads the width from COLUMNS each time it formats.
    columns, os.environ["COLUMNS"] = os.environ.get("COLUMNS"), str(HELP_COLUMNS)
    try:
        texts = {"kerasformer --help": parser.format_help()}
        for name, command in parser.command_parsers.items():
            texts[f"kerasformer {name} --help"] = command.format_help()
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return texts


def cli_reference() -> str:
    sections = [
        "# Command-line reference",
        "",
        "Generated from the `kerasformer` command's own parsers when the site is built, so",
        "it is what `--help` prints (`tests/docs/test_cli_reference.py` checks each page",
        "against the installed command). The [command-line guide](../command-line.md) says",
        "how the commands fit together.",
        "",
    ]
    for command_line, text in command_help_texts().items():
        title = command_line.removesuffix(" --help")
        sections += [f"## `{title}`", "", "```text", text.rstrip(), "```", ""]
    return "\n".join(sections)
