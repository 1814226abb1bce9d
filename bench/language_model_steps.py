"""Where a language-model training step goes: the blocks against the output layer.

Times `train_on_batch` of `build_transformer_language_model` (tied embeddings, window 128,
Adam, cross-entropy from logits) on random token ids, for each number of blocks, once
with WikiText-2's vocabulary and once with a small one, so that the difference is the
cost of the vocabulary-wide output layer. It then says how many epochs of WikiText-2's
training split an hour holds at that speed.

``--output adaptive`` times, in place of the model's output layer, the arithmetic of an
adaptive softmax (Grave et al. 2017) over the same vocabulary: a head over the 2,000
most frequent words and two clusters, and the clusters' 8,000 and the remaining words
through 32- and 8-wide projections; every word's log-probability is formed, and the loss
is its negative at the target. It is a timing model built from kerasformer's layers,
with untied embeddings, not a layer of the package.

``--output cluster`` times the package's own adaptive softmax
(``build_transformer_language_model(adaptive_cutoffs=[2000, 10000], tie_embeddings=True)``)
as the trainer fits it: `next_token_loss_model`, whose loss scores only each target's
cluster. Its targets are drawn with WikiText-2's frequencies of frequency-ranked ids
(Zipf's law fitted to the split), so each cluster gets its share of them.

    python bench/language_model_steps.py --num-layers 2 4 6 --vocab-sizes 33280 2002
    python bench/language_model_steps.py --num-layers 4 6 --vocab-sizes 33280 --output adaptive
    python bench/language_model_steps.py --num-layers 2 4 6 --vocab-sizes 33280 --output cluster

Results go to ``bench/results/language_model_steps.json`` (or ``--results``). Its smoke run
(CI's, `tests/bench/`), ``--smoke --train-file TINY --results PATH [--output ...]``, times
one step of the smallest model (`smoke.TINY_LANGUAGE_MODEL`: 1 block, 8 wide, window 16)
over a 40-id vocabulary, its clusters cut at 4 and 9 (projections 4 and 2 wide).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
from smoke import (
    TINY_CUTOFFS,
    TINY_LANGUAGE_MODEL,
    TINY_VOCAB_SIZE,
    add_smoke_argument,
    parse_with_smoke_defaults,
    require_smoke_output,
)
from tables import markdown_table

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "language_model_steps.json"
DEFAULT_TRAIN_FILE = HERE.parent.parent / "shared" / "data" / "wikitext-2" / "wiki.train.tokens"


class Sizes(NamedTuple):
    """What a step is timed at besides the blocks, vocabulary and batch."""

    window: int
    model: dict  # the model's widths where not the package's defaults
    # The adaptive softmax's clusters: the head's words end at cutoffs[0], the first
    # tail's at cutoffs[1] (the package's adaptive_cutoffs); each tail's projection width.
    cutoffs: list[int]
    tail_widths: tuple[int, int]


SIZES = Sizes(window=128, model={}, cutoffs=[2000, 10000], tail_widths=(32, 8))
SMOKE_SIZES = Sizes(
    window=TINY_LANGUAGE_MODEL["maxlen"],
    model={name: TINY_LANGUAGE_MODEL[name] for name in ("embed_dim", "num_heads", "ff_dim")},
    cutoffs=TINY_CUTOFFS, tail_widths=(4, 2),
)  # fmt: skip


def training_tokens(path: Path) -> int:
    """Tokens of a WikiText file as the language-model task reads it."""
    from kerasformer.datasets.wikitext import read_tokens

    return len(read_tokens(path))


def adaptive_softmax_model(vocab_size: int, num_layers: int, sizes: Sizes):
    """Token ids to every word's log-probability through an adaptive softmax's arithmetic."""
    from kerasformer.backend import keras, tf
    from kerasformer.models.language_model import DEFAULTS
    from kerasformer.tf_keras.layers import TokenAndPositionEmbedding, TransformerDecoderBlock

    model = {**DEFAULTS, **sizes.model}
    width, heads, feed_forward = (model[name] for name in ("embed_dim", "num_heads", "ff_dim"))
    ids = keras.Input((None,), dtype="int32")
    x = TokenAndPositionEmbedding(sizes.window, vocab_size, width)(ids)
    for _ in range(num_layers):
        x = TransformerDecoderBlock(width, heads, feed_forward)(x)
    log_softmax = keras.layers.Lambda(tf.nn.log_softmax)
    head_words, first_tail_end = sizes.cutoffs
    tails = tuple(zip((first_tail_end, None), sizes.tail_widths, strict=True))
    head = log_softmax(keras.layers.Dense(head_words + len(tails))(x))
    parts, start = [head[..., :head_words]], head_words
    for cluster, (end, width) in enumerate(tails):
        words = (end or vocab_size) - start
        projected = keras.layers.Dense(width, use_bias=False)(x)
        tail = log_softmax(keras.layers.Dense(words)(projected))
        parts.append(tail + head[..., head_words + cluster : head_words + cluster + 1])
        start = end
    return keras.Model(ids, keras.layers.Concatenate()(parts))


def frequency_ranked_ids(vocab_size: int, shape) -> np.ndarray:
    """Ids drawn as Zipf's law ranks words (2 and up: 0 and 1 are padding and unknown)."""
    ranks = np.arange(1, vocab_size - 1)
    weights = 1.0 / ranks
    return 2 + np.random.default_rng(1).choice(len(ranks), shape, p=weights / weights.sum())


def target_negative_log_probability(targets, log_probabilities):
    from kerasformer.backend import tf

    targets = tf.cast(targets, tf.int32)
    return -tf.gather(log_probabilities, targets, batch_dims=2)


def seconds_per_step(
    num_layers: int, batch_size: int, vocab_size: int, steps: int, output: str, sizes: Sizes
) -> float:
    from kerasformer.backend import keras
    from kerasformer.models.language_model import build_transformer_language_model

    inputs = np.random.default_rng(0).integers(1, vocab_size, (2, batch_size, sizes.window))
    options = dict(maxlen=sizes.window, num_layers=num_layers, tie_embeddings=True, **sizes.model)
    if output == "adaptive":
        model = adaptive_softmax_model(vocab_size, num_layers, sizes)
        loss = target_negative_log_probability
    elif output == "cluster":
        from kerasformer.models.language_model import next_token_loss_model
        from kerasformer.training.tasks.language_modeling import scored_loss

        model = next_token_loss_model(
            build_transformer_language_model(vocab_size, adaptive_cutoffs=sizes.cutoffs, **options)
        )
        loss = scored_loss
        targets = frequency_ranked_ids(vocab_size, (batch_size, sizes.window))
        inputs = [[inputs[0], targets], targets]
    else:
        model = build_transformer_language_model(vocab_size, **options)
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=loss)
    for _ in range(3):  # trace, then let the allocator settle
        model.train_on_batch(inputs[0], inputs[1])
    started = time.perf_counter()
    for _ in range(steps):
        model.train_on_batch(inputs[0], inputs[1])
    return (time.perf_counter() - started) / steps


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-layers", type=int, nargs="+", default=[2, 4, 6])
    parser.add_argument("--vocab-sizes", type=int, nargs="+", default=[33280, 2002])
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--output", choices=("full", "adaptive", "cluster"), default="full")
    parser.add_argument("--train-file", type=Path, default=DEFAULT_TRAIN_FILE)
    parser.add_argument("--results", type=Path, default=RESULTS, help="the runs' JSON file")
    add_smoke_argument(parser)
    args = parse_with_smoke_defaults(
        parser, argv, num_layers=[TINY_LANGUAGE_MODEL["num_layers"]],
        vocab_sizes=[TINY_VOCAB_SIZE], steps=1,
    )  # fmt: skip
    require_smoke_output(args.smoke, args.results, "--results")
    return args


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    tokens_per_epoch = training_tokens(args.train_file)
    rows = measure(args, tokens_per_epoch)
    saved = json.loads(args.results.read_text()) if args.results.is_file() else {"runs": []}
    command = "python bench/language_model_steps.py " + " ".join(argv)
    saved["runs"] += [{**row, "command": command} for row in rows]
    saved["train_tokens_per_epoch"] = tokens_per_epoch
    args.results.write_text(json.dumps(saved, indent=2) + "\n")
    print(table(rows))


def measure(args: argparse.Namespace, tokens_per_epoch: int) -> list[dict]:
    """A row per number of blocks and vocabulary size, each printed as it is measured."""
    sizes = SMOKE_SIZES if args.smoke else SIZES
    rows = []
    for num_layers in args.num_layers:
        for vocab_size in args.vocab_sizes:
            seconds = seconds_per_step(
                num_layers, args.batch_size, vocab_size, args.steps, args.output, sizes
            )
            tokens_per_second = args.batch_size * sizes.window / seconds
            rows.append({
                "num_layers": num_layers, "vocab_size": vocab_size, "output": args.output,
                "batch_size": args.batch_size, "seconds_per_step": seconds,
                "tokens_per_second": tokens_per_second,
                "epochs_per_hour": 3600 * tokens_per_second / tokens_per_epoch,
            })  # fmt: skip
            print(rows[-1], flush=True)
    return rows


def table(rows: list[dict]) -> str:
    headers = ("blocks", "vocabulary", "output", "batch", "s/step", "tokens/s", "epochs an hour")
    return markdown_table(headers, [
        (r["num_layers"], f"{r['vocab_size']:,}", r["output"], r["batch_size"],
         f"{r['seconds_per_step']:.3f}",
         f"{r['tokens_per_second']:,.0f}", f"{r['epochs_per_hour']:.1f}")
        for r in rows
    ])  # fmt: skip


if __name__ == "__main__":
    main()
