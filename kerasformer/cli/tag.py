"""``kerasformer tag``: mark the named entities of texts with an exported tagger."""

from __future__ import annotations

import argparse
import contextlib
import sys

from kerasformer.cli._arguments import add_model_argument
from kerasformer.cli.command import Command
from kerasformer.cli.inputs import (
    EXIT_STATUS,
    add_input_arguments,
    print_records,
    read_inputs,
    records_for,
)
from kerasformer.cli.outputs import add_overwrite_argument, require_output_file, save_picture
from kerasformer.cli.predict import LITERT_MODEL_HELP
from kerasformer.litert.files import is_litert_model

HELP = "mark named entities with a model from `train --task ner`"
DESCRIPTION = (
    "MODEL is a tagger's export, or its LiteRT model (MODEL.tflite, run without "
    "TensorFlow). Print each TEXT with its entities marked as [text]TYPE, one line each, or with "
    "--json its words, tags and entities (character offsets, end exclusive, and the mean "
    "probability of the entity's tags). '-' reads one text per line of standard input, "
    "--input-file one per line of a file. --plot draws the first text that has a word, "
    "with its entities highlighted by type. " + EXIT_STATUS
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_argument(parser, LITERT_MODEL_HELP)
    add_input_arguments(parser, "TEXT", "text to tag")
    parser.add_argument("--plot", metavar="PNG", help="draw the first text's entities here")
    add_overwrite_argument(parser)


def run(args: argparse.Namespace) -> int:
    if args.plot:
        require_output_file(args.plot, "--plot", args.overwrite)
    inputs = read_inputs(args.texts, args.input_file, noun="text")
    if is_litert_model(args.model):  # LiteRT alone: no TensorFlow
        from kerasformer.litert.tagger import LiteRTTagger

        tagger, serving = LiteRTTagger(args.model), contextlib.nullcontext()
    else:  # the export's own signature: TensorFlow (and TF Text's ops) alone
        from kerasformer.loading.exported_tagger import ExportedTagger
        from kerasformer.loading.serving_function import without_graph_rewrites

        tagger, serving = ExportedTagger(args.model), without_graph_rewrites()
    with serving:
        records = records_for(inputs, tagger.tag)
    status = print_records(inputs, records, args.json, marked_text)
    if args.plot:
        draw_first_text(records, tagger, args)
    return status


def draw_first_text(records: list[dict], tagger, args: argparse.Namespace) -> None:
    """``--plot``: the first text that has a word, and which one it is if not the first."""
    from kerasformer.plots import plot_entities

    said = sys.stderr if args.json else sys.stdout
    drawable = [i for i, r in enumerate(records) if r["status"] == "ok" and r["text"].strip()]
    if not drawable:
        print(f"warning: no text has a word to draw; {args.plot} is not written.", file=said)
        return
    record = records[drawable[0]]
    figure = plot_entities(record["text"], record["entities"], tagger.entity_types(),
                           title=str(args.model))  # fmt: skip
    path = save_picture(figure, args.plot, "--plot", args.overwrite)
    which = f" of text {drawable[0] + 1} (the first with a word)" if drawable[0] else ""
    print(f"Entities{which} drawn in {path}", file=said)


def marked_text(record: dict) -> str:
    """The text with each entity as ``[text]TYPE``."""
    text, pieces, at = record["text"], [], 0
    for entity in record.get("entities", []):
        pieces += [text[at : entity["start"]], f"[{entity['text']}]{entity['type']}"]
        at = entity["end"]
    return "".join([*pieces, text[at:]])


COMMAND = Command("tag", HELP, DESCRIPTION, add_arguments, run)
