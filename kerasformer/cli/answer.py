"""``kerasformer answer``: answer a question from a context with an exported model."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kerasformer.cli._arguments import add_model_argument
from kerasformer.cli.command import Command
from kerasformer.cli.inputs import (
    EXIT_STATUS,
    STDIN,
    InputText,
    add_json_argument,
    print_records,
    read_file_text,
    read_inputs,
    records_for,
    with_problems,
)
from kerasformer.cli.outputs import add_overwrite_argument, require_output_file, save_picture

PAIR_FORMAT = 'give one {"question": "...", "context": "..."} per line'


HELP = "answer questions from paragraphs with a model from `train --task question-answering`"
DESCRIPTION = (
    "Print the span of the context that answers the question, its "
    "character offsets in the context (start inclusive, end exclusive) and its score "
    "(start probability × end probability). A context longer than the model's sequence "
    "length is read whole, window by window. Give one pair with --question and "
    "--context (or --context-file), and any number as JSON lines "
    '{"question": ..., "context": ...}: \'-\' reads them from standard input, '
    "--input-file from a file. Each pair gets one record, in order (two lines, or one "
    "JSON line with --json); a line that is no such pair gets an error record and the "
    "others are answered. --plot draws the start and end probability of every context "
    "token of the first pair. " + EXIT_STATUS
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_argument(parser)
    parser.add_argument(
        "texts", metavar="-", nargs="*",
        help="read JSON lines of question and context from standard input",
    )  # fmt: skip
    parser.add_argument("--question", help="the question")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--context", help="the paragraph to search")
    source.add_argument("--context-file", type=Path, help="read the paragraph from a UTF-8 file")
    parser.add_argument(
        "--input-file", type=Path, metavar="FILE",
        help='read JSON lines {"question": ..., "context": ...} from FILE',
    )  # fmt: skip
    add_json_argument(parser)
    parser.add_argument("--plot", metavar="PNG", help="draw the start/end probabilities here")
    add_overwrite_argument(parser)


def run(args: argparse.Namespace) -> int:
    from kerasformer.loading.exported_question_answerer import serving_answerer
    from kerasformer.loading.serving_function import without_graph_rewrites

    if args.plot:
        require_output_file(args.plot, "--plot", args.overwrite)
    inputs = with_problems(read_pairs(args), pair_problem)
    answerer = serving_answerer(args.model, token_probabilities=bool(args.plot))
    with without_graph_rewrites():
        records = records_for(inputs, lambda lines: answer_all(answerer, lines))
    status = print_records(inputs, records, args.json, answer_lines)
    if args.plot and records[0]["status"] == "ok":
        question, context = parse_pair(inputs[0].text)
        figure = span_plot(answerer, question, context, records[0])
        path = save_picture(figure, args.plot, "--plot", args.overwrite)
        print(f"Probabilities written to {path}", file=sys.stderr if args.json else sys.stdout)
    return status


def read_pairs(args: argparse.Namespace) -> list[InputText]:
    """The --question/--context pair, then the JSON lines of stdin and --input-file."""
    from kerasformer.errors import KerasformerError

    given = args.context is not None or args.context_file is not None
    if (args.question is None) != (not given):
        raise KerasformerError(
            "--question and --context (or --context-file) go together; give both, or "
            "give pairs as JSON lines with '-' or --input-file."
        )
    if any(text != STDIN for text in args.texts):
        raise KerasformerError(
            f"answer takes no text arguments but '{STDIN}'; give one pair with --question "
            f"and --context, or JSON lines with '{STDIN}' or --input-file."
        )
    pairs = []
    if args.texts or args.input_file is not None or args.question is None:
        pairs = read_inputs(args.texts, args.input_file, noun="pair")
    if args.question is not None:
        pairs.insert(0, question_pair(args.question, args.context, args.context_file))
    return pairs


def question_pair(question: str, context: str | None, context_file: Path | None) -> InputText:
    """--question with --context or --context-file, as the JSON line of one pair."""
    where = "--question and --context"
    if context is not None:
        given = InputText(where, context)
    else:
        given = read_file_text(context_file, "--context-file")
    line = json.dumps({"question": question, "context": given.text}, ensure_ascii=False)
    return InputText(where, line, given.problem)


def parse_pair(line: str) -> tuple[str, str]:
    pair = json.loads(line)
    return pair["question"], pair["context"]


def pair_problem(line: str) -> str | None:
    """Why a line is no question-and-context pair, or None if it is one."""
    try:
        pair = json.loads(line)
    except ValueError as error:
        return f"is not JSON ({error.msg} at column {error.colno}); {PAIR_FORMAT}"
    if not isinstance(pair, dict) or not {"question", "context"} <= pair.keys():
        return f"is not a JSON object with both keys; {PAIR_FORMAT}"
    for key in ("question", "context"):
        if not isinstance(pair[key], str):
            return f"has a {key} that is {type(pair[key]).__name__}, not a string"
        if not pair[key].strip():
            return f"has an empty {key}; give a question and the paragraph that answers it"
    return None


def answer_all(answerer, lines: list[str]) -> list[dict]:
    questions, contexts = zip(*map(parse_pair, lines), strict=True)
    return [
        {
            "answer": str(answer["answer"]),
            "start": int(answer["start"]),
            "end": int(answer["end"]),
            "score": round(float(answer["score"]), 4),
            "no_answer_score": round(float(answer["no_answer_score"]), 4),
        }
        for answer in answerer.answer(list(questions), list(contexts))
    ]


def answer_lines(record: dict) -> str:
    if record["status"] == "error":
        return f"\nerror: {record['message']}"
    if record["start"] < 0:
        return f"(no answer)\nno-answer score {record['no_answer_score']:.3f}"
    return (
        f"{record['answer']}\ncharacters {record['start']}-{record['end']}, "
        f"score {record['score']:.3f}"
    )


def span_plot(answerer, question: str, context: str, answer: dict):
    from kerasformer.plots import plot_span_probabilities

    seen = answerer.token_probabilities(question, context)
    first = len(context[: answer["start"]].encode("utf-8"))
    last = len(context[: answer["end"]].encode("utf-8"))
    inside = [i for i, (s, e) in enumerate(seen["byte_ranges"]) if s >= first and e <= last]
    figure = plot_span_probabilities(
        seen["tokens"], seen["start"], seen["end"],
        answer=(inside[0], inside[-1]) if inside else None,
        title=f"{question} → {answer['answer']}",
    )  # fmt: skip
    return figure


COMMAND = Command("answer", HELP, DESCRIPTION, add_arguments, run)
