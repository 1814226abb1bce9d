"""What a subcommand is to `kerasformer.cli.main`: its name, texts, arguments and action."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NamedTuple


class Command(NamedTuple):
    """One ``kerasformer`` subcommand; `main` makes its parser from this alone.

    Args:
        name: The word on the command line (``train``).
        help: One line for ``kerasformer --help``.
        description: The paragraph of ``kerasformer NAME --help``.
        add_arguments: Declares the command's options on its parser.
        run: Does the work for the parsed arguments; returns the exit status.
        formatter_class: How ``--help`` lays out the description.
    """

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    formatter_class: type = argparse.HelpFormatter
