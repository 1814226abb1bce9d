"""Fail fast, with the fix in the message, when a download host cannot be reached.

Offline, TensorFlow Datasets and TF-Hub retry for minutes before giving up; a TCP
connection attempt answers in seconds.
"""

from __future__ import annotations

import socket
from urllib.parse import urlparse

from kerasformer.errors import KerasformerError

TIMEOUT_SECONDS = 5.0


def is_url(handle: str) -> bool:
    return urlparse(str(handle)).scheme in ("http", "https")


def require_reachable(url: str, what: str, fix: str) -> None:
    """Raise a one-line error naming ``what`` could not be fetched and ``fix``."""
    parsed = urlparse(url)
    host = parsed.hostname
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=TIMEOUT_SECONDS).close()
    except OSError as error:
        raise KerasformerError(
            f"cannot download {what} ({host} is unreachable: {error}); {fix}"
        ) from None
