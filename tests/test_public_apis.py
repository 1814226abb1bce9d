"""The package uses the public APIs of TensorFlow and argparse, never their private parts,
which change without notice between releases."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "kerasformer"
# TensorFlow's internal namespace, and argparse's private attributes (a leading underscore
# after a parser or an action).
PRIVATE = re.compile(r"tf\.__internal__|\._subparsers\b|\._group_actions\b|\._actions\b")


def test_no_module_of_the_package_reaches_into_a_private_api():
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if PRIVATE.search(line)
    ]
    assert not found, "\n".join(found)


def test_each_command_parser_is_reached_through_the_public_mapping():
    from kerasformer.cli.main import build_parser

    parser = build_parser()
    assert set(parser.command_parsers) >= {"train", "predict", "tag", "answer", "evaluate"}
    train = parser.command_parsers["train"]
    assert train.prog.endswith("train")
    assert "--task" in train.format_help()
