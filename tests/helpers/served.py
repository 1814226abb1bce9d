"""``kerasformer serve`` as a user runs it: the console script in its own process, on loopback.

`ServerProcess` starts the command with ``--port 0``, reads the address it prints, and
talks to it with plain HTTP (`request_json`); leaving the ``with`` block sends SIGTERM
and waits for the exit. `serving_exports` writes one tiny export of every kind, once
per test run, for every test that serves them.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.helpers.made_once import made_once
from tests.helpers.processes import environment, run_commands

LISTENING = re.compile(r"listening on (http://\S+) ")
# One export of each kind the server serves, as the tests name them.
KINDS = ("classifier", "multi_label", "translator", "language_model", "tagger",
         "question_answerer")  # fmt: skip
SMALL = ["--epochs", "1", "--embed-dim", "8", "--num-heads", "2", "--ff-dim", "8"]


def serving_exports(tmp_path_factory) -> dict[str, Path]:
    """``{kind: export}``: tiny exports of every kind, trained once per test run."""
    root = made_once(tmp_path_factory, "serving-exports", write_serving_exports)
    return {kind: root / "exports" / kind for kind in KINDS}


def write_serving_exports(root: Path) -> None:
    from tests.cli.test_train_own_data import write_tagged_csv
    from tests.docs.example_workspace import write_bert_checkpoint, write_shared_data

    data = root / "data"
    write_shared_data(data)
    write_bert_checkpoint(root / "bert")
    write_tagged_csv(root / "tags.csv")
    exports = root / "exports"
    commands = [
        ["train", "--dataset", "ag_news", "--data-dir", data / "ag_news_csv", "--maxlen", "32",
         "--vocab-size", "500", *SMALL, "--export-dir", exports / "classifier"],
        ["train", "--train-file", root / "tags.csv", "--text-column", "body", "--label-column",
         "tags", "--multi-label", "--maxlen", "16", "--vocab-size", "200", *SMALL,
         "--export-dir", exports / "multi_label"],
        ["train", "--task", "translation", "--data-dir", data / "spa-eng", *SMALL,
         "--export-dir", exports / "translator"],
        ["train", "--task", "language-model", "--data-dir", data / "wikitext-2", *SMALL,
         "--export-dir", exports / "language_model"],
        ["train", "--task", "ner", "--model", "rnn", "--data-dir", data / "conll2003",
         "--epochs", "1", "--embed-dim", "8", "--units", "8", "--serving-version", "1",
         "--export-dir", exports / "tagger"],
        ["convert-bert", root / "bert", "--out", root / "hub"],
        ["train", "--task", "question-answering", "--data-dir", data / "squad",
         "--preprocess", root / "hub" / "preprocess", "--encoder", root / "hub" / "encoder",
         "--seq-length", "64", "--doc-stride", "32", "--epochs", "1", "--batch-size", "16",
         "--export-dir", exports / "question_answerer"],
    ]  # fmt: skip
    results = run_commands(*commands, cwd=root, timeout=900)
    for command, result in zip(commands, results, strict=True):
        assert result["code"] == 0, f"{command}: {result['stderr'][-2000:]}"


class ServerProcess:
    """``kerasformer serve ARGS --port 0`` in a process of its own.

    ``url`` is the address it printed; ``output()`` is what it printed so far (stdout and
    stderr together). ``startup_timeout`` bounds the wait for the address.
    """

    def __init__(self, *args, cwd: Path | None = None, startup_timeout: float = 180):
        command = shutil.which("kerasformer")
        assert command, "the kerasformer console script is not installed (pip install -e .)"
        self.args = [command, "serve", *map(str, args), "--port", "0"]
        self.cwd = cwd
        self.startup_timeout = startup_timeout
        self.lines: list[str] = []
        self.url: str | None = None
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> ServerProcess:
        self.process = subprocess.Popen(
            self.args, cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env=environment("2"),
        )  # fmt: skip
        found = threading.Event()
        threading.Thread(target=self._read, args=(found,), daemon=True).start()
        if not found.wait(self.startup_timeout) or self.url is None:
            self.kill()
            raise AssertionError(f"kerasformer serve did not start:\n{self.output()}")
        return self

    def _read(self, found: threading.Event) -> None:
        for line in self.process.stdout:
            self.lines.append(line)
            match = LISTENING.search(line)
            if match and self.url is None:
                self.url = match.group(1)
                found.set()
        found.set()  # the process ended

    def output(self) -> str:
        return "".join(self.lines)

    def stop(self, timeout: float = 60) -> int:
        """SIGTERM, then the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def __exit__(self, *exc_info) -> None:
        try:
            self.stop()
        finally:
            self.kill()

    def request(self, path: str, body=None, method: str | None = None, timeout: float = 60):
        """``(status, JSON)`` of ``path``; ``body`` is sent as JSON, or as is if bytes."""
        return request_json(self.url + path, body, method, timeout)


def request_json(url: str, body=None, method: str | None = None, timeout: float = 60):
    """``(status, parsed JSON)`` of one HTTP request (an error status is returned, not raised)."""
    data = body if isinstance(body, bytes | None) else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def wait_for(condition, timeout: float = 60, every: float = 0.2):
    """Poll ``condition()`` until it returns something true; that value, or fail."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"not true after {timeout} s: {condition}")
