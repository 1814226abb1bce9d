"""TensorFlow's log chatter is hidden from the CLI's standard error; real errors are not."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers.processes import run_kerasformer

NOISE = [
    "2026-11-24 06:57:30.244081: E external/local_xla/xla/stream_executor/cuda/"
    "cuda_platform.cc:51] failed call to cuInit: INTERNAL: CUDA error: Failed call to "
    "cuInit: UNKNOWN ERROR (303)",
    "2026-11-24 06:57:31.000001: I tensorflow/core/util/port.cc:153] oneDNN custom "
    "operations are on.",
    "2026-11-24 06:57:31.000002: W tensorflow/core/framework/op_kernel.cc:1857] an op warned",
    "2026-11-24 06:57:32.100000: E tensorflow/core/grappler/costs/op_level_cost_estimator.cc"
    ':699] Error in PredictCost() for the op: op: "CropAndResize"',
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1764000000.123456   12345 cpu_feature_guard.cc:210] This TensorFlow binary",
    "2026-11-24 13:55:16.937986: E tensorflow/core/util/util.cc:131] oneDNN supports DT_INT64 "
    "only on platforms with AVX-512. Falling back to the default Eigen-based implementation "
    "if present.",
    "2026-12-06 12:18:39.107592: E tensorflow/core/util/util.cc:131] oneDNN supports DT_INT32 "
    "only on platforms with AVX-512. Falling back to the default Eigen-based implementation "
    "if present.",
    # What tag, NER and multi-label training printed on a CPU without AVX-512 (issue 53).
    "2026-12-06 09:12:44.501337: E tensorflow/core/util/util.cc:131] oneDNN supports DT_BOOL "
    "only on platforms with AVX-512. Falling back to the default Eigen-based implementation "
    "if present.",
]
KEPT = [
    "2026-11-24 06:57:33.000000: E tensorflow/core/framework/op_kernel.cc:1857] OP_REQUIRES "
    "failed: Out of memory",
    "kerasformer: error: exp/tr is a translator; use kerasformer translate.",
    "Traceback (most recent call last):",
]

CHILD = """
import os, sys
from kerasformer.cli.quiet import quiet_tensorflow
lines = sys.argv[1].split("\\n")
with quiet_tensorflow():
    for line in lines:
        os.write(2, (line + "\\n").encode())  # as TensorFlow's C++ code writes
    print("from python", file=sys.stderr)
print("after", file=sys.stderr)
"""


def run_child() -> str:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, "\n".join(NOISE + KEPT)],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stderr.decode()


def test_log_lines_that_are_no_error_are_hidden_and_errors_kept_in_order():
    written = run_child()
    assert written.splitlines() == [*KEPT, "from python", "after"]


def test_verbose_shows_tensorflows_lines(tiny_ag_news_dir):
    command = ["predict", str(tiny_ag_news_dir), "x"]
    quiet = run_kerasformer(*command, tf_log_level=None)
    verbose = run_kerasformer("--verbose", *command, tf_log_level=None)
    assert quiet.returncode == verbose.returncode == 2
    # Both fail in one line on a directory that is no export; only --verbose adds TF's lines.
    assert quiet.stderr.strip().splitlines() == [quiet.stderr.strip()]
    assert "kerasformer: error:" in quiet.stderr
    assert verbose.stderr.endswith(quiet.stderr)
