"""``bench/command_start.py --smoke`` runs, and each command imports only what its export
needs: the smallest export of each kind made and read by the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "command_start.py"
# What a command that serves a model never needs (scoring, plotting, the BERT stack, and
# JAX, which TensorFlow imports where it is installed, as it is for these tests).
NEVER_TO_SERVE = {"sklearn", "matplotlib", "tensorflow_hub", "sentencepiece", "jax"}


@pytest.mark.slow
def test_each_command_imports_only_what_its_export_needs(tmp_path):
    """Slow (about a minute and a half): it trains four tiny exports through the command
    line and runs each command once, in a fresh process, as a user would."""
    output = tmp_path / "command_start.json"
    subprocess.run(
        [sys.executable, str(BENCH), "--smoke", "--workdir", str(tmp_path / "work"),
         "--output", str(output)],
        check=True, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    imports = json.loads(output.read_text())["imports"]["after"]
    for words in ("--help", "train --help", "refusal: train --epochs -1",
                  "refusal: predict NOT_AN_EXPORT"):  # fmt: skip
        assert imports[words] == [], words
    assert imports["predict (LiteRT)"] == imports["tag (LiteRT)"] == ["ai_edge_litert"]
    # A from-scratch classifier's SavedModel is served by TensorFlow alone.
    assert imports["predict (SavedModel)"] == ["tensorflow"]
    for name, loaded in imports.items():
        assert not NEVER_TO_SERVE & set(loaded), (name, loaded)
    # So are a tagger's, a translator's and a language model's, through their signatures.
    for name in ("tag (SavedModel)", "translate", "generate"):
        assert imports[name] == ["tensorflow"], name
