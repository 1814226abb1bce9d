"""Which language-model levers help, measured fast: the WikiText-2 model under Keras 3.

`bench/language_model.py` measures the package's own training (tf-keras, this CPU),
about 10 minutes an epoch. This script builds the same decoder-only model from
`kerasformer.layers` under Keras 3, on any backend (JAX on a GPU machine with no
TensorFlow), and trains one setting per line of ``SETTINGS`` (6 epochs of batch 32
unless it says), to choose which settings are worth an hour of CPU each. Its figures
rank the levers; the README's reported perplexities come from `bench/language_model.py`.

    KERAS_BACKEND=jax python bench/language_model_levers.py --data-dir DIR [--only NAME ...]

Writes ``bench/results/language_model_levers.json`` (or ``--out``). Its smoke run (CI's,
`tests/bench/`), ``--smoke --data-dir TINY --out PATH``, trains the first setting only,
its sizes made the smallest (`smoke.TINY_LANGUAGE_MODEL`: 1 block, 8 wide, window 16), for
one epoch of batch 8 on each split's first 400 tokens, in the calling process.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
from keras3_settings import run_each_setting
from smoke import (
    TINY_LANGUAGE_MODEL,
    add_smoke_argument,
    parse_with_smoke_defaults,
    require_smoke_output,
)

HERE = Path(__file__).resolve().parent
DEFAULT_DATA_DIR = HERE.parent.parent / "shared" / "data" / "wikitext-2"
END_OF_LINE = "<eos>"
BASE = dict(
    maxlen=128, embed_dim=128, num_heads=4, ff_dim=512, num_layers=2, dropout=0.1,
    tie_embeddings=False, learning_rate=1e-3, weight_decay=0.0, clip_norm=None,
    lr_schedule="constant", warmup_fraction=0.1, batch_size=32, epochs=6,
)  # fmt: skip
# Tied embeddings with AdamW (decay 0.1), a warm-up and cosine schedule, clipping at 1.
TUNED = dict(tie_embeddings=True, weight_decay=0.1, lr_schedule="cosine", clip_norm=1.0)
# Each setting changes the base in the named ways, one lever (or one combination) a line.
SETTINGS = {
    "base (as bench/language_model.py)": {},
    "tied": dict(tie_embeddings=True),
    "tied, dropout 0.2": dict(tie_embeddings=True, dropout=0.2),
    "tied, dropout 0.3": dict(tie_embeddings=True, dropout=0.3),
    "dropout 0.3, untied": dict(dropout=0.3),
    "tied, dropout 0.2, AdamW 0.1, cosine, clip 1": {**TUNED, "dropout": 0.2},
    "tied, dropout 0.3, AdamW 0.1, cosine, clip 1": {**TUNED, "dropout": 0.3},
    "same, lr 2e-3": {**TUNED, "dropout": 0.3, "learning_rate": 2e-3},
    "same (lr 1e-3), window 256": {**TUNED, "dropout": 0.3, "maxlen": 256},
    # Round 2: more updates per epoch, a higher rate, more width, more epochs.
    "tied, AdamW 0.1, cosine, clip 1, lr 2e-3": {**TUNED, "learning_rate": 2e-3},
    "tied, batch 16": dict(tie_embeddings=True, batch_size=16),
    "tied, batch 16, AdamW 0.1, cosine, clip 1, lr 2e-3": {
        **TUNED,
        "batch_size": 16,
        "learning_rate": 2e-3,
    },  # fmt: skip
    "tied, window 64, AdamW 0.1, cosine, clip 1, lr 2e-3": {
        **TUNED,
        "maxlen": 64,
        "learning_rate": 2e-3,
    },  # fmt: skip
    "tied, 256 wide, ff 1024, dropout 0.2, AdamW 0.1, cosine, clip 1": {
        **TUNED,
        "embed_dim": 256,
        "ff_dim": 1024,
        "dropout": 0.2,
    },  # fmt: skip
    "tied, AdamW 0.1, cosine, clip 1, lr 2e-3, 15 epochs": {
        **TUNED,
        "learning_rate": 2e-3,
        "epochs": 15,
    },  # fmt: skip
    # Round 3: around the best of round 2 (batch 16, lr 2e-3), with strided perplexity.
    "tied, batch 16, AdamW 0.1, cosine, clip 1, lr 2e-3 (again, strided)": {
        **TUNED,
        "batch_size": 16,
        "learning_rate": 2e-3,
    },  # fmt: skip
    "tied, batch 8, AdamW 0.1, cosine, clip 1, lr 2e-3": {
        **TUNED,
        "batch_size": 8,
        "learning_rate": 2e-3,
    },  # fmt: skip
    "tied, batch 16, AdamW 0.1, cosine, clip 1, lr 3e-3": {
        **TUNED,
        "batch_size": 16,
        "learning_rate": 3e-3,
    },  # fmt: skip
    "tied, batch 16, AdamW 0.3, cosine, clip 1, lr 2e-3": {
        **TUNED,
        "batch_size": 16,
        "learning_rate": 2e-3,
        "weight_decay": 0.3,
    },  # fmt: skip
    "tied, batch 16, 3 layers, AdamW 0.1, cosine, clip 1, lr 2e-3": {
        **TUNED,
        "batch_size": 16,
        "learning_rate": 2e-3,
        "num_layers": 3,
    },  # fmt: skip
    "tied, batch 16, 192 wide, ff 768, AdamW 0.1, cosine, clip 1, lr 2e-3": {
        **TUNED,
        "batch_size": 16,
        "learning_rate": 2e-3,
        "embed_dim": 192,
        "ff_dim": 768,
    },  # fmt: skip
    # Round 4: depth, which helped most in round 3, with batch 8 and 16.
    **{
        f"tied, batch {batch}, {layers} layers, AdamW 0.1, cosine, clip 1, lr 2e-3": {
            **TUNED,
            "batch_size": batch,
            "learning_rate": 2e-3,
            "num_layers": layers,
        }
        for batch, layers in ((16, 4), (8, 3), (8, 4), (16, 6))
    },
}
# What --smoke puts over any setting's sizes and schedule.
SMOKE = dict(TINY_LANGUAGE_MODEL, epochs=1, batch_size=8)


def read_tokens(path: Path) -> list[str]:
    """Every line's whitespace-separated words, then ``<eos>``, as load_wikitext2 reads."""
    tokens = []
    for line in path.read_text(encoding="utf-8").splitlines():
        tokens += line.split() + [END_OF_LINE]
    return tokens


def windows(ids: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    count = (len(ids) - 1) // window
    return (
        ids[: count * window].reshape(count, window),
        ids[1 : count * window + 1].reshape(count, window),
    )


def strided_perplexity(keras, model, ids: np.ndarray, window: int) -> float:
    """Perplexity with windows sliding by half a window, each target scored once, as
    kerasformer's ``strided_perplexity`` (``datasets.pipeline.strided_next_token_windows``,
    restated here because that module needs TensorFlow)."""
    stride, last_target = window // 2, len(ids) - 1
    total, count, scored, start = 0.0, 0, 0, 0
    while scored < last_target:
        starts = []
        while scored < last_target and len(starts) < 64:
            starts.append((start, scored - start))  # (window start, first new target)
            scored = start + min(window, last_target - start)
            start += stride
        x = np.zeros((len(starts), window), np.int32)
        y = np.zeros_like(x)
        w = np.zeros(x.shape, np.float64)
        for row, (first, new) in enumerate(starts):
            length = min(window, last_target - first)
            x[row, :length] = ids[first : first + length]
            y[row, :length] = ids[first + 1 : first + length + 1]
            w[row, new:length] = 1
        losses = keras.ops.sparse_categorical_crossentropy(
            y, model(x, training=False), from_logits=True
        )
        total += float((keras.ops.convert_to_numpy(losses).astype(np.float64) * w).sum())
        count += int(w.sum())
    return math.exp(total / count) if count else float("nan")


def build(keras, layers, vocab_size: int, s: dict):
    ids = keras.Input((None,), dtype="int32")
    embedding = layers.TokenAndPositionEmbedding(
        s["maxlen"], vocab_size, s["embed_dim"], reversible=s["tie_embeddings"]
    )
    x = embedding(ids)
    for _ in range(s["num_layers"]):
        x = layers.TransformerDecoderBlock(
            s["embed_dim"], s["num_heads"], s["ff_dim"], dropout=s["dropout"]
        )(x)
    if s["tie_embeddings"]:
        logits = embedding(x, reverse=True)
    else:
        logits = keras.layers.Dense(vocab_size, dtype="float32")(x)
    return keras.Model(ids, logits)


def optimizer(keras, s: dict, total_steps: int):
    rate = s["learning_rate"]
    if s["lr_schedule"] == "cosine":
        warmup = math.ceil(s["warmup_fraction"] * total_steps)
        rate = keras.optimizers.schedules.CosineDecay(
            0.0, total_steps - warmup, warmup_target=s["learning_rate"], warmup_steps=warmup
        )
    if not s["weight_decay"]:
        return keras.optimizers.Adam(rate, global_clipnorm=s["clip_norm"])
    made = keras.optimizers.AdamW(
        rate, weight_decay=s["weight_decay"], global_clipnorm=s["clip_norm"]
    )
    made.exclude_from_weight_decay(var_names=["bias", "gamma", "beta"])
    return made


def run_setting(name: str, changes: dict, splits: dict, vocab_size: int, args) -> dict:
    import keras

    from kerasformer import layers

    s = {**BASE, **changes, **(SMOKE if args.smoke else {})}
    keras.utils.set_random_seed(args.seed)
    model = build(keras, layers, vocab_size, s)
    x, y = windows(splits["train"], s["maxlen"])
    steps = math.ceil(len(x) / s["batch_size"])
    model.compile(
        optimizer(keras, s, steps * s["epochs"]),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    valid = windows(splits["valid"], s["maxlen"])
    test = windows(splits["test"], s["maxlen"])
    started = time.perf_counter()
    history = model.fit(
        x, y, batch_size=s["batch_size"], epochs=s["epochs"], validation_data=valid,
        callbacks=[keras.callbacks.EarlyStopping(patience=s["epochs"], restore_best_weights=True)],
        verbose=2,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    val_ppl = [math.exp(loss) for loss in history.history["val_loss"]]
    test_loss = model.evaluate(*test, batch_size=s["batch_size"], verbose=0)
    row = {
        "settings": s,
        "parameters": int(model.count_params()),
        "validation_perplexity_by_epoch": val_ppl,
        "best_epoch": int(np.argmin(val_ppl)) + 1,
        "best_validation_perplexity": min(val_ppl),
        "test_perplexity_at_best": math.exp(test_loss),
        "test_strided_perplexity_at_best": strided_perplexity(
            keras, model, splits["test"], s["maxlen"]
        ),
        "train_seconds": seconds,
    }
    print(name, json.dumps({k: v for k, v in row.items() if k != "settings"}), flush=True)
    return row


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="*", help="run these settings (by name) only")
    parser.add_argument("--limit-tokens", type=int, help="a smoke test on the first N tokens")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "language_model_levers.json")
    add_smoke_argument(parser)
    args = parse_with_smoke_defaults(parser, argv, only=list(SETTINGS)[:1], limit_tokens=400)
    require_smoke_output(args.smoke, args.out, "--out")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    tokens = {
        split: read_tokens(args.data_dir / f"wiki.{split}.tokens")[: args.limit_tokens]
        for split in ("train", "valid", "test")
    }
    vocabulary = sorted(set(tokens["train"]))
    index = {token: i + 2 for i, token in enumerate(vocabulary)}
    splits = {
        split: np.array([index.get(t, 1) for t in words], np.int32)
        for split, words in tokens.items()
    }
    run_each_setting(
        "language_model_levers.py", SETTINGS, args.only,
        lambda name, changes: run_setting(name, changes, splits, len(vocabulary) + 2, args),
        args.out,
    )  # fmt: skip


if __name__ == "__main__":
    main()
