"""``kerasformer serve`` when things go wrong, through real HTTP on loopback.

Bad requests get TF Serving's ``{"error": "..."}`` with 400 (404 for what is not served)
and leave the server answering the next request as before; a model that fails to load is
reported while the others serve; the first SIGTERM finishes the requests in flight and a
second exits at once; and no part of a request reaches the file system: the server runs
under a Python audit hook that records every file-system event (`AUDIT_HOOK`).
"""

from __future__ import annotations

import base64
import http.client
import json
import shutil
import signal
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.helpers.served import ServerProcess

pytestmark = pytest.mark.slow

MAX_INSTANCES = 8
MAX_BODY_BYTES = 4096
# Every file-system event of the server process, one line each (event, then its arguments),
# written with os.write: no lock a signal handler could wait on, and no audit event of its
# own. Python raises no event for a stat, so os.stat, os.lstat and os.access (which
# os.path and pathlib call) are wrapped to record theirs. Then the console script's main,
# with the arguments after the log's path.
AUDIT_HOOK = """
import os, sys
log = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
PREFIXES = ("os.", "shutil.", "glob.", "tempfile.", "pathlib.", "subprocess.")

def record(event, args):
    if event == "open" or event.startswith(PREFIXES):
        try:
            os.write(log, f"{event} {args!r}\\n".encode("utf-8", "backslashreplace"))
        except OSError:
            pass  # a hook must never fail the call it watches

def recorded(name, call):
    def call_recorded(path, *args, **kwargs):
        record(name, (path,))
        return call(path, *args, **kwargs)
    return call_recorded

for name in ("stat", "lstat", "access"):
    setattr(os, name, recorded(f"os.{name}", getattr(os, name)))
sys.addaudithook(record)
from kerasformer_command import main
sys.exit(main(sys.argv[2:]))
"""
# In the name of a file no request may reach: no recorded event may name it.
MARKER = "kf-marker-5e1d"
# Requests each model answers before any bad one, and must answer the same way after.
GOOD = {
    "classifier": {"instances": ["Shares rose after the bank's profits", "The striker scored"]},
    "question_answerer": {"instances": [
        {"question": "Where did Bob go?", "context": "Bob went home after work."}]},
}  # fmt: skip
# id: (model, body: JSON or raw bytes, what the error message must say)
BAD_REQUESTS = {
    "malformed_json": ("classifier", b'{"instances": ["a", ', "not json"),
    "number_for_a_string": ("classifier", {"instances": ["a", 42]}, "instance 1 is a number"),
    "missing_key": ("question_answerer", {"instances": [{"question": "Who?"}]}, "'context'"),
    "nested_list": ("classifier", {"instances": [["a", "b"]]}, "is a list"),
    "not_utf8": ("classifier", b'{"instances": ["caf\xe9"]}', "not utf-8"),
    "empty_instances": ("classifier", {"instances": []}, "empty"),
    "too_many_instances": (
        "classifier", {"instances": ["a"] * (MAX_INSTANCES + 1)}, "--max-instances"),
    "body_too_large": ("classifier", {"instances": ["x" * MAX_BODY_BYTES]}, "--max-body-bytes"),
    # Under the body limit, but deeper than Python's json parser recurses.
    "nested_too_deeply": ("classifier", b'{"instances": ' + b"[" * 3000, "nested too deeply"),
    "unknown_signature": (
        "classifier", {"signature_name": "beam", "instances": ["a"]}, "no signature 'beam'"),
}  # fmt: skip
# Translator requests that keep the server busy for seconds (a few hundred beam searches).
TEXTS = ["Where is the station?", "I like tea.", "The cat sleeps.", "We go home now."]
SLOW_REQUESTS, SLOW_INSTANCES = 4, 256


class AuditedServer(ServerProcess):
    """`ServerProcess` whose server writes every file-system event to ``log`` (`AUDIT_HOOK`)."""

    def __init__(self, log: Path, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.args = [sys.executable, "-c", AUDIT_HOOK, str(log), *self.args[1:]]


@pytest.fixture(scope="module")
def damaged(exports, tmp_path_factory) -> dict[str, Path]:
    """Copies of the classifier that cannot load: half its variables, or a garbage graph."""
    root = tmp_path_factory.mktemp("damaged")
    short = shutil.copytree(exports["classifier"], root / "short_variables")
    (shard,) = (short / "variables").glob("variables.data-*")
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    garbage = shutil.copytree(exports["classifier"], root / "garbage_graph")
    (garbage / "saved_model.pb").write_bytes(b"not a SavedModel\n" * 64)
    return {"short_variables": short, "garbage_graph": garbage}


@pytest.fixture(scope="module")
def server(exports, damaged, tmp_path_factory):
    """A classifier, a question answerer and the damaged copies, audited and with small limits.

    ``answers`` holds what the good requests get before any bad one is sent.
    """
    log = tmp_path_factory.mktemp("audit") / "file-events.log"
    served = [f"{kind}={exports[kind]}" for kind in GOOD]
    served += [f"{name}={path}" for name, path in damaged.items()]
    with AuditedServer(log, *served, "--max-instances", MAX_INSTANCES,
                       "--max-body-bytes", MAX_BODY_BYTES) as running:  # fmt: skip
        running.audit_log = log
        running.answers = {model: good_answer(running, model) for model in GOOD}
        yield running


def good_answer(server: ServerProcess, model: str) -> dict:
    status, answer = server.request(f"/v1/models/{model}:predict", GOOD[model])
    assert status == 200, answer
    return answer


def assert_still_serving(server: ServerProcess) -> None:
    """Each good request gets 200 and the answer it got before anything went wrong."""
    for model in GOOD:
        assert good_answer(server, model) == server.answers[model]


def post(url: str, path: str, body, timeout: float = 60):
    """``(status, JSON)`` of a POST sent with http.client: bytes, JSON, or an iterable of
    chunks (sent chunked, with no Content-Length)."""
    address = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=timeout)
    try:
        chunked = not isinstance(body, bytes | dict | list)
        data = json.dumps(body).encode() if isinstance(body, dict | list) else body
        connection.request("POST", path, data, {"Content-Type": "application/json"},
                           encode_chunked=chunked)  # fmt: skip
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


@pytest.mark.parametrize("case", BAD_REQUESTS)
def test_a_bad_request_gets_400_naming_its_problem_and_the_server_goes_on(server, case):
    model, body, words = BAD_REQUESTS[case]
    status, answer = post(server.url, f"/v1/models/{model}:predict", body)
    assert status == 400, answer
    assert list(answer) == ["error"]
    assert words.lower() in answer["error"].lower()
    assert_still_serving(server)


def test_a_chunked_body_over_the_limit_is_refused_as_it_streams(server):
    # No Content-Length to refuse it by: the count of bytes read must stop it.
    chunks = iter([b'{"instances": ["', *[b"x" * 512] * 16, b'"]}'])
    status, answer = post(server.url, "/v1/models/classifier:predict", chunks)
    assert status == 400
    assert "--max-body-bytes" in answer["error"]
    assert_still_serving(server)


@pytest.mark.parametrize(
    ("method", "path", "words"),
    [
        ("POST", "/v1/models/nope:predict", ["'nope'", "classifier, garbage_graph"]),
        ("GET", "/v1/models/nope", ["'nope'", "question_answerer"]),
        ("GET", "/v1/models/nope/metadata", ["'nope'", "short_variables"]),
        ("POST", "/v1/models/classifier/versions/7:predict", ["no version '7'", "versions: 1"]),
        ("GET", "/v1/models/classifier/versions/7", ["no version '7'", "versions: 1"]),
        ("GET", "/v1/models/classifier/versions/7/metadata", ["no version '7'", "versions: 1"]),
        ("GET", "/v1/elsewhere", ["/v1/elsewhere", "classifier"]),
    ],
)
def test_what_is_not_served_gets_404_naming_what_is(server, method, path, words):
    body = GOOD["classifier"] if method == "POST" else None
    status, answer = server.request(path, body, method=method)
    assert status == 404, answer
    assert all(word in answer["error"] for word in words), answer["error"]


@pytest.mark.parametrize(
    ("model", "words"),
    [("short_variables", "variables.data-"), ("garbage_graph", "saved_model.pb")],
)
def test_a_model_that_failed_to_load_is_reported_while_the_others_serve(server, model, words):
    status, answer = server.request(f"/v1/models/{model}")
    assert status == 200, answer
    (version,) = answer["model_version_status"]
    assert (version["version"], version["state"]) == ("1", "END")
    assert version["status"]["error_code"] != "OK"
    assert "failed to load" in version["status"]["error_message"]
    assert words in version["status"]["error_message"]
    # Its predictions are refused at once with the reason, not left waiting.
    started = time.monotonic()
    status, answer = server.request(f"/v1/models/{model}:predict", GOOD["classifier"], timeout=30)
    assert time.monotonic() - started < 10
    assert status == 503, answer
    assert f"model {model!r} has no version to serve" in answer["error"]
    assert words in answer["error"]
    assert_still_serving(server)


def hostile_paths(marker: Path) -> list[str]:
    """URL paths naming the marker file as a model, a version, or a file to serve."""
    absolute = str(marker)
    quoted = urllib.parse.quote(absolute, safe="")
    climb = urllib.parse.quote("../" * 12 + absolute.lstrip("/"), safe="")
    return [
        f"/v1/models/{quoted}", f"/v1/models/{quoted}:predict", f"/v1/models/{quoted}/metadata",
        f"/v1/models/..%2F..%2F{quoted}:predict", f"/v1/models/{climb}",
        f"/v1/models/classifier/versions/{quoted}", f"/v1/models/classifier/versions/{climb}",
        f"/v1/models/classifier/versions/..%2F{quoted}:predict",
        f"/v1/models/classifier/versions/{quoted}/metadata",
        f"/kerasformer/models/{quoted}/attention", f"/kerasformer/{quoted}", f"/{quoted}",
        f"/kerasformer/plotly.min.js/..%2F..%2F{quoted}", f"/..%2F..{absolute}",
    ]  # fmt: skip


def hostile_bodies(marker: Path) -> list[dict]:
    """Predict bodies whose strings, bytes, signature and input names are the marker's path."""
    absolute = str(marker)
    climb = "../" * 12 + absolute.lstrip("/")
    encoded = base64.b64encode(absolute.encode()).decode()
    return [
        {"instances": [absolute, climb, f"file://{absolute}", {"b64": encoded}]},
        {"inputs": [absolute, {"b64": encoded}]},
        {"signature_name": absolute, "instances": ["a"]},
        {"signature_name": climb, "instances": ["a"]},
        {"instances": [{absolute: "a"}]},
        {"inputs": {absolute: ["a"]}},
    ]


def test_no_part_of_a_request_reaches_the_file_system(server, exports, tmp_path):
    marker = tmp_path / f"{MARKER}.txt"
    marker.write_text("left alone\n")
    before = marker.stat().st_mtime_ns
    statuses = []
    for path in hostile_paths(marker):
        for method in ("GET", "POST"):
            body = hostile_bodies(marker)[0] if method == "POST" else None
            statuses.append(server.request(path, body, method=method)[0])
    for body in hostile_bodies(marker):
        for path in ("/v1/models/classifier:predict", "/v1/models/classifier/versions/1:predict"):
            statuses.append(server.request(path, body)[0])
    # The one route that reads files (the export's Keras model) draws the path's attention.
    status, answer = server.request("/kerasformer/models/classifier/attention",
                                    {"text": str(marker)}, timeout=120)  # fmt: skip
    assert status == 200 and answer["maps"], answer
    # The raw request target, with its dots as they are (urllib would send them the same).
    statuses.append(post(server.url, f"/v1/models/../../..{marker}:predict", {"instances": []})[0])
    # The classifier answers paths as text; everything else is refused, and nothing crashes.
    assert 200 in statuses and 400 in statuses and 404 in statuses
    assert set(statuses) <= {200, 400, 404, 405}, statuses
    assert_still_serving(server)
    events = server.audit_log.read_text(encoding="utf-8")
    # The hook records: the server listed and opened its own exports.
    assert str(exports["classifier"]) in events
    assert [line for line in events.splitlines() if MARKER in line] == []
    assert marker.read_text() == "left alone\n"
    assert marker.stat().st_mtime_ns == before
    assert sorted(path.name for path in tmp_path.iterdir()) == [marker.name]


def start_slow_requests(server: ServerProcess, pool: ThreadPoolExecutor) -> list:
    """`SLOW_REQUESTS` beam searches sent and in the server when this returns; their futures."""
    sent = threading.Semaphore(0)
    address = urllib.parse.urlsplit(server.url)
    body = json.dumps({"signature_name": "beam_search",
                       "instances": TEXTS * (SLOW_INSTANCES // len(TEXTS))})  # fmt: skip

    def ask():
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=120)
        try:
            connection.request("POST", "/v1/models/translator:predict", body,
                               {"Content-Type": "application/json"})  # fmt: skip
            sent.release()
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    futures = [pool.submit(ask) for _ in range(SLOW_REQUESTS)]
    for _ in futures:
        assert sent.acquire(timeout=30)
    # Answered after every slow request was sent: the server has read them all by now.
    assert server.request("/v1/models/translator")[0] == 200
    time.sleep(0.3)
    return futures


def test_sigterm_finishes_the_requests_in_flight_then_exits_0(exports):
    with ServerProcess(exports["translator"]) as server:
        status, reference = server.request(
            "/v1/models/translator:predict", {"signature_name": "beam_search", "instances": TEXTS}
        )
        assert status == 200, reference
        with ThreadPoolExecutor(SLOW_REQUESTS) as pool:
            futures = start_slow_requests(server, pool)
            server.process.send_signal(signal.SIGTERM)
            # Still running while it finishes them: the stop is graceful, not immediate.
            assert not all(future.done() for future in futures)
            answers = [future.result(timeout=300) for future in futures]
        code = server.process.wait(60)
    full = reference["predictions"] * (SLOW_INSTANCES // len(TEXTS))
    assert [status for status, _ in answers] == [200] * SLOW_REQUESTS
    assert all(answer == {"predictions": full} for _, answer in answers)
    assert code == 0, server.output()[-3000:]


def test_a_second_sigterm_exits_at_once(exports):
    with ServerProcess(exports["translator"]) as server:
        with ThreadPoolExecutor(SLOW_REQUESTS) as pool:
            futures = start_slow_requests(server, pool)
            server.process.send_signal(signal.SIGTERM)
            time.sleep(0.2)
            server.process.send_signal(signal.SIGTERM)
            stopped = time.monotonic()
            code = server.process.wait(10)
            waited = time.monotonic() - stopped
            outcomes = [future.exception(timeout=60) or future.result()[0] for future in futures]
    assert waited < 2, f"{waited:.1f} s after the second signal"
    assert code == 128 + signal.SIGTERM
    # Cut off: some requests in flight got no answer at all.
    assert any(isinstance(outcome, Exception) for outcome in outcomes), outcomes
