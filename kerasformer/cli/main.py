"""Entry point of the ``kerasformer`` command: parse, dispatch, report errors in one line."""

from __future__ import annotations

import argparse
import sys

from kerasformer.cli import (
    answer,
    attention,
    convert_bert,
    distill,
    evaluate,
    export_litert,
    generate,
    predict,
    serve,
    tag,
    train,
    translate,
)
from kerasformer.cli.quiet import quiet_tensorflow

COMMANDS = tuple(
    module.COMMAND
    for module in (
        train, distill, evaluate, predict, translate, generate, answer, tag, attention,
        convert_bert, export_litert, serve,
    )
)  # fmt: skip


class OneLineErrorParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, like every other kerasformer error."""

    # The top-level parser's: each command's own parser, by the command's name.
    command_parsers: dict[str, argparse.ArgumentParser] = {}

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> OneLineErrorParser:
    parser = OneLineErrorParser(
        prog="kerasformer",
        description="Transformer text classifiers, translators and language models for Keras.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command_parser = subparsers.add_parser(
            command.name, help=command.help, description=command.description,
            formatter_class=command.formatter_class,
        )  # fmt: skip
        command.add_arguments(command_parser)
        command_parser.set_defaults(run=command.run)
    for subparser in (parser, *subparsers.choices.values()):
        subparser.add_argument(
            "--verbose",
            action="store_true",
            default=argparse.SUPPRESS,  # given before or after COMMAND, either counts
            help="show TensorFlow's own log lines (hidden by default)",
        )
    parser.command_parsers = dict(subparsers.choices)
    return parser


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line, options and inputs in any order (``predict M --json TEXT - TEXT``).

    argparse alone ends a command's TEXT list at the first option after it, so the
    command's own arguments are parsed again, intermixed, by the command's parser.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args, _ = parser.parse_known_args(argv)
    command_parser = parser.command_parsers[args.command]
    rest = argv[argv.index(args.command) + 1 :]
    parsed = command_parser.parse_intermixed_args(rest)
    parsed.command = args.command
    if getattr(args, "verbose", False):
        parsed.verbose = True
    return parsed


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    if getattr(args, "verbose", False):
        return run_command(args)
    with quiet_tensorflow():
        return run_command(args)


def run_command(args: argparse.Namespace) -> int:
    from kerasformer.errors import KerasformerError

    try:
        return args.run(args) or 0
    except KerasformerError as error:
        return fail(str(error))
    except OSError as error:
        return fail(f"{error.strerror or error} ({error.filename or 'file system'}).")
    except KeyboardInterrupt:
        return fail("interrupted.", code=130)


def fail(message: str, code: int = 2) -> int:
    print(f"kerasformer: error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
