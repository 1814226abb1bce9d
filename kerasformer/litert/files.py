"""The files of a LiteRT export: the ``.tflite`` model and what its runner needs beside it.

``kerasformer export-litert EXPORT --out NAME.tflite`` writes:

    NAME.tflite     the model (builtin ops only): token ids in, probabilities out
    NAME.json       its settings: kind, input and output names, class or tag names, ...
    NAME.vocab.txt  a classifier's vocabulary, one word per line (line i is id i)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from kerasformer.errors import KerasformerError

# Marks a settings file as kerasformer's LiteRT settings (and its layout's version).
FORMAT_KEY, FORMAT = "kerasformer_litert", 1
CLASSIFIER, TAGGER = "classifier", "tagger"
SIGNATURE = "serving_default"


@dataclass(frozen=True)
class LiteRTFiles:
    """Where a LiteRT export's files are, named after its model file."""

    model: Path

    @property
    def settings(self) -> Path:
        return self.model.with_suffix(".json")

    @property
    def vocabulary(self) -> Path:
        return self.model.with_suffix(".vocab.txt")

    def written(self) -> list[Path]:
        return [path for path in (self.model, self.settings, self.vocabulary) if path.is_file()]

    def read_settings(self, kind: str) -> dict:
        """The settings written with the model, checked to be a ``kind``'s."""
        if not self.model.is_file():
            raise KerasformerError(
                f"{self.model} does not exist; pass the .tflite file that "
                "`kerasformer export-litert` wrote."
            )
        try:
            settings = json.loads(self.settings.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            settings = None
        if not isinstance(settings, dict) or settings.get(FORMAT_KEY) != FORMAT:
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
