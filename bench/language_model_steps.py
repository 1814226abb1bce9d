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

Results go to ``bench/results/language_model_steps.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from tables import markdown_table

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "language_model_steps.json"
DEFAULT_TRAIN_FILE = HERE.parent.parent / "shared" / "data" / "wikitext-2" / "wiki.train.tokens"
WINDOW = 128


def training_tokens(path: Path) -> int:
    """Tokens of a WikiText file as the language-model task reads it."""
    from kerasformer.datasets.wikitext import read_tokens

    return len(read_tokens(path))


# The adaptive softmax's clusters: the head's words, then each tail's end and width.
HEAD_WORDS = 2000
TAILS = ((10000, 32), (None, 8))


def adaptive_softmax_model(vocab_size: int, num_layers: int):
    """Token ids to every word's log-probability through an adaptive softmax's arithmetic."""
    from kerasformer.backend import keras, tf
    from kerasformer.models.language_model import DEFAULTS
    from kerasformer.tf_keras.layers import TokenAndPositionEmbedding, TransformerDecoderBlock

    width, heads, feed_forward = (DEFAULTS[name] for name in ("embed_dim", "num_heads", "ff_dim"))
    ids = keras.Input((None,), dtype="int32")
    x = TokenAndPositionEmbedding(vocab_size, WINDOW, width)(ids)
    for _ in range(num_layers):
        x = TransformerDecoderBlock(width, heads, feed_forward)(x)
    log_softmax = keras.layers.Lambda(tf.nn.log_softmax)
    head = log_softmax(keras.layers.Dense(HEAD_WORDS + len(TAILS))(x))
    parts, start = [head[..., :HEAD_WORDS]], HEAD_WORDS
    for cluster, (end, width) in enumerate(TAILS):
        words = (end or vocab_size) - start
        projected = keras.layers.Dense(width, use_bias=False)(x)
        tail = log_softmax(keras.layers.Dense(words)(projected))
        parts.append(tail + head[..., HEAD_WORDS + cluster : HEAD_WORDS + cluster + 1])
        start = end
    return keras.Model(ids, keras.layers.Concatenate()(parts))


CLUSTER_CUTOFFS = [2000, 10000]


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
    num_layers: int, batch_size: int, vocab_size: int, steps: int, output: str
) -> float:
    from kerasformer.backend import keras
    from kerasformer.models.language_model import build_transformer_language_model

    inputs = np.random.default_rng(0).integers(1, vocab_size, (2, batch_size, WINDOW))
    if output == "adaptive":
        model = adaptive_softmax_model(vocab_size, num_layers)
        loss = target_negative_log_probability
    elif output == "cluster":
        from kerasformer.models.language_model import next_token_loss_model
        from kerasformer.training.tasks.language_modeling import scored_loss

        model = next_token_loss_model(build_transformer_language_model(
            vocab_size, maxlen=WINDOW, num_layers=num_layers, tie_embeddings=True,
            adaptive_cutoffs=CLUSTER_CUTOFFS,
        ))  # fmt: skip
        loss = scored_loss
        targets = frequency_ranked_ids(vocab_size, (batch_size, WINDOW))
        inputs = [[inputs[0], targets], targets]
    else:
        model = build_transformer_language_model(
            vocab_size, maxlen=WINDOW, num_layers=num_layers, tie_embeddings=True
        )
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=loss)
    for _ in range(3):  # trace, then let the allocator settle
        model.train_on_batch(inputs[0], inputs[1])
    started = time.perf_counter()
    for _ in range(steps):
        model.train_on_batch(inputs[0], inputs[1])
    return (time.perf_counter() - started) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-layers", type=int, nargs="+", default=[2, 4, 6])
    parser.add_argument("--vocab-sizes", type=int, nargs="+", default=[33280, 2002])
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--output", choices=("full", "adaptive", "cluster"), default="full")
    parser.add_argument("--train-file", type=Path, default=DEFAULT_TRAIN_FILE)
    args = parser.parse_args()
    tokens_per_epoch = training_tokens(args.train_file)
    rows = []
    for num_layers in args.num_layers:
        for vocab_size in args.vocab_sizes:
            seconds = seconds_per_step(
                num_layers, args.batch_size, vocab_size, args.steps, args.output
            )
            tokens_per_second = args.batch_size * WINDOW / seconds
            rows.append({
                "num_layers": num_layers, "vocab_size": vocab_size, "output": args.output,
                "batch_size": args.batch_size, "seconds_per_step": seconds,
                "tokens_per_second": tokens_per_second,
                "epochs_per_hour": 3600 * tokens_per_second / tokens_per_epoch,
            })  # fmt: skip
            print(rows[-1], flush=True)
    saved = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {"runs": []}
    command = "python bench/language_model_steps.py " + " ".join(sys.argv[1:])
    saved["runs"] += [{**row, "command": command} for row in rows]
    saved["train_tokens_per_epoch"] = tokens_per_epoch
    RESULTS.write_text(json.dumps(saved, indent=2) + "\n")
    headers = ("blocks", "vocabulary", "output", "batch", "s/step", "tokens/s", "epochs an hour")
    print(markdown_table(headers, [
        (r["num_layers"], f"{r['vocab_size']:,}", r["output"], r["batch_size"],
         f"{r['seconds_per_step']:.3f}",
         f"{r['tokens_per_second']:,.0f}", f"{r['epochs_per_hour']:.1f}")
        for r in rows
    ]))  # fmt: skip


if __name__ == "__main__":
    main()
