"""The benchmark scripts of ``bench/``, loaded as modules so a test calls their ``main``."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def bench_script(name: str, monkeypatch) -> ModuleType:
    """``bench/NAME.py`` as a module, with ``bench/`` on ``sys.path`` (its ``tables`` and
    ``smoke`` modules), as when the script is run from there; ``monkeypatch`` undoes it."""
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
