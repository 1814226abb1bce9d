"""The files of a LiteRT export: the ``.tflite`` model and what its runner needs beside it.

``kerasformer export-litert EXPORT --out NAME.tflite`` writes:

    NAME.tflite     the model (builtin ops only): token ids in, probabilities out
    NAME.json       its settings: kind, input and output names, class or tag names, ...
    NAME.vocab.txt  a classifier's vocabulary, one word per line (line i is id i)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from kerasformer.errors import KerasformerError
from kerasformer.litert.word_ids import vocabulary_lines

# Marks a settings file as kerasformer's LiteRT settings (and its layout's version).
FORMAT_KEY, FORMAT = "kerasformer_litert", 1
CLASSIFIER, TAGGER = "classifier", "tagger"
SIGNATURE = "serving_default"
# none: float32 weights; dynamic: int8 weights, float activations (dynamic-range
# quantisation, no calibration data); float16: float16 weights, float32 compute on CPU.
QUANTIZATIONS = ("dynamic", "float16", "none")
# The settings' record of the vocabulary file written with them.
VOCABULARY_SHA256 = "vocabulary_sha256"


def is_litert_model(path: str | Path) -> bool:
    """Whether ``path`` names a LiteRT model (``NAME.tflite``) rather than an export
    directory; the commands that serve both read it with `kerasformer.litert`."""
    return str(path).lower().endswith(".tflite")


def vocabulary_fingerprint(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_litert_settings(path: Path) -> dict | None:
    """The settings in ``path`` if they are kerasformer's LiteRT settings, else None."""
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return settings if isinstance(settings, dict) and settings.get(FORMAT_KEY) == FORMAT else None


@dataclass(frozen=True)
class LiteRTFiles:
    """Where a LiteRT export's files are, named after its model file.

    Args:
        model: The ``.tflite`` file; the others share its name.

    Example:

    >>> LiteRTFiles(Path("ag_news.tflite")).vocabulary
    PosixPath('ag_news.vocab.txt')
    """

    model: Path

    @property
    def settings(self) -> Path:
        return self.model.with_suffix(".json")

    @property
    def vocabulary(self) -> Path:
        return self.model.with_suffix(".vocab.txt")

    def read_settings(self, kind: str) -> dict:
        """The settings written with the model, checked to be a ``kind``'s."""
        if not self.model.is_file():
            raise KerasformerError(
                f"{self.model} does not exist; pass the .tflite file that "
                "`kerasformer export-litert` wrote."
            )
        settings = read_litert_settings(self.settings)
        if settings is None:
            raise KerasformerError(
                f"{self.settings} is missing or not kerasformer's LiteRT settings; keep "
                f"the files `kerasformer export-litert` wrote beside {self.model.name}, or "
                "export again."
            )
        if settings.get("kind") != kind:
            raise KerasformerError(
                f"{self.model} is a LiteRT {settings.get('kind')}, not a {kind}; load it "
                f"with the {settings.get('kind')}'s runner."
            )
        return settings

    def read_vocabulary(self, settings: dict) -> list[str]:
        """The vocabulary written with ``settings``, one word per line."""
        try:
            data = self.vocabulary.read_bytes()
            words = vocabulary_lines(data)
        except (OSError, UnicodeDecodeError):
            words = None
        if words is None or vocabulary_fingerprint(data) != settings.get(VOCABULARY_SHA256):
            raise KerasformerError(
                f"{self.vocabulary} is missing or not the vocabulary exported with "
                f"{self.model.name}; keep the files `kerasformer export-litert` wrote "
                "together, or export again."
            )
        return words
