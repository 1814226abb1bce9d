"""Keep TensorFlow's C++ log chatter off the terminal unless ``--verbose`` is given.

TensorFlow's C++ code writes straight to file descriptor 2, beneath Python's
``sys.stderr``, so its lines can only be filtered there: `quiet_tensorflow` puts a pipe
in place of descriptor 2 and a thread copies every line through, except INFO and
WARNING log lines and the few ERROR lines that are no error (no GPU on this machine, a
cost estimate Grappler could not make). Every other line, kerasformer's own errors and
real TensorFlow errors included, reaches the terminal unchanged.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections.abc import Iterator

# "2026-11-24 06:57:30.244081: I tensorflow/..." and "I0000 00:00:... file.cc:123] ..."
CPP_INFO_OR_WARNING = re.compile(
    rb"^(\S+ \S+: [IW] \S+\.cc:\d+\]|[IW]\d{4} [\d:.]+ +\d+ \S+:\d+\])"
)
NOT_AN_ERROR = (
    b"failed call to cuInit",  # a machine without a GPU: TensorFlow runs on the CPU
    b"Error in PredictCost()",  # Grappler could not estimate an op's cost; nothing fails
    b"All log messages before absl::InitializeLog() is called are written to STDERR",
    b"Unable to register cuDNN factory",
    b"Unable to register cuFFT factory",
    b"Unable to register cuBLAS factory",
    b"computation placer already registered",
    # oneDNN lacks an int32 or int64 kernel on some CPUs; Eigen's runs instead (a graph
    # run without Grappler's rewrites meets the int32 one).
    b"only on platforms with AVX-512. Falling back to the default Eigen-based",
)


def is_noise(line: bytes) -> bool:
    return bool(CPP_INFO_OR_WARNING.match(line)) or any(text in line for text in NOT_AN_ERROR)


@contextlib.contextmanager
def quiet_tensorflow() -> Iterator[None]:
    """Filter TensorFlow's log lines out of standard error while the body runs."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # no INFO lines are even made
    if sys.stderr is not sys.__stderr__ or not _has_descriptor(2):
        yield  # stderr is captured already (tests, notebooks): leave it alone
        return
    sys.stderr.flush()
    terminal = os.dup(2)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)
    copier = threading.Thread(target=_copy_lines, args=(read_end, terminal), daemon=True)
    copier.start()
    try:
        _quiet_python_loggers()
        yield
    finally:
        sys.stderr.flush()
        os.dup2(terminal, 2)  # the pipe's last write end closes: the copier ends
        copier.join(timeout=5)
        os.close(terminal)


def _copy_lines(read_end: int, terminal: int) -> None:
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        pending = b""
        while chunk := pipe.read(65536):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            _write(terminal, [line + b"\n" for line in lines if not is_noise(line)])
        if pending and not is_noise(pending):
            _write(terminal, [pending])


def _write(descriptor: int, lines: list[bytes]) -> None:
    data = b"".join(lines)
    while data:
        data = data[os.write(descriptor, data) :]


def _has_descriptor(descriptor: int) -> bool:
    try:
        os.fstat(descriptor)
    except OSError:
        return False
    return True


def _quiet_python_loggers() -> None:
    import logging

    logging.getLogger("tensorflow").setLevel(logging.ERROR)
    logging.getLogger("absl").setLevel(logging.ERROR)
