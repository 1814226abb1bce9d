"""Shared fixtures: small synthetic data written by the tests, and one trained BBC model."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

TOPIC_WORDS = {
    1: "minister election government treaty parliament embassy war summit",
    2: "match team goal season coach league striker tournament",
    3: "shares profit market bank stocks investors earnings merger",
    4: "software computer internet chip space research satellite browser",
}
COMMON_WORDS = "the a of in on said today new after over".split()


def synthetic_rows(count: int, seed: int) -> list[tuple[str, str, str]]:
    """AG News-style rows whose class is told by its topic words."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(count):
        label = i % 4 + 1
        words = list(rng.choice(TOPIC_WORDS[label].split(), 4)) + list(rng.choice(COMMON_WORDS, 4))
        rng.shuffle(words)
        rows.append((str(label), " ".join(words[:3]).title(), " ".join(words[3:])))
    return rows


def write_ag_csv(path: Path, rows, header: bool = False) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL)
        if header:
            writer.writerow(["Class Index", "Title", "Description"])
        writer.writerows(rows)
    return path


@pytest.fixture(scope="session")
def tiny_ag_news_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ag_news_csv")
    write_ag_csv(root / "train.csv", synthetic_rows(240, seed=0))
    write_ag_csv(root / "test.csv", synthetic_rows(80, seed=1), header=True)
    return root


@pytest.fixture(scope="session")
def trained_bbc(tmp_path_factory):
    """The default model trained on BBC News with default settings, exported once."""
    from kerasformer.training import TrainingConfig, train

    export_dir = tmp_path_factory.mktemp("exports") / "bbc_news-transformer"
    return train(TrainingConfig(dataset="bbc_news", export_dir=str(export_dir)), verbose=0)


def run_python(code: str, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run code in a fresh interpreter, as a user's separate process would."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
