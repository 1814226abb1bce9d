"""The layer tests again, under Keras 3 with the TensorFlow and the JAX backend.

The main suite runs under tf-keras. `kerasformer.layers.backend` picks its Keras once per
process, so each Keras 3 backend gets a fresh ``pytest tests/layers`` in a subprocess.

No recursion: the child collects only ``tests/layers``, never this file; and a process
that already runs under Keras 3 (``KERASFORMER_KERAS=3``, e.g. a whole-suite run under
Keras 3) defines no tests here at all, so no child ever starts children of its own.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kerasformer.layers.backend import KERAS_VERSION

REPOSITORY_ROOT = Path(__file__).resolve().parents[1]
OUTPUT_TAIL_CHARACTERS = 6000

if KERAS_VERSION == 2:  # This process runs tf-keras; under Keras 3 it defines no tests.

    @pytest.mark.parametrize("backend", ["tensorflow", "jax"])
    def test_layer_tests_pass_under_keras3(backend):
        env = {
            **os.environ,
            "KERASFORMER_KERAS": "3",
            "KERAS_BACKEND": backend,
            "TF_CPP_MIN_LOG_LEVEL": "2",
        }
        command = [sys.executable, "-m", "pytest", "tests/layers", "-q", "-p", "no:cacheprovider"]
        result = subprocess.run(
            command, cwd=REPOSITORY_ROOT, env=env, capture_output=True, text=True, timeout=1800
        )
        output, return_code = result.stdout + result.stderr, result.returncode
        assert return_code == 0, (
            f"tests/layers under Keras 3 ({backend}) exited with {return_code}; "
            f"last lines of its output:\n{output[-OUTPUT_TAIL_CHARACTERS:]}"
        )
