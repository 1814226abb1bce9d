"""How long ``kerasformer --help`` takes to start, through the console script's entry
point (`kerasformer_command`: tf-keras alone) and through ``python -m kerasformer.cli.main``
(the package as Python imports it, Keras 3 included).

    python bench/command_start.py --repeats 5

Each repeat runs the two once, alternately, in fresh interpreters; the medians and their
ratio go to ``bench/results/command_start.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "command_start.json"
WAYS = {
    "kerasformer_command (the console script)": [sys.executable, "-m", "kerasformer_command"],
    "python -m kerasformer.cli.main": [sys.executable, "-m", "kerasformer.cli.main"],
}


def seconds_to_run(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([*command, "--help"], check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    times = {name: [] for name in WAYS}
    for _ in range(args.repeats):
        for name, command in WAYS.items():
            times[name].append(seconds_to_run(command))
    medians = {name: statistics.median(values) for name, values in times.items()}
    new, old = medians.values()
    result = {
        "command": f"python bench/command_start.py --repeats {args.repeats}",
        "seconds": times,
        "median_seconds": medians,
        "ratio": new / old,
    }
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    for name, median in medians.items():
        print(f"{name}: median {median:.2f} s of {args.repeats}")
    print(f"ratio {new / old:.2f}")


if __name__ == "__main__":
    main()
