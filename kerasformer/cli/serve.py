"""``kerasformer serve``: exports behind TF Serving's REST API, with a page to try them.

The server is Starlette on uvicorn (the ``serve`` extra); nothing here imports them, or
TensorFlow, before the command runs, so ``kerasformer serve --help`` stays instant.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from kerasformer.cli.command import Command
from kerasformer.errors import KerasformerError
from kerasformer.validation import (
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
)

HELP = "serve exports over HTTP with TF Serving's REST API, and a page to try them"
DESCRIPTION = (
    "Serve each EXPORT (a kerasformer export, or a TF Serving model base path of numbered "
    "version folders) at /v1/models/NAME, as TF Serving's REST API does: GET for its "
    "status, GET .../metadata for its signatures, POST .../:predict with "
    '{"instances": [...]} or {"inputs": ...}, and the /versions/N forms. NAME is the '
    "folder's name unless given as NAME=EXPORT. The latest version is served by default; "
    "new versions are loaded as they appear, and the version before goes on serving until "
    "the new one has answered a warm-up request. Concurrent requests are batched. Open "
    "http://HOST:PORT/ for a page to try each model. Ctrl+C or SIGTERM finishes the "
    "requests in flight, then exits; a second one exits at once."
)
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "exports", nargs="+", metavar="[NAME=]EXPORT",
        help="an export directory, or NAME=EXPORT to serve it as NAME",
    )  # fmt: skip
    parser.add_argument(
        "--host", default="127.0.0.1",
        help="the interface to listen on (default %(default)s, this machine only; 0.0.0.0 for "
        "every interface)",
    )  # fmt: skip
    parser.add_argument(
        "--port", type=non_negative_int, default=8501,
        help="the port (default %(default)s, TF Serving's REST port; 0 picks a free one)",
    )  # fmt: skip
    batching = parser.add_argument_group("batching")
    batching.add_argument(
        "--no-batching", dest="batching", action="store_false",
        help="answer each request with its own call (default: concurrent requests to one "
        "model are gathered into one call)",
    )  # fmt: skip
    batching.add_argument(
        "--max-batch-size", type=positive_int, default=64,
        help="the most examples one gathered call holds (default %(default)s)",
    )  # fmt: skip
    batching.add_argument(
        "--batch-timeout-ms", type=non_negative_float, default=2.0,
        help="how long a batch waits for more requests after its first (default %(default)s)",
    )  # fmt: skip
    limits = parser.add_argument_group("limits")
    limits.add_argument(
        "--max-instances", type=positive_int, default=1024,
        help="the most examples one request may hold (default %(default)s)",
    )  # fmt: skip
    limits.add_argument(
        "--max-body-bytes", type=positive_int, default=8 * 2**20,
        help="the largest request body read, in bytes (default %(default)s: 8 MiB)",
    )  # fmt: skip
    parser.add_argument(
        "--poll-seconds", type=positive_float, default=1.0,
        help="how often each export is looked at for new versions (default %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--access-log", action="store_true", help="log one line per request (default: off)"
    )


def run(args: argparse.Namespace) -> int:
    models = served_models(args.exports)
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise KerasformerError(
            "serving needs Starlette and uvicorn; install them with "
            "pip install 'kerasformer[serve]'."
        ) from None
    from kerasformer.serving import ModelServer, ServingOptions, run_server

    options = ServingOptions(
        batching=args.batching, max_batch_size=args.max_batch_size,
        batch_timeout_ms=args.batch_timeout_ms, max_instances=args.max_instances,
        max_body_bytes=args.max_body_bytes, poll_seconds=args.poll_seconds,
    )  # fmt: skip
    return run_server(ModelServer(models, options), args.host, args.port, args.access_log)


def served_models(arguments: list[str]) -> dict[str, Path]:
    """``{name: folder}`` from ``EXPORT`` and ``NAME=EXPORT`` arguments, checked."""
    models: dict[str, Path] = {}
    for argument in arguments:
        name, separator, path = argument.partition("=")
        if not separator or not NAME.fullmatch(name):
            name, path = Path(argument).resolve().name, argument
        if not NAME.fullmatch(name):
            raise KerasformerError(
                f"{name!r} cannot be a model name in a URL; serve it as NAME={argument} with a "
                "name of letters, digits, '.', '_' and '-'."
            )
        if name in models:
            raise KerasformerError(
                f"two exports would be served as {name!r}; name one with NAME=EXPORT."
            )
        folder = Path(path)
        if not folder.is_dir():
            raise KerasformerError(f"{folder} is not a directory; give an export directory.")
        models[name] = folder
    return models


COMMAND = Command("serve", HELP, DESCRIPTION, add_arguments, run)
