"""Why ``--xla`` makes fine-tuning a TF-Hub BERT slow on this CPU: seconds per step.

One process, one batch shape (32 texts of 48 word pieces, ids made up), four ways: the
encoder frozen or trainable, the training step (``model.train_on_batch``, as
``kerasformer train`` runs it) compiled by XLA or not. Each is timed over ``--steps``
steps after its first (which traces, and under XLA compiles). With TensorFlow's
``TF_CPP_VMODULE=device_compiler=1 TF_CPP_MIN_LOG_LEVEL=0`` the log shows a line
``Compilation of XLA executable time: ...`` for every step that compiles.

    kerasformer convert-bert --out /tmp/hub/minilm
    python bench/bert_xla_steps.py --preprocess /tmp/hub/minilm/preprocess \\
        --encoder /tmp/hub/minilm/encoder
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "bert_xla_steps.json"


def seconds_per_step(preprocess: str, encoder: str, trainable: bool, xla: bool, steps: int):
    from kerasformer.backend import keras, tf
    from kerasformer.models.bert_classifier import (
        bert_classifier_on_encoder_inputs,
        build_bert_classifier,
    )

    model = build_bert_classifier(4, preprocess=preprocess, encoder=encoder, trainable=trainable)
    on_ids = bert_classifier_on_encoder_inputs(model)
    on_ids.compile(keras.optimizers.Adam(1e-5), "sparse_categorical_crossentropy",
                   jit_compile=xla)  # fmt: skip
    rng = np.random.default_rng(0)
    inputs = {
        "input_word_ids": tf.constant(rng.integers(1000, 20000, (32, 48)), tf.int32),
        "input_mask": tf.ones((32, 48), tf.int32),
        "input_type_ids": tf.zeros((32, 48), tf.int32),
    }
    labels = tf.constant(rng.integers(0, 4, 32))
    started = time.perf_counter()
    on_ids.train_on_batch(inputs, labels)
    first = time.perf_counter() - started
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        on_ids.train_on_batch(inputs, labels)
        times.append(time.perf_counter() - started)
    traces = on_ids.train_function.experimental_get_tracing_count()
    return {"encoder": "trainable" if trainable else "frozen", "xla": xla,
            "first_step_s": first, "step_s": times, "traces": traces}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preprocess", required=True)
    parser.add_argument("--encoder", required=True)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for trainable in (False, True):
        for xla in (False, True):
            rows.append(seconds_per_step(args.preprocess, args.encoder, trainable, xla, args.steps))
            print(json.dumps(rows[-1]), flush=True)
    RESULTS.write_text(json.dumps(rows, indent=1) + "\n")
    for row in rows:
        median = np.median(row["step_s"])
        print(f"| {row['encoder']} | {'XLA' if row['xla'] else 'no XLA'} | "
              f"{row['first_step_s']:.1f} | {median:.2f} | {row['traces']} |")  # fmt: skip


if __name__ == "__main__":
    main()
