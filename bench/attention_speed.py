"""kerasformer's `MultiHeadAttention` against ``keras.layers.MultiHeadAttention``: the time
of one training step (forward and backward) of each, side by side in one process.

Keras 3, on the backend ``KERAS_BACKEND`` names. Each layer attends from a sequence to
itself inside a model whose loss is the mean square of the output; one step is
``train_on_batch`` (compiled as Keras compiles it on that backend, with an SGD step of
learning rate 0), timed as the median of ``--steps`` after two warm-up steps. Masks:
none, padding (an ``attention_mask`` hiding each text's last quarter of keys), and causal
(``use_causal_mask=True``). The two layers get the same sizes and the same inputs.

    KERAS_BACKEND=tensorflow python bench/attention_speed.py
    KERAS_BACKEND=jax python bench/attention_speed.py

Its smoke run (CI's, `tests/bench/`) is ``--smoke --out PATH``: batch 2, lengths 8 and
16, width 16, one timed step.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
from smoke import add_smoke_argument, parse_with_smoke_defaults, require_smoke_output
from tables import markdown_table

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "attention_speed.json"
MASKS = ("none", "padding", "causal")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lengths", type=int, nargs="+", default=[128, 512])
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--out", type=Path, help="the results' file (default: bench/results/)")
    add_smoke_argument(parser)
    args = parse_with_smoke_defaults(
        parser, argv, batch_size=2, lengths=[8, 16], width=16, heads=2, steps=1
    )
    require_smoke_output(args.smoke, args.out, "--out")
    return args


def layers_to_compare(heads: int, width: int) -> dict:
    """The two layers, built alike: ``key_dim`` is the width over the heads."""
    import keras

    from kerasformer.layers import MultiHeadAttention

    return {
        "kerasformer": lambda: MultiHeadAttention(num_heads=heads, key_dim=width // heads),
        "keras": lambda: keras.layers.MultiHeadAttention(num_heads=heads, key_dim=width // heads),
    }


def step_model(make_layer, length: int, width: int, mask: str):
    """A model: ``[hidden, attention mask]`` in, the layer's self-attention out."""
    import keras

    hidden = keras.Input((length, width))
    allowed = keras.Input((length, length), dtype="bool")
    outputs = make_layer()(
        hidden, hidden, attention_mask=allowed if mask == "padding" else None,
        use_causal_mask=mask == "causal",
    )  # fmt: skip
    model = keras.Model([hidden, allowed], outputs)
    model.compile(keras.optimizers.SGD(0.0), loss="mse")
    return model


def step_seconds(model, batch: int, length: int, width: int, steps: int) -> float:
    """The median time of one training step, after two warm-up steps (tracing, compiling)."""
    rng = np.random.default_rng(0)
    hidden = rng.standard_normal((batch, length, width)).astype("float32")
    keys_kept = np.arange(length) < length - length // 4  # the last quarter is padding
    allowed = np.broadcast_to(keys_kept, (batch, length, length)).copy()
    target = np.zeros((batch, length, width), "float32")
    for _ in range(2):
        model.train_on_batch([hidden, allowed], target)
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        model.train_on_batch([hidden, allowed], target)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(args) -> dict:
    import keras

    rows = []
    for length in args.lengths:
        for mask in MASKS:
            row = {"length": length, "mask": mask}
            for name, make_layer in layers_to_compare(args.heads, args.width).items():
                model = step_model(make_layer, length, args.width, mask)
                row[name] = step_seconds(model, args.batch_size, length, args.width, args.steps)
            rows.append(row)
            print(row, flush=True)
    return {
        "backend": keras.backend.backend(), "keras": keras.__version__,
        "batch_size": args.batch_size, "width": args.width, "heads": args.heads,
        "steps": args.steps, "rows": rows,
    }  # fmt: skip


def table(results: dict) -> str:
    rows = [
        (results["backend"], row["length"], row["mask"], f"{1000 * row['kerasformer']:.1f}",
         f"{1000 * row['keras']:.1f}", f"{row['kerasformer'] / row['keras']:.2f}x")
        for row in results["rows"]
    ]  # fmt: skip
    return markdown_table(
        ("backend", "length", "mask", "kerasformer ms/step", "Keras ms/step", "ours / Keras"),
        rows,
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    out = args.out or RESULTS
    results = measure(args)
    saved = json.loads(out.read_text()) if out.is_file() else {}
    saved[results["backend"]] = results
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(saved, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
