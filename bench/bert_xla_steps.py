"""Why ``--xla`` makes fine-tuning a TF-Hub BERT slow on this CPU: seconds per step.

One process, one batch shape (32 texts of 48 word pieces, ids made up), four ways: the
encoder frozen or trainable, the training step (``model.train_on_batch``, as
``kerasformer train`` runs it) compiled by XLA or not. Each is timed over ``--steps``
steps after its first (which traces, and under XLA compiles). With TensorFlow's
``TF_CPP_VMODULE=device_compiler=1 TF_CPP_MIN_LOG_LEVEL=0`` the log shows a line
``Compilation of XLA executable time: ...`` for every step that compiles.

``--profile`` traces one more step of each way with TensorFlow's profiler
(``tf.profiler.experimental``) and lists where its host time went: the self time of
each traced event (time inside it, not inside an event nested in it), by name, thread
by thread. ``--cache-probe`` asks what XLA's cache is keyed on: a bare
``tf.function(jit_compile=True)`` gradient step through the trainable encoder, called
again with nothing changed, with one weight changed, and with other ids of the same shape.

    kerasformer convert-bert --out /tmp/hub/minilm
    python bench/bert_xla_steps.py --preprocess /tmp/hub/minilm/preprocess \\
        --encoder /tmp/hub/minilm/encoder --profile --cache-probe

Its smoke run (CI's, `tests/bench/`) is the same on a tiny BERT, one step each:
``--preprocess TINY/preprocess --encoder TINY/encoder --steps 1 --profile --cache-probe
--out PATH`` (made-up ids stay inside the encoder's vocabulary, `made_up_id_bounds`).
"""

from __future__ import annotations

import argparse
import collections
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from smoke import made_up_id_bounds

RESULTS = Path(__file__).resolve().parent / "results" / "bert_xla_steps.json"


def made_up_batch(encoder: str, seed: int = 0) -> tuple[dict, object]:
    """32 texts of 48 word pieces (ids drawn at random, all in ``encoder``'s vocabulary)
    and their labels."""
    from kerasformer.backend import tf

    rng = np.random.default_rng(seed)
    ids = rng.integers(*made_up_id_bounds(encoder), (32, 48))
    inputs = {
        "input_word_ids": tf.constant(ids, tf.int32),
        "input_mask": tf.ones((32, 48), tf.int32),
        "input_type_ids": tf.zeros((32, 48), tf.int32),
    }
    return inputs, tf.constant(rng.integers(0, 4, 32))


def self_seconds_by_thread(trace_dir: Path, most: int = 6) -> dict[str, dict[str, float]]:
    """Where a profiler trace's time went, thread by thread: each event's duration less
    that of the events nested in it on its thread, the ``most`` largest by event name,
    for each thread that held at least a tenth of the busiest one's time.

    Threads are kept apart: the caller waits in one event (``KernelAndDeviceFunc::Run``)
    while a pool thread runs the step or XLA's compiler, so their sums would overlap.
    """
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(next(trace_dir.rglob("*.xplane.pb")).read_bytes())
    plane = next(plane for plane in space.planes if plane.name == "/host:CPU")
    names = {key: meta.name for key, meta in plane.event_metadata.items()}
    by_thread = {}
    for line in plane.lines:
        spans = sorted(
            ((e.offset_ps, e.offset_ps + e.duration_ps, names[e.metadata_id])
             for e in line.events),
            key=lambda span: (span[0], -span[1]),  # an enclosing span first
        )  # fmt: skip
        thread = f"{line.name.split('/')[0]} ({line.id})"
        by_thread[thread] = self_time_of_nested(spans)
    busiest = max(sum(totals.values()) for totals in by_thread.values())
    return {
        thread: {name: round(ps / 1e12, 3) for name, ps in totals.most_common(most)}
        for thread, totals in by_thread.items()
        if sum(totals.values()) >= busiest / 10
    }


def self_time_of_nested(spans: list[tuple[int, int, str]]) -> collections.Counter:
    """Self time by name of (start, end, name) spans, sorted by start, enclosing ones first."""
    totals, open_spans = collections.Counter(), []
    for start, end, name in spans:
        while open_spans and open_spans[-1][0] <= start:
            open_spans.pop()
        if open_spans:  # the enclosing span loses the time spent in this one
            totals[open_spans[-1][1]] -= end - start
        totals[name] += end - start
        open_spans.append((end, name))
    return totals


def profile_one_step(train_step) -> dict[str, dict[str, float]]:
    from kerasformer.backend import tf

    with tempfile.TemporaryDirectory() as trace_dir:
        tf.profiler.experimental.start(trace_dir)
        try:
            train_step()
        finally:
            tf.profiler.experimental.stop()
        return self_seconds_by_thread(Path(trace_dir))


def cache_probe(encoder: str) -> dict[str, float]:
    """Seconds of a bare XLA gradient step through the trainable encoder, called again
    after each change: a call that compiles takes several times as long as a cache hit,
    which only runs the compiled step."""
    import tensorflow_hub as hub

    from kerasformer.backend import tf

    layer = hub.KerasLayer(encoder, trainable=True)
    inputs, _ = made_up_batch(encoder, 0)

    @tf.function(jit_compile=True)
    def gradient_step(batch):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(batch, training=False)["pooled_output"] ** 2)
        return loss, tape.gradient(loss, layer.trainable_variables)

    def seconds(batch) -> float:
        started = time.perf_counter()
        gradient_step(batch)
        return round(time.perf_counter() - started, 3)

    weight = layer.trainable_variables[-1]
    timings = {"first call (traces, compiles)": seconds(inputs)}
    timings["again, nothing changed"] = seconds(inputs)
    weight.assign_add(tf.fill(weight.shape, 1e-3))
    timings["again, one weight changed"] = seconds(inputs)
    timings["again, nothing changed since"] = seconds(inputs)
    timings["again, other ids of the same shape"] = seconds(made_up_batch(encoder, 1)[0])
    return timings


def seconds_per_step(
    preprocess: str, encoder: str, trainable: bool, xla: bool, steps: int, profile: bool
):
    from kerasformer.backend import keras
    from kerasformer.models.bert_classifier import (
        bert_classifier_on_encoder_inputs,
        build_bert_classifier,
    )

    model = build_bert_classifier(4, preprocess=preprocess, encoder=encoder, trainable=trainable)
    on_ids = bert_classifier_on_encoder_inputs(model)
    on_ids.compile(keras.optimizers.Adam(1e-5), "sparse_categorical_crossentropy",
                   jit_compile=xla)  # fmt: skip
    inputs, labels = made_up_batch(encoder, 0)
    started = time.perf_counter()
    on_ids.train_on_batch(inputs, labels)
    first = time.perf_counter() - started
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        on_ids.train_on_batch(inputs, labels)
        times.append(time.perf_counter() - started)
    traces = on_ids.train_function.experimental_get_tracing_count()
    row = {"encoder": "trainable" if trainable else "frozen", "xla": xla,
           "first_step_s": first, "step_s": times, "traces": traces}  # fmt: skip
    if profile:
        row["profile_self_s_by_thread"] = profile_one_step(
            lambda: on_ids.train_on_batch(inputs, labels)
        )
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preprocess", required=True)
    parser.add_argument("--encoder", required=True)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="trace one more step of each")
    parser.add_argument("--cache-probe", action="store_true", help="what XLA's cache keys on")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the results' JSON file")
    args = parser.parse_args(argv)
    rows = []
    for trainable in (False, True):
        for xla in (False, True):
            rows.append(seconds_per_step(
                args.preprocess, args.encoder, trainable, xla, args.steps, args.profile
            ))  # fmt: skip
            print(json.dumps(rows[-1]), flush=True)
    results = {"encoder": args.encoder, "steps": rows}
    if args.cache_probe:
        results["cache_probe_s"] = cache_probe(args.encoder)
        print(json.dumps(results["cache_probe_s"]), flush=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    for row in rows:
        median = np.median(row["step_s"])
        print(f"| {row['encoder']} | {'XLA' if row['xla'] else 'no XLA'} | "
              f"{row['first_step_s']:.1f} | {median:.2f} | {row['traces']} |")  # fmt: skip
    for row in (row for row in rows if "profile_self_s_by_thread" in row):
        print(f"{row['encoder']}, {'XLA' if row['xla'] else 'no XLA'}: a profiled step, self s")
        for thread, seconds in row["profile_self_s_by_thread"].items():
            print(f"  {thread}: " + ", ".join(f"{name} {s}" for name, s in seconds.items()))


if __name__ == "__main__":
    main()
