"""``kerasformer generate``: continue prompts with an exported language model."""

from __future__ import annotations

import argparse

from kerasformer.cli._arguments import (
    add_model_argument,
    checked,
    non_negative_int,
    positive_int,
)
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

probability = checked(float, lambda v: 0 < v <= 1, "a number in (0, 1]")
temperature = checked(float, lambda v: 0 <= v < float("inf"), "a number >= 0")


HELP = "continue prompts with a model from `train --task language-model`"
DESCRIPTION = (
    "Continue each PROMPT with up to --max-tokens tokens, one line each. "
    "Tokens are sampled with --temperature, then kept to the --top-k most likely and "
    "the smallest set holding --top-p of the probability; --temperature 0 with no "
    "top-k or top-p is greedy decoding. '-' reads one prompt per line of standard "
    "input, --input-file one per line of a file; an empty prompt, or one too long for "
    "the model's window, gets an empty line and its error on standard error (an error "
    "record with --json), and the others are continued. " + EXIT_STATUS
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_argument(parser)
    add_input_arguments(parser, "PROMPT", "prompt to continue")
    from kerasformer.models.defaults import DEFAULT_MAX_TOKENS
    from kerasformer.models.generation import DEFAULT_SAMPLING as SAMPLING

    parser.add_argument(
        "--max-tokens", type=positive_int, default=DEFAULT_MAX_TOKENS,
        help="(default %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--temperature", type=temperature, default=SAMPLING.temperature,
        help="(default %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--top-k", type=non_negative_int, default=SAMPLING.top_k,
        help="0 for no limit (default %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--top-p", type=probability, default=SAMPLING.top_p, help="(default %(default)s)"
    )
    parser.add_argument("--seed", type=non_negative_int, help="same seed, same text")


def run(args: argparse.Namespace) -> int:
    from kerasformer.models.generation import Sampling

    inputs = read_inputs(args.texts, args.input_file, noun="prompt")
    generator = served_generator(args)
    generator.require_max_tokens(args.max_tokens)
    sampling = Sampling(args.temperature, args.top_k, args.top_p)
    inputs = with_problems(inputs, lambda prompt: generator.problem(prompt, args.max_tokens))
    records = records_for(
        inputs,
        lambda prompts: [
            unknown_words_warning(
                {"continuation": text, "output": f"{prompt} {text}".strip()}, known, "continuation"
            )
            for prompt, text, known in zip(
                prompts,
                generator.generate(prompts, args.max_tokens, sampling),
                generator.known_words(prompts),
                strict=True,
            )  # fmt: skip
        ],
    )
    return print_records(inputs, records, args.json, lambda record: record.get("output", ""))


def served_generator(args: argparse.Namespace):
    """What generates: the export's own ``sample`` signature where it can (TensorFlow
    alone), else the Keras model (`TextGenerator`, the same methods): for a seed, which
    the signature's sampling has none of, or another --max-tokens than the export's."""
    from kerasformer.loading.exported_generator import ExportedGenerator
    from kerasformer.loading.generator import load_generator

    if args.seed is None:
        exported = ExportedGenerator.load_if_serves(args.model, args.max_tokens)
        if exported is not None:
            return exported
    else:
        from kerasformer.backend import tf

        tf.random.set_seed(args.seed)
    return load_generator(args.model)


COMMAND = Command("generate", HELP, DESCRIPTION, add_arguments, run)
