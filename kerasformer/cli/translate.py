"""``kerasformer translate``: translate sentences with an exported translator."""

from __future__ import annotations

import argparse
import sys

from kerasformer.cli._arguments import add_model_argument, non_negative_int, positive_int
from kerasformer.cli.command import Command
from kerasformer.cli.inputs import (
    EXIT_STATUS,
    add_input_arguments,
    print_records,
    read_inputs,
    records_for,
    unknown_words_warning,
    with_problems,
)
from kerasformer.cli.outputs import add_overwrite_argument, require_output_file, save_picture
from kerasformer.models.defaults import GREEDY

HELP = "translate sentences with a model from `train --task translation`"
DESCRIPTION = (
    "Translate each SENTENCE (greedy decoding, or beam search with "
    "--beam-width), one translation per line, in order; '-' reads one sentence per line "
    "of standard input, --input-file one per line of a file. A sentence that cannot be "
    "translated (no words, too many, not UTF-8) gets an empty line and its error on "
    "standard error, or an error record with --json; the others are translated. "
    "--alignment also draws which "
    "source words each generated word attended to: every head of one decoder block's "
    "cross-attention for the transformer, the Bahdanau alignment matrix for the RNN. " + EXIT_STATUS
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_argument(parser)
    add_input_arguments(parser, "SENTENCE", "sentence to translate")
    parser.add_argument(
        "--beam-width",
        type=positive_int,
        default=GREEDY,
        help=f"{GREEDY} is greedy decoding (default %(default)s)",
    )
    parser.add_argument(
        "--alignment", metavar="PNG", help="draw the first sentence's attention alignment here"
    )
    parser.add_argument(
        "--layer", type=non_negative_int, default=None,
        help="which decoder block's cross-attention to draw (default: the last)",
    )  # fmt: skip
    add_overwrite_argument(parser)


def run(args: argparse.Namespace) -> int:
    from kerasformer.errors import KerasformerError

    if args.alignment:
        require_output_file(args.alignment, "--alignment", args.overwrite)
    inputs = read_inputs(args.texts, args.input_file, noun="sentence")
    translator = served_translator(args)
    inputs = with_problems(inputs, translator.problem)
    records = records_for(
        inputs,
        lambda texts: [
            unknown_words_warning({"translation": translation}, known, "translation")
            for translation, known in zip(
                translator.translate(texts, beam_width=args.beam_width),
                translator.known_words(texts),
                strict=True,
            )  # fmt: skip
        ],
    )
    status = print_records(inputs, records, args.json, lambda r: r.get("translation", ""))
    if args.alignment and records[0]["status"] != "error":
        alignment = translator.alignment(inputs[0].text, beam_width=args.beam_width)
        layers = alignment.weights.shape[0]
        layer = layers - 1 if args.layer is None else args.layer
        if layer >= layers:
            raise KerasformerError(
                f"--layer {layer}: the model has {layers} decoder block(s), counted from 0."
            )
        figure = alignment_figure(alignment, layer, title=str(args.model))
        path = save_picture(figure, args.alignment, "--alignment", args.overwrite)
        print(f"Alignment written to {path}", file=sys.stderr if args.json else sys.stdout)
    return status


def served_translator(args: argparse.Namespace):
    """What translates: `serving_translator`, or the Keras model for --alignment, which
    reads the attention."""
    from kerasformer.loading.exported_translator import serving_translator
    from kerasformer.loading.translator import load_translator

    if args.alignment:
        return load_translator(args.model)
    return serving_translator(args.model, args.beam_width)


def alignment_figure(alignment, layer: int, title: str):
    from kerasformer.plots import plot_alignment, plot_attention_heads

    weights = alignment.weights[layer]
    if weights.shape[0] == 1:  # the RNN: one alignment matrix
        figure = plot_alignment(
            alignment.source_tokens, alignment.target_tokens, weights[0], title=title
        )
    else:
        figure = plot_attention_heads(
            alignment.target_tokens, weights, key_tokens=alignment.source_tokens,
            title=f"{title}: cross-attention of decoder block {layer}",
        )  # fmt: skip
    return figure


COMMAND = Command("translate", HELP, DESCRIPTION, add_arguments, run)
