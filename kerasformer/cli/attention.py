"""``kerasformer attention``: one heatmap per attention head for a text, as a PNG."""

from __future__ import annotations

import argparse

from kerasformer.cli._arguments import add_model_argument, non_negative_int


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "attention",
        help="draw the attention heads of a trained transformer for a text",
        description="Draw each attention head of one TransformerBlock of an exported "
        "transformer classifier as a heatmap over the text's tokens (queries down, keys "
        "across).",
    )
    add_model_argument(parser)
    parser.add_argument("text", metavar="TEXT", help="the text to look at; short ones read best")
    parser.add_argument(
        "--out", default="attention.png", help="where to write the picture (default attention.png)"
    )
    parser.add_argument(
        "--block",
        type=non_negative_int,
        default=0,
        help="which TransformerBlock, counting from 0 (default 0)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from kerasformer.export import load_keras_model
    from kerasformer.models import attention_weights
    from kerasformer.plots import plot_attention_heads, save_figure

    model = load_keras_model(args.model)
    tokens, weights = attention_weights(model, args.text, block=args.block)
    title = f"{args.model}: block {args.block}, {weights.shape[0]} heads"
    path = save_figure(plot_attention_heads(tokens, weights, title=title), args.out)
    print(f"{len(tokens)} tokens: {' '.join(tokens)}")
    print(f"Attention of {weights.shape[0]} heads written to {path}")
    return 0
