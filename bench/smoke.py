"""What every benchmark script's ``--smoke`` mode shares: a run small enough for CI.

A smoke run goes down the script's whole path (data, training, export, measuring, its
table) on the data it is given, with the smallest model, one epoch, one seed and the
first of each list of settings, so that a change to kerasformer that breaks a benchmark
fails CI (``tests/bench/`` runs every script so) without the benchmark's hours. Its
numbers mean nothing, so it writes its results only where it is told, never into
``bench/results/``, whose files are the measured ones the README reports.
"""

from __future__ import annotations

import argparse
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
# The smallest from-scratch classifier and sequence models that still run every layer.
TINY_CLASSIFIER = dict(vocab_size=200, maxlen=32, embed_dim=8, num_heads=2, ff_dim=8)
TINY_TRANSFORMER = dict(embed_dim=8, num_heads=2, ff_dim=8, num_layers=1)


def add_smoke_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--smoke", action="store_true",
        help="a run small enough for CI on the data given (results only outside bench/results)",
    )  # fmt: skip


def require_smoke_output(smoke: bool, path: str | Path | None, flag: str) -> None:
    """Refuse a smoke run whose results would land in bench/results/ (or nowhere named)."""
    if not smoke:
        return
    if path is None or Path(path).resolve().is_relative_to(RESULTS):
        raise SystemExit(
            f"--smoke measures nothing worth keeping; give {flag} PATH outside {RESULTS}."
        )
