"""Running one Keras 3 training per named setting, as the lever benchmarks do."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path


def run_each_setting(
    script: str,
    settings: Mapping[str, dict],
    only: list[str] | None,
    run_setting: Callable[[str, dict], dict],
    out: Path,
    indent: int | None = 2,
) -> None:
    """``run_setting(name, changes)`` for each setting (those in ``only``, if given),
    the results written to ``out`` after each, with the Keras, backend and devices."""
    import keras

    results = {
        "command": f"python bench/{script} " + " ".join(sys.argv[1:]),
        "keras": keras.__version__,
        "backend": keras.backend.backend(),
        "devices": device_names(),
        "runs": {},
    }
    for name, changes in settings.items():
        if only and name not in only:
            continue
        results["runs"][name] = run_setting(name, changes)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=indent) + "\n")


def device_names() -> list[str]:
    try:
        import jax

        return [str(device) for device in jax.devices()]
    except ImportError:
        return []
