"""Versions as TF Serving serves them: picked up while serving, swapped only once ready,
a damaged or half-written one never served, and one that goes away no longer served.

The base path holds bare SavedModels (no kerasformer files), as a TF Serving model base
path does. Version 1 is the tiny AG News classifier and version 2 the multi-label one,
so each answer tells which version gave it: its ``class_names`` signature.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from pathlib import Path

import pytest

from tests.helpers.served import ServerProcess, wait_for

pytestmark = pytest.mark.slow

PARTS = ("saved_model.pb", "fingerprint.pb", "assets")
NAMES = {"signature_name": "class_names", "inputs": {}}


def copy_version(export: Path, folder: Path, parts=(*PARTS, "variables")) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for part in parts:
        source = export / part
        if source.is_dir():
            shutil.copytree(source, folder / part)
        elif source.exists():
            shutil.copy2(source, folder / part)


def class_names(export: Path) -> list[str]:
    return [name for name in (export / "assets" / "class_names.txt").read_text().split("\n")
            if name]  # fmt: skip


def names_served(server: ServerProcess, path: str = "/v1/models/news:predict"):
    status, answer = server.request(path, NAMES)
    return answer["outputs"] if status == 200 else (status, answer)


@contextlib.contextmanager
def asked_throughout(server: ServerProcess):
    """The class names served, asked again and again while the block runs: the list."""
    answers, stop = [], threading.Event()

    def keep_asking():
        while not stop.is_set():
            answers.append(names_served(server))

    asker = threading.Thread(target=keep_asking)
    asker.start()
    try:
        yield answers
    finally:
        stop.set()
        asker.join()


def version_states(server: ServerProcess) -> dict[str, dict]:
    _, answer = server.request("/v1/models/news")
    return {entry["version"]: entry for entry in answer["model_version_status"]}


def test_versions_appear_swap_fail_and_go_without_a_restart(exports, tmp_path):
    first, second = exports["classifier"], exports["multi_label"]
    base = tmp_path / "news"
    copy_version(first, base / "1")
    with ServerProcess(f"news={base}", "--poll-seconds", "0.2") as server:
        assert names_served(server) == class_names(first)

        # Half-written: its variables are there, its graph not yet. Not served.
        copy_version(second, base / "2", parts=("variables",))
        wait_for(lambda: version_states(server).get("2", {}).get("state") == "START")
        assert names_served(server) == class_names(first)

        # Requests go on through the swap: each gets an answer, from version 1 until
        # version 2 has loaded and answered its warm-up request, then from version 2.
        with asked_throughout(server) as answers:
            copy_version(second, base / "2", parts=PARTS)
            wait_for(lambda: names_served(server) == class_names(second))
        assert all(answer in (class_names(first), class_names(second)) for answer in answers)
        swapped = answers.index(class_names(second)) if class_names(second) in answers else None
        assert swapped is None or all(a == class_names(second) for a in answers[swapped:])
        assert version_states(server)["2"]["state"] == "AVAILABLE"
        assert names_served(server, "/v1/models/news/versions/1:predict") == class_names(first)

        # Damaged: its variables cut short. Never served, reported, logged once.
        copy_version(first, base / "3")
        data = next((base / "3" / "variables").glob("variables.data-*"))
        data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
        state = wait_for(lambda: version_states(server).get("3", {}).get("state") == "END"
                         and version_states(server)["3"])  # fmt: skip
        assert "version 3" in state["status"]["error_message"]
        assert state["status"]["error_code"] != "OK"
        assert names_served(server) == class_names(second)
        status, answer = server.request("/v1/models/news/versions/3")
        assert status == 200 and answer["model_version_status"] == [state]
        status, answer = server.request("/v1/models/news/versions/3:predict", NAMES)
        assert status == 404 and "versions: 1, 2" in answer["error"]
        threading.Event().wait(1.0)  # several polls more
        assert sum("version 3" in line for line in server.output().splitlines()) == 1

        # Gone from disk: no longer served; the latest left is served again.
        shutil.rmtree(base / "2")
        wait_for(lambda: names_served(server) == class_names(first))
        status, answer = server.request("/v1/models/news/versions/2:predict", NAMES)
        assert status == 404 and "'2'" in answer["error"]
        assert "2" not in version_states(server)
    assert server.process.returncode == 0


def test_an_export_served_as_version_1_serves_until_its_first_numbered_version_has_loaded(
    exports, tmp_path
):
    first, second = exports["classifier"], exports["multi_label"]
    export = shutil.copytree(first, tmp_path / "news")
    with ServerProcess(f"news={export}", "--poll-seconds", "0.2") as server:
        assert version_states(server)["1"]["state"] == "AVAILABLE"
        with asked_throughout(server) as answers:
            copy_version(second, export / "2")
            wait_for(lambda: names_served(server) == class_names(second))
        # No request fell between the two: each got the export's names or version 2's.
        assert answers and all(a in (class_names(first), class_names(second)) for a in answers)
        wait_for(lambda: set(version_states(server)) == {"2"})
