"""The closing CPU report (tests/helpers/cpu_report.py) charges each test the CPU it and
its subprocesses used, not the time it waited."""

import re
from pathlib import Path

import pytest

REPOSITORY_ROOT = Path(__file__).resolve().parents[1]

TESTS = """
import subprocess, sys, time

BUSY = "import time\\nstart = time.process_time()\\nwhile time.process_time() - start < 0.6: pass"


def test_busy_subprocess():
    subprocess.run([sys.executable, "-c", BUSY], check=True)


def test_busy_here():
    start = time.process_time()
    while time.process_time() - start < 0.4:
        pass


def test_sleeping():
    time.sleep(0.6)
"""


def test_each_test_is_charged_its_own_and_its_subprocesses_cpu_not_its_waiting(
    pytester, monkeypatch
):
    monkeypatch.setenv("PYTHONPATH", str(REPOSITORY_ROOT))
    pytester.makepyfile(test_work=TESTS)
    result = pytester.runpytest_subprocess(
        "-p", "tests.helpers.cpu_report", "-p", "no:cacheprovider", "--cpu-report", "3"
    )
    result.assert_outcomes(passed=3)
    report = result.stdout.str()

    total, in_subprocesses = listed(report, "test_busy_subprocess")
    assert in_subprocesses >= 0.55 and total >= in_subprocesses
    assert listed(report, "test_busy_here")[0] >= 0.35
    assert listed(report, "test_sleeping") == (pytest.approx(0.0, abs=0.1),) * 2
    totals = re.search(r"CPU: ([\d,]+) s in tests .* ([\d.]+) cores busy on average", report)
    assert totals and int(totals[1].replace(",", "")) >= 1, report


def listed(report: str, test: str) -> tuple[float, float]:
    """(total, in subprocesses) CPU seconds the report gives ``test``."""
    found = re.search(rf"([\d.]+)s \(\s*([\d.]+)s in subprocesses\)  \S*::{test}$", report, re.M)
    assert found, report
    return float(found[1]), float(found[2])
