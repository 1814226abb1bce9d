"""``--strategy multi-worker``, shown: two local workers train exactly like one process.

Two processes on this machine form a ``TF_CONFIG`` cluster and train through
kerasformer's own trainer with ``MultiWorkerMirroredStrategy`` on CPU. The reference
is an ordinary single-process run (``strategy="default"``) on the same global batches.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from kerasformer.errors import KerasformerError
from kerasformer.training import TrainingConfig, train
from kerasformer.training.run_directory import (
    RunDirectory,
    remove_empty_directories,
    run_directory_for,
)
from kerasformer.training.run_export import worker_export_dir
from kerasformer.training.run_settings import compared_settings
from kerasformer.training.trainer import chief_run_directory

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

# Far above the ~45 s two workers take on a loaded 2-core machine; a hung collective
# (a worker that died or diverged) must fail the test, not stall it.
WORKERS_DEADLINE_SECONDS = 110
WORKERS = 2

WORKER = """
import json, sys
import numpy as np
from kerasformer.training import TrainingConfig, train

settings, weights_file = json.loads(sys.argv[1]), sys.argv[2]
result = train(TrainingConfig(**settings), verbose=0)
np.savez(weights_file, *[weight.numpy() for weight in result.model.trainable_weights])
"""


def training_settings(data_dir: Path, **overrides) -> dict:
    """A small transformer without dropout, so that every run computes the same numbers.

    The ``strings`` pipeline fits the string-in model itself, whose compiled metrics
    are sync-on-read variables: saving it needs every worker, the case that hangs if
    only the chief saves. Its 216 training texts are 9 whole batches of 24, split
    12 + 12 between the workers, so the mean of their losses is the global batch's.
    """
    settings = dict(
        dataset="ag_news", data_dir=str(data_dir), epochs=2, batch_size=24, seed=7,
        input_pipeline="strings", model_options=dict(vocab_size=500, maxlen=32, dropout=0.0),
    )  # fmt: skip
    return {**settings, **overrides}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def tf_config(ports: list[int], index: int) -> str:
    workers = [f"localhost:{port}" for port in ports]
    return json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}})


def start_worker(index: int, ports: list[int], settings: dict, tmp_path: Path) -> subprocess.Popen:
    """One worker, with a temporary directory of its own to check for leftovers."""
    scratch = tmp_path / f"tmp-worker-{index}"
    scratch.mkdir()
    env = {
        **os.environ,
        "TF_CONFIG": tf_config(ports, index),
        "TMPDIR": str(scratch),
        "CUDA_VISIBLE_DEVICES": "-1",  # CPU, like the reference: the numbers must agree
        "TF_CPP_MIN_LOG_LEVEL": "2",
    }
    weights_file = tmp_path / f"weights-{index}.npz"
    with (tmp_path / f"worker-{index}.log").open("w") as log:
        return subprocess.Popen(
            [sys.executable, "-c", WORKER, json.dumps(settings), str(weights_file)],
            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp_path,
        )  # fmt: skip


def log_tail(tmp_path: Path, index: int, characters: int = 3000) -> str:
    return (tmp_path / f"worker-{index}.log").read_text(errors="replace")[-characters:]


def wait_for_workers(workers: list[subprocess.Popen], tmp_path: Path, deadline: float) -> None:
    """Return once every worker succeeded; fail at the first one that did not, or late."""
    while True:
        codes = [worker.poll() for worker in workers]
        if all(code == 0 for code in codes):
            return
        failed = [index for index, code in enumerate(codes) if code not in (None, 0)]
        if failed or time.monotonic() > deadline:
            stop_workers(workers)  # the others wait for the failed one in a collective
            index = failed[0] if failed else codes.index(None)
            what = f"exited with status {codes[index]}" if failed else "did not finish in time"
            pytest.fail(
                f"worker {index} {what}; its output ends with:\n{log_tail(tmp_path, index)}"
            )
        time.sleep(0.5)


def stop_workers(workers: list[subprocess.Popen]) -> None:
    for worker in workers:
        if worker.poll() is None:
            worker.kill()
            worker.wait()


def trainable_weights(path: Path) -> list[np.ndarray]:
    with np.load(path) as arrays:
        return [arrays[f"arr_{index}"] for index in range(len(arrays.files))]


@pytest.fixture(scope="module")
def two_worker_run(tiny_ag_news_dir, tmp_path_factory):
    """Two workers trained and exported; beside them, the single-process reference."""
    tmp_path = tmp_path_factory.mktemp("multi_worker")
    settings = training_settings(
        tiny_ag_news_dir, strategy="multi-worker", export_dir=str(tmp_path / "export")
    )
    ports = [free_port() for _ in range(WORKERS)]
    workers = [start_worker(index, ports, settings, tmp_path) for index in range(WORKERS)]
    try:
        # Trained while the workers start: same data, seed and global batch, one process.
        reference = train(TrainingConfig(**training_settings(tiny_ag_news_dir)), export=False,
                          verbose=0)  # fmt: skip
        wait_for_workers(workers, tmp_path, time.monotonic() + WORKERS_DEADLINE_SECONDS)
    finally:
        stop_workers(workers)
    return tmp_path, reference


def test_both_workers_end_with_the_weights_of_one_process(two_worker_run):
    tmp_path, reference = two_worker_run
    chief, other = (trainable_weights(tmp_path / f"weights-{i}.npz") for i in range(WORKERS))
    assert len(chief) == len(other) == len(reference.model.trainable_weights)
    for chief_weight, other_weight in zip(chief, other, strict=True):
        np.testing.assert_array_equal(other_weight, chief_weight)  # all-reduced: identical
    for got, weight in zip(chief, reference.model.trainable_weights, strict=True):
        np.testing.assert_allclose(got, weight.numpy(), atol=1e-5, err_msg=weight.name)


def test_the_chief_alone_exports_and_the_export_is_complete(two_worker_run):
    tmp_path, reference = two_worker_run
    export_dir = tmp_path / "export"
    for name in ("kerasformer.json", "saved_model.pb", "model.keras", "history.json",
                 "metrics.json", "history.png", "variables", "assets"):  # fmt: skip
        assert (export_dir / name).exists(), name
    history = json.loads((export_dir / "history.json").read_text())
    np.testing.assert_allclose(history["loss"], reference.history["loss"], rtol=1e-5)
    metrics = json.loads((export_dir / "metrics.json").read_text())
    assert metrics["config"]["strategy"] == "multi-worker" and metrics["interrupted"] is False


def test_no_worker_leaves_a_second_export_or_temporary_files(two_worker_run):
    tmp_path, _ = two_worker_run
    logs_and_weights = {f"{kind}-{index}{suffix}" for index in range(WORKERS)
                        for kind, suffix in (("worker", ".log"), ("weights", ".npz"))}  # fmt: skip
    scratch = {f"tmp-worker-{index}" for index in range(WORKERS)}
    # No run directory, staging or replaced copy beside the export, and nothing else.
    assert {path.name for path in tmp_path.iterdir()} == {"export", *logs_and_weights, *scratch}
    for name in scratch:
        assert list((tmp_path / name).iterdir()) == [], f"{name} keeps files"
    assert [path.parent for path in tmp_path.rglob("saved_model.pb")] == [tmp_path / "export"]


def test_a_worker_started_with_other_settings_than_the_chief_is_refused(tmp_path):
    export_dir = tmp_path / "export"
    chief = TrainingConfig(dataset="ag_news", seed=7, strategy="multi-worker")
    RunDirectory(run_directory_for(export_dir), compared_settings(chief), resume=False)
    worker = TrainingConfig(dataset="ag_news", seed=8, strategy="multi-worker")
    with pytest.raises(KerasformerError, match=r"settings differ from the chief's \(seed\)"):
        chief_run_directory(export_dir, worker)
    before = sorted(run_directory_for(export_dir).rglob("*"))
    chief_run_directory(export_dir, TrainingConfig(**{**asdict(chief), "overwrite": True}))
    assert sorted(run_directory_for(export_dir).rglob("*")) == before  # wrote nothing


def test_a_worker_accepts_a_chief_run_saved_before_settings_were_added(tmp_path):
    export_dir = tmp_path / "export"
    config = TrainingConfig(dataset="ag_news", seed=7, strategy="multi-worker")
    RunDirectory(run_directory_for(export_dir), compared_settings(config), resume=False)
    saved_file = run_directory_for(export_dir) / "config.json"
    saved = json.loads(saved_file.read_text())
    for added in ("weight_decay", "clip_norm", "lr_schedule", "average_last"):
        del saved[added]  # as a release before these settings wrote it
    saved_file.write_text(json.dumps(saved))
    chief_run_directory(export_dir, config)  # not refused
    with pytest.raises(KerasformerError, match=r"differ from the chief's \(lr_schedule\)"):
        chief_run_directory(
            export_dir, TrainingConfig(**{**asdict(config), "lr_schedule": "cosine"})
        )


def test_a_non_chief_export_goes_to_scratch_that_is_deleted_even_on_failure(tmp_path):
    export_dir = tmp_path / "export"
    with pytest.raises(OSError), worker_export_dir(export_dir, chief=False) as written:
        written.mkdir()
        (written / "saved_model.pb").write_bytes(b"half")
        scratch = written.parent
        raise OSError("disk full")
    assert not scratch.exists() and not export_dir.exists()
    assert tmp_path not in written.parents


def test_only_empty_directories_are_removed(tmp_path):
    run = tmp_path / "export.training"
    (run / "phase-0" / "workertemp_1").mkdir(parents=True)
    remove_empty_directories(run)
    assert not run.exists()
    (run / "phase-0").mkdir(parents=True)
    (run / "phase-1").mkdir()
    (run / "phase-1" / "checkpoint").write_text("the chief's")
    remove_empty_directories(run)
    assert [path.name for path in run.rglob("*")] == ["phase-1", "checkpoint"]
