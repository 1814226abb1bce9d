"""A pytest plugin: the CPU time of each test, its own and its subprocesses', in the
closing report beside ``--durations``.

The suite is bound by CPU, not by waiting: on a 2-core machine its two workers and the
processes they start keep both cores busy (three workers took as long as two). So what
a test costs the suite is its CPU seconds, and a test that starts TensorFlow in a fresh
process pays there, where ``--durations`` shows only the wait. Each phase (setup, call,
teardown) is measured in the process that runs it, so a session fixture's training is
charged to the test that made it, as ``--durations`` charges its wall time; a subprocess
counts once it has ended and been waited for (``subprocess.run`` waits).

``--cpu-report N`` sets how many tests are listed (default 30, 0 for none).
"""

from __future__ import annotations

import os
import time
from collections import defaultdict

import pytest

PROPERTY = "cpu_seconds"  # (own, subprocesses') of one phase, sent back by pytest-xdist
START = pytest.StashKey[tuple[float, float, float]]()


def cpu_seconds() -> tuple[float, float]:
    """This process's CPU seconds so far, and those of its ended, waited-for children."""
    times = os.times()
    return times.user + times.system, times.children_user + times.children_system


def pytest_addoption(parser):
    parser.addoption(
        "--cpu-report", type=int, default=30, metavar="N",
        help="list the N tests that used the most CPU, subprocesses included (0: none)",
    )  # fmt: skip


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    item.stash[START] = (time.monotonic(), *cpu_seconds())
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    item.stash[START] = (time.monotonic(), *cpu_seconds())
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item):
    item.stash[START] = (time.monotonic(), *cpu_seconds())
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    started = item.stash.get(START, None)
    if started is not None:
        own, children = cpu_seconds()
        report.user_properties.append((PROPERTY, (own - started[1], children - started[2])))
    return report


class CpuReport:
    """Collects every phase's CPU seconds (from the workers too) and prints the totals."""

    def __init__(self, listed: int):
        self.listed = listed
        self.by_test: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        self.started = time.monotonic()

    def pytest_runtest_logreport(self, report):
        for name, value in report.user_properties:
            if name == PROPERTY:
                own, children = value
                self.by_test[report.nodeid][0] += own
                self.by_test[report.nodeid][1] += children

    def pytest_terminal_summary(self, terminalreporter):
        if not self.by_test:
            return
        own = sum(seconds[0] for seconds in self.by_test.values())
        children = sum(seconds[1] for seconds in self.by_test.values())
        wall = time.monotonic() - self.started
        write = terminalreporter.write_line
        terminalreporter.write_sep("=", f"most CPU, subprocesses included: {self.listed} tests")
        ranked = sorted(self.by_test.items(), key=lambda item: -sum(item[1]))
        for nodeid, (mine, theirs) in ranked[: self.listed]:
            write(f"{mine + theirs:8.1f}s ({theirs:6.1f}s in subprocesses)  {nodeid}")
        write(
            f"CPU: {own + children:,.0f} s in tests ({children:,.0f} s of it in the processes "
            f"they started) over {wall:,.0f} s of wall time: {(own + children) / wall:.2f} "
            "cores busy on average"
        )


def pytest_configure(config):
    listed = config.getoption("--cpu-report")
    # In the controller (or a run without pytest-xdist), where every report arrives.
    if listed > 0 and not hasattr(config, "workerinput"):
        config.pluginmanager.register(CpuReport(listed), "cpu_report_summary")
