"""Keras's own tests of `keras.layers.MultiHeadAttention`, run against ours (issue 54).

The file is the one inside the installed Keras wheel, run unchanged; the plugin
`swap_in_kerasformer` puts our class where Keras's test module reads its own. Each backend
runs in a fresh process, as Keras's backend is chosen once per process.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import keras
import pytest

from tests.keras_suite.exceptions import EXCEPTIONS
from tests.keras_suite.swap_in_kerasformer import SWAPPED_LINE

# Starts a TensorFlow or JAX process that runs 50 tests.
pytestmark = pytest.mark.slow

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
KERAS_SUITE = Path(keras.__file__).parent / "src/layers/attention/multi_head_attention_test.py"
OUTPUT_TAIL_CHARACTERS = 6000


def test_the_suite_file_is_in_the_installed_keras_and_holds_every_exception():
    text = KERAS_SUITE.read_text()
    for name in EXCEPTIONS:
        assert f"def {name}(" in text, f"{name} is no longer in Keras's suite: drop it"


@pytest.mark.parametrize("backend", ["tensorflow", "jax"])
def test_keras_suite_passes_against_kerasformer(backend, tmp_path):
    """Every test but the listed exceptions passes; on TensorFlow, Keras itself skips its
    two flash-attention tests (JAX and PyTorch only)."""
    env = {**os.environ, "KERAS_BACKEND": backend, "JAX_PLATFORMS": "cpu",
           "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(REPOSITORY_ROOT),
           # Numbers, not speed: most of JAX's time here is compiling small functions.
           "JAX_DISABLE_MOST_OPTIMIZATIONS": "1"}  # fmt: skip
    env.pop("KERASFORMER_KERAS", None)
    command = [
        sys.executable, "-m", "pytest", str(KERAS_SUITE), "-q", "-p", "no:cacheprovider",
        "-p", "no:randomly", "-p", "tests.keras_suite.swap_in_kerasformer",
        "--rootdir", str(tmp_path), "-c", os.devnull,
    ]  # fmt: skip
    result = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    output = result.stdout + result.stderr
    tail = output[-OUTPUT_TAIL_CHARACTERS:]
    assert SWAPPED_LINE in output, f"the swap plugin did not load:\n{tail}"
    assert result.returncode == 0, f"Keras's suite failed on {backend}:\n{tail}"
    counts = dict(
        (word, int(number))
        for number, word in re.findall(r"(\d+) (passed|skipped|deselected)", output)
    )
    assert counts.get("deselected") == len(EXCEPTIONS), tail
    assert counts.get("skipped", 0) == (2 if backend == "tensorflow" else 0), tail
    assert counts.get("passed", 0) >= 45, tail
