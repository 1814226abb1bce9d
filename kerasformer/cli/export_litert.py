"""``kerasformer export-litert``: a classifier or tagger as a ``.tflite`` model for LiteRT."""

from __future__ import annotations

import argparse
from pathlib import Path

from kerasformer.cli._arguments import add_model_argument
from kerasformer.cli.command import Command
from kerasformer.cli.outputs import add_overwrite_argument, require_output_file
from kerasformer.errors import KerasformerError
from kerasformer.litert.files import (
    CLASSIFIER,
    QUANTIZATIONS,
    LiteRTFiles,
    read_litert_settings,
)

HELP = "convert a classifier or tagger export to a LiteRT (.tflite) model"
DESCRIPTION = (
    "Write OUT (NAME.tflite, builtin ops only, for ai-edge-litert or tf.lite), NAME.json "
    "(its settings) and, for a classifier, NAME.vocab.txt. LiteRT has no string ops, so "
    "the model reads token ids: run it with kerasformer.litert.LiteRTClassifier or "
    "kerasformer.litert.tagger.LiteRTTagger, which make them from raw text. Takes "
    "from-scratch classifiers (`kerasformer train`) and taggers (`train --task ner`)."
)
QUANTIZE_HELP = (
    "dynamic (default): int8 weights, about 4x smaller; float16: float16 weights, 2x "
    "smaller; none: float32, as trained"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_argument(parser)
    parser.add_argument("--out", required=True, metavar="NAME.tflite", help="model file to write")
    parser.add_argument("--quantize", choices=QUANTIZATIONS, default="dynamic",
                        help=QUANTIZE_HELP)  # fmt: skip
    add_overwrite_argument(parser)


def run(args: argparse.Namespace) -> int:
    files = require_litert_outputs(Path(args.out), args.overwrite)
    from kerasformer.export.litert_export import export_litert

    model, *beside = export_litert(args.model, files.model, args.quantize)
    size = model.stat().st_size / 2**20
    print(f"Wrote {model} ({size:.1f} MiB, {args.quantize}) with "
          f"{', '.join(path.name for path in beside)}.")  # fmt: skip
    return 0


def require_litert_outputs(model: Path, overwrite: bool) -> LiteRTFiles:
    """Refuse, before converting, outputs that would replace files kerasformer did not write."""
    if model.suffix.lower() != ".tflite":
        raise KerasformerError(
            f"--out {model} does not end in .tflite; name the model file, e.g. model.tflite."
        )
    files = LiteRTFiles(require_output_file(model, "--out", overwrite))
    earlier = read_litert_settings(files.settings)
    # A vocabulary is ours only beside the settings of a classifier we exported there.
    ours = {
        files.settings: earlier is not None,
        files.vocabulary: earlier is not None and earlier.get("kind") == CLASSIFIER,
    }
    for path, written_by_us in ours.items():
        if path.is_symlink() or path.is_dir():
            raise KerasformerError(f"{path} is not a plain file; choose another --out.")
        if path.exists() and not (written_by_us or overwrite):
            raise KerasformerError(
                f"{path} exists and was not written by `kerasformer export-litert`; choose "
                "another --out, or pass --overwrite to replace it."
            )
    return files


COMMAND = Command("export-litert", HELP, DESCRIPTION, add_arguments, run)
