"""A soak of ``kerasformer serve``: 10,000 requests, 1% of them malformed, to one classifier.

A few clients, each on one persistent connection, send them at once. Every good request
must get the classifier's own answer (its SavedModel run in this process, independent of
the server), every bad one a 400, and the server's resident memory must stay flat from
the first thousand requests to the last.
"""

from __future__ import annotations

import http.client
import itertools
import json
import os
import threading
import time
import urllib.parse
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.served import ServerProcess

pytestmark = pytest.mark.slow

REQUESTS, CLIENTS = 10_000, 4
# Resident memory after this many requests is the baseline; after the last, the end.
WARM = 1_000
GROWTH = 0.10
TEXTS = [f"Shares in company {number} rose after profits beat forecasts, and the striker "
         f"scored {number % 7} goals" for number in range(40)]  # fmt: skip
# One request in a hundred is one of these (body, what the error says).
MALFORMED = [
    (b'{"instances": ["unfinished', "not json"),
    (b'{"instances": [7]}', "a number"),
    (b'{"instances": []}', "empty"),
    (b'{"instances": ["caf\xe9"]}', "utf-8"),
]


def reference_answers(export: Path) -> list[dict]:
    """Each of `TEXTS` as the SavedModel's ``serving_default`` answers it in this process."""
    import tensorflow as tf

    function = tf.saved_model.load(str(export)).signatures["serving_default"]
    outputs = {name: value.numpy() for name, value in function(inputs=tf.constant(TEXTS)).items()}
    return [
        {
            "probabilities": outputs["probabilities"][row],
            "known_tokens": int(outputs["known_tokens"][row]),
            "predicted_class": outputs["predicted_class"][row].decode(),
        }
        for row in range(len(TEXTS))
    ]


def resident_bytes(pid: int) -> int:
    """VmRSS of the process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def request_body(index: int) -> tuple[bytes, str | None]:
    """Request ``index``'s body, and what its error says where it is malformed (else None)."""
    if index % 100 == 50:
        return MALFORMED[index // 100 % len(MALFORMED)]
    return json.dumps({"instances": [TEXTS[index % len(TEXTS)]]}).encode(), None


def wrong_answer(index: int, status: int, answer: dict, reference: list[dict]) -> str | None:
    """What is wrong with request ``index``'s answer, or None."""
    _, error = request_body(index)
    if error is not None:
        right = status == 400 and list(answer) == ["error"] and error in answer["error"].lower()
        return None if right else f"request {index} (malformed): {status} {answer}"
    expected = reference[index % len(TEXTS)]
    if status != 200 or len(answer.get("predictions", [])) != 1:
        return f"request {index}: {status} {answer}"
    (found,) = answer["predictions"]
    if (
        found["predicted_class"] != expected["predicted_class"]
        or found["known_tokens"] != expected["known_tokens"]
        or not np.allclose(found["probabilities"], expected["probabilities"], atol=1e-5)
    ):
        return f"request {index}: {found}, expected {expected}"
    return None


class Soak:
    """`CLIENTS` threads sending `REQUESTS` requests in all, one connection each."""

    def __init__(self, url: str, pid: int, reference: list[dict]):
        self.address = urllib.parse.urlsplit(url)
        self.pid, self.reference = pid, reference
        self.indices = itertools.count()
        self.lock = threading.Lock()
        self.done = 0
        self.warm_rss: int | None = None
        self.wrong: list[str] = []

    def run(self) -> float:
        """Send them all; the seconds it took."""
        started = time.monotonic()
        clients = [threading.Thread(target=self.client) for _ in range(CLIENTS)]
        for client in clients:
            client.start()
        for client in clients:
            client.join()
        return time.monotonic() - started

    def client(self) -> None:
        connection = http.client.HTTPConnection(self.address.hostname, self.address.port,
                                                timeout=60)  # fmt: skip
        try:
            while (index := next(self.indices)) < REQUESTS:
                body, _ = request_body(index)
                connection.request("POST", "/v1/models/classifier:predict", body,
                                   {"Content-Type": "application/json"})  # fmt: skip
                response = connection.getresponse()
                self.answered(index, response.status, json.loads(response.read()))
        except Exception as error:  # a dropped connection: recorded, and this client stops
            with self.lock:
                self.wrong.append(f"client failed: {error!r}")
        finally:
            connection.close()

    def answered(self, index: int, status: int, answer: dict) -> None:
        problem = wrong_answer(index, status, answer, self.reference)
        with self.lock:
            if problem:
                self.wrong.append(problem)
            self.done += 1
            if self.done == WARM:
                self.warm_rss = resident_bytes(self.pid)


def test_ten_thousand_requests_get_their_answers_and_memory_stays_flat(exports):
    reference = reference_answers(exports["classifier"])
    with ServerProcess(f"classifier={exports['classifier']}") as server:
        pid = server.process.pid
        # The process measured is the server itself, Python with TensorFlow loaded.
        assert "python" in os.readlink(f"/proc/{pid}/exe")
        soak = Soak(server.url, pid, reference)
        seconds = soak.run()
        end_rss = resident_bytes(pid)
    assert soak.wrong == [], f"{len(soak.wrong)} wrong, first: {soak.wrong[:5]}"
    assert soak.done == REQUESTS
    change = end_rss / soak.warm_rss - 1
    print(
        f"\nsoak: {REQUESTS} requests ({REQUESTS // 100} malformed) from {CLIENTS} clients in "
        f"{seconds:.1f} s, {REQUESTS / seconds:.0f} requests/s; server RSS "
        f"{soak.warm_rss / 2**20:.1f} MiB after {WARM}, {end_rss / 2**20:.1f} MiB after "
        f"{REQUESTS} ({change:+.1%})"
    )
    assert soak.warm_rss > 200 * 2**20, "not the server's memory: TensorFlow alone is more"
    assert abs(change) <= GROWTH
