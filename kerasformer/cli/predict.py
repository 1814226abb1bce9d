"""``kerasformer predict``: the top class and the probabilities of each text."""

from __future__ import annotations

import argparse
import json
import sys

from kerasformer.cli._arguments import add_model_argument


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "predict",
        help="classify texts with an exported model",
        description="Classify texts with an exported model. Give texts as arguments, or '-' "
        "to read one text per line from standard input.",
    )
    add_model_argument(parser)
    parser.add_argument("texts", metavar="TEXT", nargs="+", help="texts to classify, or '-'")
    parser.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from kerasformer.export import ExportedClassifier

    texts = read_texts(args.texts)
    classifier = ExportedClassifier(args.model)
    probabilities = classifier.predict_proba(texts)
    for text, row in zip(texts, probabilities, strict=True):
        scores = dict(zip(classifier.class_names, (round(float(p), 4) for p in row), strict=True))
        top = max(scores, key=scores.get)
        if args.json:
            print(json.dumps({"text": text, "class": top, "probabilities": scores}))
        else:
            ranked = "  ".join(
                f"{name} {p:.3f}" for name, p in sorted(scores.items(), key=lambda kv: -kv[1])
            )
            print(f"{top:<14} {shorten(text)}\n{'':<14} {ranked}")
    return 0


def read_texts(arguments: list[str]) -> list[str]:
    if arguments == ["-"]:
        return [line.rstrip("\n") for line in sys.stdin if line.strip()]
    return arguments


def shorten(text: str, width: int = 70) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
