"""`run_server`: a `ModelServer` on uvicorn, stopped gracefully by its first signal.

The first SIGTERM or SIGINT stops accepting connections, lets the requests in flight
finish (their batches included) and exits 0; a second one exits at once. uvicorn's own
handling would re-raise the signal after a graceful stop (so the exit status would be
the signal's) and forces an exit only on a second SIGINT.
"""

from __future__ import annotations

import logging
import os
import sys

import uvicorn

from kerasformer.serving.model_server import ModelServer
from kerasformer.serving.rest_api import build_app

LOG = logging.getLogger("kerasformer.serving")


class GracefulServer(uvicorn.Server):
    """uvicorn's server, with kerasformer's signal handling and its address printed."""

    def handle_exit(self, sig: int, frame) -> None:
        if self.should_exit:
            os._exit(128 + sig)  # the second signal: at once, in-flight requests or not
        self.should_exit = True

    async def startup(self, sockets=None) -> None:
        await super().startup(sockets=sockets)
        if self.should_exit or not self.servers:
            return
        host, port = self.servers[0].sockets[0].getsockname()[:2]
        address = f"http://{host}:{port}"
        print(f"kerasformer serve: listening on {address} (try the models at {address}/)",
              flush=True)  # fmt: skip


def run_server(server: ModelServer, host: str = "127.0.0.1", port: int = 8501,
               access_log: bool = False) -> int:  # fmt: skip
    """Serve ``server``'s models at ``host``:``port`` until a signal stops it.

    Args:
        server: The models to serve.
        host: The interface to listen on; loopback unless another is named.
        port: The port (0 picks a free one, printed when listening).
        access_log: Log one line per request.

    Returns:
        The exit status: 0 after a graceful stop, 1 if the port could not be opened.

    Examples:
        >>> run_server(ModelServer({}), port=-1)
        Traceback (most recent call last):
        ...
        ValueError: port must be from 0 to 65535, got -1.
    """
    if not 0 <= port <= 65535:
        raise ValueError(f"port must be from 0 to 65535, got {port}.")
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="kerasformer serve: %(message)s")  # fmt: skip
    config = uvicorn.Config(
        build_app(server), host=host, port=port, log_level="warning", access_log=access_log,
        lifespan="on", timeout_graceful_shutdown=None,
    )  # fmt: skip
    uvicorn_server = GracefulServer(config)
    uvicorn_server.run()
    return 0 if uvicorn_server.started else 1
