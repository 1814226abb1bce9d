"""``kerasformer answer``: answer a question from a context with an exported model."""

from __future__ import annotations

import argparse
from pathlib import Path

from kerasformer.cli._arguments import add_model_argument


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "answer",
        help="answer a question from a paragraph with a model from `train --task "
        "question-answering`",
        description="Print the span of CONTEXT that answers QUESTION, its character "
        "offsets in the context (start inclusive, end exclusive) and its score (start "
        "probability × end probability). A context longer than the model's sequence "
        "length is read whole, window by window. --plot draws the start and end "
        "probability of every context token.",
    )
    add_model_argument(parser)
    parser.add_argument("--question", required=True, help="the question")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--context", help="the paragraph to search")
    source.add_argument("--context-file", type=Path, help="read the paragraph from a UTF-8 file")
    parser.add_argument("--plot", metavar="PNG", help="draw the start/end probabilities here")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from kerasformer.export.question_answerer_export import load_question_answerer

    context = args.context if args.context is not None else read_context(args.context_file)
    answerer = load_question_answerer(args.model)
    answer = answerer.answer([args.question], [context])[0]
    print(answer["answer"])
    print(f"characters {answer['start']}-{answer['end']}, score {answer['score']:.3f}")
    if args.plot:
        path = save_span_plot(answerer, args.question, context, answer, args.plot)
        print(f"Probabilities written to {path}")
    return 0


def read_context(path: Path) -> str:
    from kerasformer.datasets.ag_news import read_utf8_text
    from kerasformer.errors import KerasformerError

    if not path.is_file():
        raise KerasformerError(f"--context-file {path} does not exist; give a UTF-8 text file.")
    return read_utf8_text(path)


def save_span_plot(answerer, question: str, context: str, answer: dict, path):
    from kerasformer.plots import plot_span_probabilities, save_figure

    seen = answerer.token_probabilities(question, context)
    first = len(context[: answer["start"]].encode("utf-8"))
    last = len(context[: answer["end"]].encode("utf-8"))
    inside = [i for i, (s, e) in enumerate(seen["byte_ranges"]) if s >= first and e <= last]
    figure = plot_span_probabilities(
        seen["tokens"], seen["start"], seen["end"],
        answer=(inside[0], inside[-1]) if inside else None,
        title=f"{question} → {answer['answer']}",
    )  # fmt: skip
    return save_figure(figure, path)
