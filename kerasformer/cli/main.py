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
    generate,
    predict,
    train,
    translate,
)

COMMANDS = (
    train, distill, evaluate, predict, translate, generate, answer, attention, convert_bert
)  # fmt: skip


class OneLineErrorParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, like every other kerasformer error."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
        prog="kerasformer",
        description="Transformer text classifiers, translators and language models for Keras.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from kerasformer.errors import KerasformerError
    from kerasformer.layers import backend

    if backend.KERAS_VERSION != 2:
        return fail(
            f"{backend.ENVIRONMENT_VARIABLE}=3 makes kerasformer's layers Keras 3 layers, but "
            "the kerasformer command trains and exports with tf-keras; unset "
            f"{backend.ENVIRONMENT_VARIABLE} to run it."
        )

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
