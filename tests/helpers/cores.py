"""TensorFlow's thread pools sized to each pytest-xdist worker's share of the cores."""

from __future__ import annotations

import os

THREAD_POOL_VARIABLES = ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS")


def worker_thread_pools() -> dict[str, str]:
    """In a pytest-xdist worker, the variables that size TensorFlow's thread pools to the
    cores divided among the workers (at least 1 thread), unless they are set already;
    none in the controller or outside xdist, where TensorFlow's defaults stay."""
    if "PYTEST_XDIST_WORKER" not in os.environ:  # xdist sets it with the worker count
        return {}
    workers = int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
    threads = str(max(1, len(os.sched_getaffinity(0)) // workers))
    return {name: threads for name in THREAD_POOL_VARIABLES if name not in os.environ}
