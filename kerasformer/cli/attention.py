"""``kerasformer attention``: what any exported model attends to, as a PNG and an HTML page.

Every export with attention is read: the from-scratch classifier, BERT classifiers and
question answerers (from encoders written by ``convert-bert``), the transformer and RNN
translators and the language model. The PNG shows one layer (every head as a heatmap)
or, with ``--head``, one head as lines from each token to the tokens it attends to;
``--html`` writes every layer and head of every attention to one offline page.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from kerasformer.cli._arguments import add_model_argument, non_negative_int
from kerasformer.cli.command import Command
from kerasformer.cli.inputs import decode
from kerasformer.cli.outputs import (
    add_overwrite_argument,
    require_output_file,
    save_picture,
    write_output,
)
from kerasformer.errors import KerasformerError

ATTENTION_NAMES = {
    "self": "self-attention",
    "encoder-self": "encoder self-attention",
    "decoder-self": "decoder self-attention",
    "cross": "cross-attention",
}


HELP = "draw what an exported model attends to for a text"
DESCRIPTION = (
    "Draw the attention of an exported model for TEXT: every head of one "
    "layer as heatmaps (queries down, keys across), or one head as lines with --head, "
    "in a PNG; --html writes every layer and head to an interactive page that works "
    "offline. Classifiers (from scratch or BERT), question answerers (TEXT is the "
    "question, --context the paragraph), translators (encoder self-, decoder self- and "
    "cross-attention over the greedy translation) and language models (the prompt)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_argument(parser)
    parser.add_argument("text", metavar="TEXT", help="the text to look at; short ones read best")
    parser.add_argument(
        "--second", "--context", dest="second", metavar="TEXT",
        help="a second text: the second sentence of a BERT sentence pair, or the context "
        "of a question answerer's question",
    )  # fmt: skip
    parser.add_argument(
        "--out", default="attention.png", help="where to write the picture (default %(default)s)"
    )
    parser.add_argument("--html", metavar="FILE", help="also write every layer and head here")
    parser.add_argument(
        "--layer", "--block", dest="layer", type=non_negative_int, default=0,
        help="which layer (block) to draw, counting from 0 (default %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--head", type=non_negative_int, default=None,
        help="draw only this head (from 0), as lines from each token to what it attends to",
    )  # fmt: skip
    parser.add_argument(
        "--attention", choices=sorted(ATTENTION_NAMES), default=None,
        help="which attention of a translator to draw (default: the model's first: "
        "encoder-self)",
    )  # fmt: skip
    add_overwrite_argument(parser)


def run(args: argparse.Namespace) -> int:
    out = require_output_file(with_png_suffix(args.out), "--out", args.overwrite)
    html = require_output_file(args.html, "--html", args.overwrite) if args.html else None
    text = argument_text(args.text, "TEXT")
    second = None if args.second is None else argument_text(args.second, "--second")
    from kerasformer.loading.attention import export_attention_maps

    maps = export_attention_maps(Path(args.model), text, second)
    chosen = chosen_map(maps, args.attention)
    figure = picture(chosen, args.layer, args.head, title=str(args.model))
    path = save_picture(figure, out, "--out", args.overwrite)
    print(f"{len(chosen.query_tokens)} tokens: {' '.join(chosen.query_tokens)}")
    what = "every head" if args.head is None else f"head {args.head}"
    print(f"{chosen.name.capitalize()}, layer {args.layer}, {what}, written to {path}")
    if html is not None:
        write_html(maps, html, title=f"{args.model}: {text}")
        print(f"Every layer and head of {len(maps)} attention(s) written to {html}")
    return 0


def with_png_suffix(path: str) -> Path:
    path = Path(path)
    return path if path.suffix else path.with_suffix(".png")


def argument_text(argument: str, where: str) -> str:
    """The argument as text, refused in one line if it is not UTF-8 or has no words."""
    item = decode(os.fsencode(argument), where)
    if item.problem is not None:
        raise KerasformerError(f"{item.problem}.")
    if not item.text.strip():
        raise KerasformerError(f"{where} is empty; give a text with words in it.")
    return item.text


def chosen_map(maps: list, option: str | None):
    if option is None:
        return maps[0]
    by_name = {found.name: found for found in maps}
    if ATTENTION_NAMES[option] not in by_name:
        names = [key for key, name in ATTENTION_NAMES.items() if name in by_name]
        raise KerasformerError(
            f"this model has no {ATTENTION_NAMES[option]}; choose --attention from: "
            f"{', '.join(names)}."
        )
    return by_name[ATTENTION_NAMES[option]]


def picture(found, layer: int, head: int | None, title: str):
    """One layer's heads as heatmaps, or one head as lines."""
    from kerasformer.plots import plot_attention_heads, plot_head_view

    if head is None:
        return plot_attention_heads(
            found.query_tokens, found.layer(layer), key_tokens=found.key_tokens,
            title=f"{title}: {found.name}, layer {layer}, {found.heads} heads",
        )  # fmt: skip
    return plot_head_view(
        found.query_tokens, found.key_tokens, found.head(layer, head),
        title=f"{title}: {found.name}, layer {layer}, head {head}",
        segment_start=found.segment_start,
    )  # fmt: skip


def write_html(maps: list, path: Path, title: str) -> Path:
    from kerasformer.plots import attention_html

    page = attention_html(maps, title=title)
    return write_output(path, lambda partial: partial.write_text(page, encoding="utf-8"))


COMMAND = Command("attention", HELP, DESCRIPTION, add_arguments, run)
