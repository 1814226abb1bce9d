"""Each layer computes the same under tf-keras, Keras 3/TensorFlow and Keras 3/JAX.

`tests.cross_keras.layer_outputs` builds every case's model with weights drawn from a
generator seeded by the case's name, runs it and saves it as ``.keras``, then a fresh
process reloads each file with only ``import kerasformer``. It runs here once per
configuration, in subprocesses (a process can hold only one Keras); the tests compare:

- each Keras 3 configuration with tf-keras, case by case (same weight shapes in the same
  order, the same unique weight names, outputs equal to 1e-5),
- each reloaded model with the model that was saved (to 1e-6),
- the padding masks: pooled outputs average real positions only, and padded keys get no
  attention weight, before and after reloading.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from tests.cross_keras.layer_outputs import CASES, case_inputs

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
REFERENCE = "tf_keras"
CONFIGURATIONS = {
    # kerasformer.layers is tf-keras with the variable, Keras 3 without it.
    "tf_keras": {"KERASFORMER_KERAS": "2"},
    "keras3_tensorflow": {"KERAS_BACKEND": "tensorflow"},
    "keras3_jax": {"KERAS_BACKEND": "jax"},
}
BACKEND_NAMES = {"tf_keras": "tf_keras", "keras3_tensorflow": "tensorflow", "keras3_jax": "jax"}
KERAS_3 = [name for name in CONFIGURATIONS if name != REFERENCE]
AGREEMENT_TOLERANCE = 1e-5
RELOAD_TOLERANCE = 1e-6
SAVED_CASES = [name for name, case in CASES.items() if case.build is not None]
MASK_CHECKS = [
    pytest.param(name, reloaded, id=f"{name}-{'reloaded' if reloaded else 'saved'}")
    for name, case in CASES.items()
    if case.mask_checks
    for reloaded in ([False, True] if case.build is not None else [False])
]


def _environment(configuration: str, jax_cache: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("KERASFORMER_KERAS", "KERAS_BACKEND")
    }
    env.update(CONFIGURATIONS[configuration])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    # On CPU: GPU matmuls (TF32) round differently from one framework to the other.
    env["CUDA_VISIBLE_DEVICES"] = ""
    env["JAX_PLATFORMS"] = "cpu"
    # The reloading process reuses the first one's compiled JAX ops: half its time.
    env["JAX_COMPILATION_CACHE_DIR"] = str(jax_cache)
    env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
    env["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "0"
    return env


def _run_script(configuration: str, out_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tests.cross_keras.layer_outputs", *args, str(out_dir)],
        cwd=REPO_ROOT,
        env=_environment(configuration, out_dir / "jax_cache"),
        capture_output=True,
        text=True,
        timeout=600,
    )


class Run:
    """What one configuration's two processes wrote."""

    def __init__(self, configuration: str, out_dir: Path):
        self.configuration = configuration
        self.out_dir = out_dir
        out_dir.mkdir()
        self.save = _run_script(configuration, out_dir)
        self.reload = _run_script(configuration, out_dir, "--reload")

    def _json(self, name):
        path = self.out_dir / name
        return json.loads(path.read_text()) if path.exists() else {}

    def _arrays(self, name):
        path = self.out_dir / name
        if not path.exists():
            return {}
        with np.load(path) as arrays:
            return {key: arrays[key] for key in arrays.files}

    def load(self):
        errors = self._json("errors.json")
        self.backend = errors.get("backend")
        self.errors = errors.get("errors", {})
        self.reload_errors = self._json("reload_errors.json")
        self.weights = self._json("weights.json")
        self.outputs = self._arrays("outputs.npz")
        self.reloaded = self._arrays("reloaded.npz")
        return self

    def require_process_ok(self, process, what):
        assert process.returncode == 0, (
            f"{what} under {self.configuration} exited with {process.returncode}:\n"
            f"{process.stderr[-3000:]}"
        )

    def case_outputs(self, case: str, reloaded=False) -> list[np.ndarray]:
        """The case's outputs; fails naming the case if it raised or left none."""
        self.require_process_ok(self.save, "layer_outputs")
        assert case not in self.errors, (
            f"{case} under {self.configuration} raised while building, running or saving:\n"
            f"{self.errors[case]}"
        )
        if reloaded:
            self.require_process_ok(self.reload, "layer_outputs --reload")
            assert case not in self.reload_errors, (
                f"{case}.keras saved under {self.configuration} did not reload and run in a "
                f"fresh process:\n{self.reload_errors[case]}"
            )
        arrays = self.reloaded if reloaded else self.outputs
        outputs = []
        while f"{case}.{len(outputs)}" in arrays:
            outputs.append(arrays[f"{case}.{len(outputs)}"])
        assert outputs, f"{case} under {self.configuration} wrote no outputs"
        return outputs


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Run]:
    """Both entry points of layer_outputs, for the three configurations side by side."""
    root = tmp_path_factory.mktemp("cross_keras")
    with ThreadPoolExecutor(len(CONFIGURATIONS)) as pool:
        done = pool.map(lambda name: Run(name, root / name), CONFIGURATIONS)
        return {run.configuration: run.load() for run in done}


def test_every_public_layer_has_a_case():
    from kerasformer import layers

    missing = set(layers.__all__) - {case.layer for case in CASES.values()}
    assert not missing, f"layers with no case in tests/cross_keras/layer_outputs.py: {missing}"


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_configuration_runs_the_keras_it_names(runs, configuration):
    run = runs[configuration]
    run.require_process_ok(run.save, "layer_outputs")
    assert run.backend == BACKEND_NAMES[configuration], (
        f"{configuration} ran on {run.backend!r}: the comparison would prove nothing"
    )


def assert_outputs_close(actual_outputs, wanted_outputs, tolerance, case, comparison):
    for index, (actual, wanted) in enumerate(zip(actual_outputs, wanted_outputs, strict=True)):
        np.testing.assert_allclose(
            actual,
            wanted,
            rtol=tolerance,
            atol=tolerance,
            err_msg=f"{CASES[case].layer} ({case}) output {index}: {comparison}",
        )


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("configuration", KERAS_3)
def test_layer_agrees_with_tf_keras(runs, configuration, case):
    reference, run = runs[REFERENCE], runs[configuration]
    expected, got = reference.case_outputs(case), run.case_outputs(case)
    if case in SAVED_CASES:
        reference_weights = [shape for _, shape in reference.weights[case]]
        weights = [shape for _, shape in run.weights[case]]
        assert weights == reference_weights, (
            f"{case}: weight shapes under {configuration} differ from tf-keras's (in order):\n"
            f"  tf-keras: {reference.weights[case]}\n  {configuration}: {run.weights[case]}"
        )
    assert len(got) == len(expected), f"{case}: {len(got)} outputs under {configuration}"
    assert_outputs_close(got, expected, AGREEMENT_TOLERANCE, case, f"{configuration} vs tf-keras")


@pytest.mark.parametrize("case", SAVED_CASES)
@pytest.mark.parametrize("configuration", KERAS_3)
def test_weights_have_tf_keras_names(runs, configuration, case):
    """Unique names, the same as tf-keras's: weights set or loaded by name find their place
    (Keras 3's ``get_state_tree`` refuses a model with two weights of one path)."""
    reference, run = runs[REFERENCE], runs[configuration]
    reference.case_outputs(case), run.case_outputs(case)
    names = [name for name, _ in run.weights[case]]
    duplicated = sorted({name for name in names if names.count(name) > 1})
    assert not duplicated, (
        f"{case}: weights of one model share names under {configuration}: {duplicated}"
    )
    reference_names = [name.removesuffix(":0") for name, _ in reference.weights[case]]
    assert names == reference_names, (
        f"{case}: weight names under {configuration} differ from tf-keras's:\n"
        + "\n".join(f"  {a} != {b}" for a, b in zip(reference_names, names, strict=False) if a != b)
    )


@pytest.mark.parametrize("case", SAVED_CASES)
@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_reloaded_model_gives_saved_outputs(runs, configuration, case):
    run = runs[configuration]
    saved, reloaded = run.case_outputs(case), run.case_outputs(case, reloaded=True)
    assert len(reloaded) == len(saved), f"{case}: reloaded model has {len(reloaded)} outputs"
    assert_outputs_close(
        reloaded, saved, RELOAD_TOLERANCE, case, f"reloaded vs saved under {configuration}"
    )


@pytest.mark.parametrize(("case", "reloaded"), MASK_CHECKS)
@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_padding_masks_reach_the_layer(runs, configuration, case, reloaded):
    outputs = runs[configuration].case_outputs(case, reloaded=reloaded)
    inputs = case_inputs(case)  # what layer_outputs fed: NumPy from a seeded generator
    for check in CASES[case].mask_checks:
        what, actual, expected = check(inputs, outputs)
        np.testing.assert_allclose(
            actual,
            np.broadcast_to(expected, np.shape(actual)),
            rtol=1e-5,
            atol=1e-6,
            err_msg=f"{CASES[case].layer} ({case}, {'reloaded' if reloaded else 'saved'} "
            f"under {configuration}): {what}",
        )
