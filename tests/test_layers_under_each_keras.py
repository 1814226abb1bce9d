"""The layer tests again, under each Keras this process is not running them under.

The main suite runs ``tests/layers`` on `kerasformer.layers` as the environment leaves it
(Keras 3 on TensorFlow when nothing is set). Each other configuration gets a fresh
``pytest tests/layers`` in a subprocess: tf-keras (``KERASFORMER_KERAS=2``, which makes
`kerasformer.layers` the `kerasformer.tf_keras.layers` namespace) and Keras 3 on JAX.

No recursion: the child collects only ``tests/layers``, never this file.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kerasformer.layers.backend import backend_name

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

REPOSITORY_ROOT = Path(__file__).resolve().parents[1]
OUTPUT_TAIL_CHARACTERS = 6000
CONFIGURATIONS = {
    "tf_keras": {"KERASFORMER_KERAS": "2"},
    "tensorflow": {"KERAS_BACKEND": "tensorflow"},
    # These tests check numbers, not speed, and on JAX most of their time is XLA
    # compiling many small functions: compiling without optimisation took 22% off.
    "jax": {"KERAS_BACKEND": "jax", "JAX_DISABLE_MOST_OPTIMIZATIONS": "1"},
}
OTHERS = [name for name in CONFIGURATIONS if name != backend_name()]


@pytest.mark.parametrize("configuration", OTHERS)
def test_layer_tests_pass_under_another_keras(configuration):
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("KERASFORMER_KERAS", "KERAS_BACKEND")
    }
    env.update(CONFIGURATIONS[configuration], TF_CPP_MIN_LOG_LEVEL="2")
    command = [sys.executable, "-m", "pytest", "tests/layers", "-q", "-p", "no:cacheprovider"]
    result = subprocess.run(
        command, cwd=REPOSITORY_ROOT, env=env, capture_output=True, text=True, timeout=1800
    )
    output, return_code = result.stdout + result.stderr, result.returncode
    assert return_code == 0, (
        f"tests/layers under {configuration} exited with {return_code}; "
        f"last lines of its output:\n{output[-OUTPUT_TAIL_CHARACTERS:]}"
    )
