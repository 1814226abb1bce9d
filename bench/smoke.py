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


# The smallest language model (TINY_TRANSFORMER with a 16-token window), and a vocabulary
# just large enough for an adaptive softmax: a head of ids 0-3, then clusters 4-8 and 9-39.
TINY_LANGUAGE_MODEL = dict(TINY_TRANSFORMER, maxlen=16)
TINY_VOCAB_SIZE = 40
TINY_CUTOFFS = [4, 9]


def parse_with_smoke_defaults(
    parser: argparse.ArgumentParser, argv: list[str] | None, **defaults
) -> argparse.Namespace:
    """``parser``'s arguments, with ``defaults`` in place of its own under ``--smoke``, so
    that a flag given on the command line still wins over the smoke run's size."""
    args = parser.parse_args(argv)
    if args.smoke:
        parser.set_defaults(**defaults)
        args = parser.parse_args(argv)
    return args


def add_bert_dir_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bert-dir", type=Path,
        help="a BERT already converted (kerasformer convert-bert --out DIR: DIR/preprocess, "
             "DIR/encoder) to fine-tune instead of MiniLM, e.g. a smoke run's tiny one",
    )  # fmt: skip


def converted_bert_in(directory: Path):
    """The `HubBert` that ``kerasformer convert-bert --out directory`` wrote."""
    from kerasformer.export import HubBert

    return HubBert(preprocess=directory / "preprocess", encoder=directory / "encoder")


def made_up_id_bounds(encoder: str | Path) -> tuple[int, int]:
    """Bounds of made-up word-piece ids for ``encoder``: [1000, 20000), as the benchmarks
    draw them for MiniLM's 30,522 word pieces, cut to a smaller vocabulary's (a smoke
    run's tiny BERT has a few dozen) so that every id has an embedding."""
    # convert-bert keeps the vocabulary beside the encoder's weights, one piece a line.
    vocabulary = Path(encoder) / "assets" / "vocab.txt"
    size = len(vocabulary.read_text(encoding="utf-8").splitlines())
    high = min(20000, size)
    return min(1000, high // 2), high
