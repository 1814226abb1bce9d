"""The files of a LiteRT export: the ``.tflite`` model and what its runner needs beside it.

``kerasformer export-litert EXPORT --out NAME.tflite`` writes:

    NAME.tflite     the model (builtin ops only): token ids in, probabilities out
    NAME.json       its settings: kind, input and output names, class or tag names, ...
    NAME.vocab.txt  a classifier's vocabulary, one word per line (line i is id i)
"""

from __future__ import annotations

import hashlib
import json
import os
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
# ... of the model file written with them, and of a tagger's own word lists inside them,
# so that settings beside another model, or cut by hand, are refused, not read wrongly.
MODEL_SHA256 = "model_sha256"
TAGGER_SHA256 = "tagger_sha256"


def is_litert_model(path: str | Path) -> bool:
    """Whether ``path`` names a LiteRT model (``NAME.tflite``) rather than an export
    directory; the commands that serve both read it with `kerasformer.litert`."""
    return str(path).lower().endswith(".tflite")


def fingerprint(data: bytes) -> str:
    """The SHA-256 of ``data``, as the settings record a file written with them."""
    return hashlib.sha256(data).hexdigest()


def tagger_fingerprint(tagger: dict) -> str:
    """The `fingerprint` of a tagger's settings (words, characters, tags) as canonical JSON."""
    text = json.dumps(tagger, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return fingerprint(text.encode("utf-8"))


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

    ``settings`` is ``NAME.json`` and ``vocabulary`` ``NAME.vocab.txt`` (a classifier's);
    ``read_settings`` and ``read_vocabulary`` read them, refusing files that were not
    written together.

    Args:
        model: The ``.tflite`` file; the others share its name. `LiteRTFiles.of` also
            takes a string.

    Examples:
        >>> files = LiteRTFiles.of("saved_models/bbc_news-transformer.tflite")
        >>> files.settings, files.vocabulary
        (PosixPath('saved_models/bbc_news-transformer.json'),
         PosixPath('saved_models/bbc_news-transformer.vocab.txt'))
        >>> files.read_settings("classifier")["class_names"]
        ['business', 'entertainment', 'politics', 'sports', 'tech']
    """

    model: Path

    @classmethod
    def of(cls, model) -> LiteRTFiles:
        """The files of ``model``, a path of a ``.tflite`` file (str or path-like)."""
        if not isinstance(model, str | os.PathLike) or not str(model):
            raise KerasformerError(
                f"give the path of a .tflite file that `kerasformer export-litert` wrote, "
                f"got {model!r}."
            )
        return cls(Path(model))

    def damaged(self, error: Exception) -> KerasformerError:
        """The error for settings that hold what the runner cannot use."""
        return KerasformerError(
            f"{self.settings} is damaged ({type(error).__name__}: {error}); export again "
            "with `kerasformer export-litert`."
        )

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
        self.require_written_together(settings)
        return settings

    def require_written_together(self, settings: dict) -> None:
        """The settings are those written with this model, unchanged (exports written
        before the fingerprints were recorded are taken as they are)."""
        model_sha256 = settings.get(MODEL_SHA256)
        if model_sha256 is not None and model_sha256 != fingerprint(self.model.read_bytes()):
            raise KerasformerError(
                f"{self.settings} was not written with {self.model.name} (another model's "
                "settings); keep the files `kerasformer export-litert` wrote together, or "
                "export again."
            )
        tagger = settings.get("tagger")
        recorded = settings.get(TAGGER_SHA256)
        if recorded is not None and (
            not isinstance(tagger, dict) or tagger_fingerprint(tagger) != recorded
        ):
            raise KerasformerError(
                f"{self.settings}: the tagger's words, characters or tags changed since "
                "`kerasformer export-litert` wrote them; export again."
            )

    def read_vocabulary(self, settings: dict) -> list[str]:
        """The vocabulary written with ``settings``, one word per line."""
        try:
            data = self.vocabulary.read_bytes()
            words = vocabulary_lines(data)
        except (OSError, UnicodeDecodeError):
            words = None
        if words is None or fingerprint(data) != settings.get(VOCABULARY_SHA256):
            raise KerasformerError(
                f"{self.vocabulary} is missing or not the vocabulary exported with "
                f"{self.model.name}; keep the files `kerasformer export-litert` wrote "
                "together, or export again."
            )
        return words
