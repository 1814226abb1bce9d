"""Replacing a directory never loses it: refusals before work, and SIGKILL at every step."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kerasformer.errors import KerasformerError
from kerasformer.files.staged_directory import (
    MARKER_FILE,
    recover_interrupted,
    require_replaceable,
    staged_directory,
)

OLD = {"model.txt": "old", "only_old.txt": "1"}
NEW = {"model.txt": "new", "only_new.txt": "2"}


def write_files(directory: Path, files: dict) -> None:
    for name, text in files.items():
        (directory / name).write_text(text)


def contents(directory: Path) -> dict:
    return {p.name: p.read_text() for p in directory.iterdir() if p.name != MARKER_FILE}


def test_a_staged_write_replaces_the_directory_whole_and_leaves_nothing_beside_it(tmp_path):
    destination = tmp_path / "export"
    for files in (OLD, NEW):
        with staged_directory(destination, kind="test") as staging:
            write_files(staging, files)
    assert contents(destination) == NEW
    assert (destination / MARKER_FILE).is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["export"]


def test_a_failed_write_leaves_the_old_directory_and_no_staging(tmp_path):
    destination = tmp_path / "export"
    with staged_directory(destination, kind="test") as staging:
        write_files(staging, OLD)
    with pytest.raises(OSError, match="disk full"), staged_directory(destination, "test") as s:
        (s / "model.txt").write_text("half")
        raise OSError("disk full")
    assert contents(destination) == OLD
    assert [p.name for p in tmp_path.iterdir()] == ["export"]


def test_overwrite_refuses_the_working_directory_and_its_parents(tmp_path, monkeypatch):
    work = tmp_path / "project"
    work.mkdir()
    (work / MARKER_FILE).write_text("{}")  # even a kerasformer directory, if we stand in it
    monkeypatch.chdir(work)
    for destination in (".", "..", str(work)):
        with pytest.raises(KerasformerError, match="holds the working directory"):
            require_replaceable(destination, overwrite=True, flag="--export-dir")


def test_overwrite_refuses_a_directory_kerasformer_did_not_write(tmp_path):
    exports = tmp_path / "saved_models"
    with staged_directory(exports / "a", kind="test") as staging:
        write_files(staging, OLD)
    with pytest.raises(KerasformerError, match=f"is not one \\(no {MARKER_FILE}\\)"):
        require_replaceable(exports, overwrite=True, flag="--export-dir")
    require_replaceable(exports / "a", overwrite=True, flag="--export-dir")  # its own: fine
    with pytest.raises(KerasformerError, match="already exists; pass --overwrite"):
        require_replaceable(exports / "a", overwrite=False, flag="--export-dir")
    (tmp_path / "file").write_text("x")
    with pytest.raises(KerasformerError, match="is a file"):
        require_replaceable(tmp_path / "file", overwrite=True, flag="--export-dir")


def test_exports_written_before_the_marker_existed_are_still_replaceable(tmp_path):
    legacy = tmp_path / "old-export"
    (legacy / "variables").mkdir(parents=True)
    for name in ("saved_model.pb", "model.keras", "metrics.json"):
        (legacy / name).write_text("x")
    require_replaceable(legacy, overwrite=True, flag="--export-dir")
    (legacy / "my_notes.txt").write_text("mine")
    with pytest.raises(KerasformerError, match="is not one"):
        require_replaceable(legacy, overwrite=True, flag="--export-dir")


@pytest.mark.parametrize("destination", ["/proc/kerasformer-test/x", "/sys/kerasformer-test"])
def test_an_unwritable_destination_is_refused_before_any_work(destination):
    with pytest.raises(KerasformerError, match="choose a writable --export-dir"):
        require_replaceable(destination, overwrite=False, flag="--export-dir")


def test_a_destination_below_a_file_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(KerasformerError, match="is a file; choose another --out"):
        require_replaceable(tmp_path / "file" / "out", overwrite=False, flag="--out")


# A child process replaces OLD by NEW and SIGKILLs itself at one step of the way.
KILL_AT_STEP = r"""
import os, shutil, signal, sys
from pathlib import Path
from kerasformer.export import staged_directory as module

destination, step = Path(sys.argv[1]), sys.argv[2]
die = lambda: os.kill(os.getpid(), signal.SIGKILL)
real_rename, real_replace, real_rmtree = os.rename, os.replace, shutil.rmtree
renames = []

def rename(source, target):
    renames.append(source)
    if step == "before-aside" and len(renames) == 1:
        die()
    real_rename(source, target)
    if (step, len(renames)) in (("after-aside", 1), ("after-swap", 2)):
        die()

def replace(source, target):
    if step == "before-marker":
        die()
    real_replace(source, target)

def rmtree(path, *args, **kwargs):
    if step == "while-deleting-old":
        next(p for p in Path(path).iterdir() if p.is_file()).unlink()  # half deleted
        die()
    real_rmtree(path, *args, **kwargs)

os.rename, os.replace, module.shutil.rmtree = rename, replace, rmtree
with module.staged_directory(destination, kind="test") as staging:
    (staging / "model.txt").write_text("new")
    if step == "while-writing":
        die()
    (staging / "only_new.txt").write_text("2")
print("finished")
"""


@pytest.mark.parametrize(
    "step, survivor",
    [
        ("while-writing", OLD),
        ("before-marker", OLD),
        ("before-aside", NEW),
        ("after-aside", NEW),
        ("after-swap", NEW),
        ("while-deleting-old", NEW),
    ],
)
def test_sigkill_at_any_step_leaves_a_whole_directory_and_the_next_run_cleans_up(
    tmp_path, step, survivor
):
    destination = tmp_path / "export"
    with staged_directory(destination, kind="test") as staging:
        write_files(staging, OLD)
    child = subprocess.run(
        [sys.executable, "-c", KILL_AT_STEP, str(destination), step],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )  # fmt: skip
    assert child.returncode == -9, child.stderr[-2000:]
    if destination.exists():  # what a reader sees right after the kill is never partial
        assert contents(destination) in (OLD, NEW)
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "export"]
    assert leftovers, "every kill during a replacement leaves something to clean up"

    done = recover_interrupted(destination)

    assert done and all(isinstance(sentence, str) for sentence in done)
    assert contents(destination) == survivor
    assert [p.name for p in tmp_path.iterdir()] == ["export"]


def written(destination: Path, files: dict, kind: str = "classifier") -> Path:
    with staged_directory(destination, kind=kind) as staging:
        write_files(staging, files)
        (staging / "variables").mkdir()
        (staging / "variables" / "variables.index").write_text("index")
    return destination


def test_the_marker_lists_every_file_written(tmp_path):
    import json

    marker = json.loads((written(tmp_path / "export", OLD) / MARKER_FILE).read_text())
    assert marker["kind"] == "classifier"
    assert marker["files"] == ["model.txt", "only_old.txt", "variables/variables.index"]


@pytest.mark.parametrize("foreign", ["notes.txt", "variables/mine.txt", "sub/saved_model.pb"])
def test_overwrite_refuses_a_directory_holding_a_file_it_did_not_write(tmp_path, foreign):
    destination = written(tmp_path / "export", OLD)
    (destination / foreign).parent.mkdir(exist_ok=True)
    (destination / foreign).write_text("the user's")
    with pytest.raises(KerasformerError, match=f"holds {destination / foreign}, which kerasformer"):
        require_replaceable(destination, overwrite=True, flag="--export-dir", kind="classifier")
    # Checked again when the new directory is swapped in: a file put there meanwhile.
    (destination / foreign).unlink()
    with pytest.raises(KerasformerError, match="which kerasformer did not write"):
        with staged_directory(destination, "classifier") as staging:
            write_files(staging, NEW)
            (destination / foreign).write_text("written during training")
    assert (destination / foreign).read_text() == "written during training"
    assert (destination / "model.txt").read_text() == "old"


def test_overwrite_refuses_an_output_of_another_kind(tmp_path):
    conversion = written(tmp_path / "minilm", OLD, kind="bert-conversion")
    with pytest.raises(KerasformerError, match="is a BERT conversion .*replaces only a classifier"):
        require_replaceable(conversion, overwrite=True, flag="--export-dir", kind="classifier")
    classifier = written(tmp_path / "cls", OLD, kind="classifier")
    with pytest.raises(
        KerasformerError, match="is a classifier, and --overwrite replaces only a BERT"
    ):
        require_replaceable(classifier, overwrite=True, flag="--out", kind="bert-conversion")


@pytest.mark.parametrize("inside", ["export", "export/variables", "run.training"])
def test_nothing_is_written_inside_another_output(tmp_path, inside):
    written(tmp_path / "export", OLD)
    run = tmp_path / "run.training"
    run.mkdir()
    (run / "config.json").write_text("{}")
    with pytest.raises(KerasformerError, match=f"is inside {tmp_path / inside.split('/')[0]}"):
        require_replaceable(tmp_path / inside / "sub", overwrite=False, flag="--export-dir")


def test_overwrite_refuses_a_symbolic_link_and_leaves_its_target(tmp_path):
    target = written(tmp_path / "export", OLD)
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(KerasformerError, match="is a symbolic link"):
        require_replaceable(link, overwrite=True, flag="--export-dir", kind="classifier")
    with pytest.raises(KerasformerError, match="is a symbolic link"):
        with staged_directory(link, "classifier") as staging:
            write_files(staging, NEW)
    assert link.is_symlink() and (target / "model.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export", "link"]
