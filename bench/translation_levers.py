"""Which translation levers help, measured fast: the spa-eng transformer under Keras 3.

`bench/translation.py` measures the package's own training (tf-keras, this CPU), about
10 minutes an epoch with subwords. This script builds the same encoder-decoder from
`kerasformer.layers` under Keras 3, on any backend (JAX on a GPU machine with no
TensorFlow), and trains one setting per line of ``SETTINGS`` to choose which settings
are worth an hour of CPU each. Its figures rank the levers; the README's reported BLEU
comes from `bench/translation.py`. Three steps:

    python bench/translation_levers.py prepare --out bench/.cache/spa_eng_subwords.npz
    KERAS_BACKEND=jax python bench/translation_levers.py run \\
        --data bench/.cache/spa_eng_subwords.npz --out OUT.json [--only NAME ...]
    python bench/translation_levers.py score OUT.json --data bench/.cache/spa_eng_subwords.npz

``prepare`` (with TensorFlow) splits spa-eng as ``kerasformer train`` does (seed 0),
trains the SentencePiece models as the task does (each language's, and one of both for
tied embeddings) and writes every split's ids. ``run`` needs only Keras 3, NumPy and
kerasformer's layers; it writes each setting's greedy translations of the validation
split as ids. ``score`` turns them into text with SentencePiece and scores them with
sacrebleu (cased, as the task reports), into ``bench/results/translation_levers.json``
(or ``--into``).

Its smoke run (CI's, `tests/bench/`) is the three steps on tiny data, in this process:
``run --smoke --limit 8`` trains `smoke.TINY_TRANSFORMER` for two epochs on the setting
that pulls every lever (`PAPER`), and ``score`` writes a smoke run's scores only where
``--into`` says, outside bench/results.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
from keras3_settings import run_each_setting
from smoke import TINY_TRANSFORMER, add_smoke_argument, require_smoke_output

HERE = Path(__file__).resolve().parent
DEFAULT_DATA_DIR = HERE.parent.parent / "shared" / "data" / "spa-eng"
RESULTS = HERE / "results" / "translation_levers.json"
PAD, START, END = 0, 2, 3
MAXLEN = 80
BASE = dict(
    embed_dim=128, num_heads=4, ff_dim=512, num_layers=2, dropout=0.1, tie_embeddings=False,
    label_smoothing=0.0, learning_rate=1e-3, lr_schedule="constant", warmup_fraction=0.1,
    average_last=None, batch_size=128, epochs=4,
)  # fmt: skip
PAPER = "all of the paper's: smoothing, inverse-sqrt, tied, average 2"
# Each setting changes the base in the named ways, one lever (or one combination) a line.
SETTINGS = {
    "base (as kerasformer train --tokenizer sentencepiece)": {},
    "label smoothing 0.1": dict(label_smoothing=0.1),
    "inverse-sqrt schedule, peak 1e-3": dict(lr_schedule="inverse_sqrt"),
    "inverse-sqrt schedule, peak 2e-3": dict(lr_schedule="inverse_sqrt", learning_rate=2e-3),
    "tied embeddings (one vocabulary)": dict(tie_embeddings=True),
    "average the last 2 epochs": dict(average_last=2),
    "256 wide, ff 1024": dict(embed_dim=256, ff_dim=1024),
    "3 + 3 blocks": dict(num_layers=3),
    "4 + 4 blocks": dict(num_layers=4),
    "6 epochs": dict(epochs=6),
    PAPER: dict(
        label_smoothing=0.1, lr_schedule="inverse_sqrt", tie_embeddings=True, average_last=2
    ),
}
# A smoke run's model and epochs, whatever the setting: two epochs are the fewest that
# `PAPER`'s averaging of the last two averages. Without --only it runs `PAPER` alone.
SMOKE = dict(TINY_TRANSFORMER, epochs=2)


# -- prepare (here, with TensorFlow) ------------------------------------------------------


def prepare(args) -> None:
    import sentencepiece

    from kerasformer.datasets.spa_eng import load_spa_eng
    from kerasformer.models.subword_tokenizer import train_subwords
    from kerasformer.training.tasks.translation import (
        SHARED_SUBWORD_VOCAB_SIZE,
        SUBWORD_VOCAB_SIZE,
    )

    data = load_spa_eng(args.data_dir, split_seed=0)
    train = data.splits["train"]
    models = {
        "source": train_subwords(train.sources, SUBWORD_VOCAB_SIZE, 0),
        "target": train_subwords(train.targets, SUBWORD_VOCAB_SIZE, 0),
        "shared": train_subwords(
            np.concatenate([train.sources, train.targets]), SHARED_SUBWORD_VOCAB_SIZE, 0
        ),
    }
    arrays = {f"{name}_model": np.frombuffer(model, np.uint8) for name, model in models.items()}
    for name, model in models.items():
        size = sentencepiece.SentencePieceProcessor(model_proto=model).get_piece_size()
        arrays[f"{name}_vocab_size"] = np.array(size)
    for vocabulary in ("separate", "shared"):
        source_model = models["shared" if vocabulary == "shared" else "source"]
        target_model = models["shared" if vocabulary == "shared" else "target"]
        encode = {
            side: sentencepiece.SentencePieceProcessor(model_proto=model).encode
            for side, model in (("source", source_model), ("target", target_model))
        }
        for split in ("train", "validation", "test"):
            part = data.splits[split]
            sources = encode["source"](list(part.sources))
            targets = [[START, *ids, END] for ids in encode["target"](list(part.targets))]
            arrays[f"{vocabulary}_{split}_source"] = padded(sources)
            arrays[f"{vocabulary}_{split}_target"] = padded(targets)
    for split in ("validation", "test"):
        arrays[f"{split}_references"] = np.array(list(data.splits[split].targets), dtype=str)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **arrays)
    print(f"wrote {args.out}: {len(train.sources)} training pairs")


def padded(rows: list[list[int]]) -> np.ndarray:
    out = np.zeros((len(rows), max(len(row) for row in rows)), np.int32)
    for index, row in enumerate(rows):
        out[index, : len(row)] = row
    return out


# -- run (any Keras 3 backend) ------------------------------------------------------------


def build(keras, layers, vocab_sizes: tuple[int, int], s: dict):
    """`kerasformer.models.build_transformer_translator`, restated in Keras 3 layers."""
    source = keras.Input((None,), dtype="int32", name="source_ids")
    target = keras.Input((None,), dtype="int32", name="target_ids")
    source_embedding = layers.TokenAndPositionEmbedding(
        MAXLEN, vocab_sizes[0], s["embed_dim"], reversible=s["tie_embeddings"]
    )
    x = source_embedding(source)
    for _ in range(s["num_layers"]):
        x = layers.TransformerBlock(s["embed_dim"], s["num_heads"], s["ff_dim"], s["dropout"])(x)
    target_embedding = (
        source_embedding
        if s["tie_embeddings"]
        else layers.TokenAndPositionEmbedding(MAXLEN, vocab_sizes[1], s["embed_dim"])
    )
    y = target_embedding(target)
    for _ in range(s["num_layers"]):
        y = layers.TransformerDecoderBlock(
            s["embed_dim"], s["num_heads"], s["ff_dim"], dropout=s["dropout"]
        )(y, x)
    if s["tie_embeddings"]:
        logits = target_embedding(y, reverse=True)
    else:
        logits = keras.layers.Dense(vocab_sizes[1], dtype="float32")(y)
    return keras.Model({"source_ids": source, "target_ids": target}, logits)


def smoothed_loss(keras, epsilon: float):
    """Per-token cross-entropy against ``(1 - ε) y + ε / V``, as
    `kerasformer.training.token_crossentropy` (which needs TensorFlow)."""
    ops = keras.ops

    def loss(y_true, y_pred):
        log_p = ops.log_softmax(ops.cast(y_pred, "float32"), axis=-1)
        ids = ops.expand_dims(ops.cast(y_true, "int32"), -1)
        true_token = -ops.squeeze(ops.take_along_axis(log_p, ids, axis=-1), -1)
        return (1 - epsilon) * true_token - epsilon * ops.mean(log_p, axis=-1)

    return loss


def learning_rate(keras, s: dict, total_steps: int):
    warmup = max(math.ceil(s["warmup_fraction"] * total_steps), 1)
    peak = s["learning_rate"]
    if s["lr_schedule"] == "constant":
        return peak
    if s["lr_schedule"] != "inverse_sqrt":
        raise SystemExit(
            f"lr_schedule {s['lr_schedule']!r}: this script has constant and inverse_sqrt"
        )

    class InverseSquareRoot(keras.optimizers.schedules.LearningRateSchedule):
        """A linear warm-up to ``peak``, then ``peak * sqrt(warmup / step)``."""

        def __call__(self, step):
            step = keras.ops.cast(step, "float32")
            decay = keras.ops.sqrt(warmup / keras.ops.maximum(step, 1.0))
            return peak * keras.ops.minimum(step / warmup, decay)

    return InverseSquareRoot()


def averaging_callback(keras, last: int):
    class AverageLast(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.kept = []

        def on_epoch_end(self, epoch, logs=None):
            self.kept = [*self.kept[-(last - 1) :], self.model.get_weights()] if last > 1 else []

        def on_train_end(self, logs=None):
            if len(self.kept) > 1:
                self.model.set_weights([np.mean(w, axis=0) for w in zip(*self.kept, strict=True)])

    return AverageLast()


def teacher_forced(source: np.ndarray, target: np.ndarray):
    """Inputs, labels and weights (1 on real target tokens) of pairs that fit ``MAXLEN``."""
    fits = ((source != PAD).sum(1) <= MAXLEN) & ((target != PAD).sum(1) <= MAXLEN)
    source, target = source[fits, :MAXLEN], target[fits, :MAXLEN]
    inputs = {"source_ids": source, "target_ids": target[:, :-1]}
    labels = target[:, 1:]
    return inputs, labels, (labels != PAD).astype("float32")


def greedy(model, sources: np.ndarray, batch_size: int = 500) -> list[list[int]]:
    """Greedy translations, the decoder re-run at full length each step (fixed shapes:
    compiled once); each row stops at ``[end]``."""
    out = []
    for first in range(0, len(sources), batch_size):
        source = sources[first : first + batch_size, :MAXLEN]
        target = np.zeros((len(source), MAXLEN), np.int32)
        target[:, 0] = START
        done = np.zeros(len(source), bool)
        for step in range(MAXLEN - 1):
            logits = model.predict_on_batch({"source_ids": source, "target_ids": target})
            next_ids = np.asarray(logits[:, step]).argmax(-1)
            target[:, step + 1] = np.where(done, PAD, next_ids)
            done |= next_ids == END
            if done.all():
                break
        for row in target[:, 1:]:
            ids = row.tolist()
            out.append(ids[: ids.index(END)] if END in ids else [i for i in ids if i != PAD])
    return out


def run_setting(name: str, changes: dict, data, args) -> dict:
    import keras

    from kerasformer import layers

    s = {**BASE, **changes, **(SMOKE if args.smoke else {})}
    vocabulary = "shared" if s["tie_embeddings"] else "separate"
    split = {
        part: (data[f"{vocabulary}_{part}_source"], data[f"{vocabulary}_{part}_target"])
        for part in ("train", "validation")
    }
    sizes = tuple(
        int(data["shared_vocab_size" if s["tie_embeddings"] else f"{side}_vocab_size"])
        for side in ("source", "target")
    )
    keras.utils.set_random_seed(args.seed)
    model = build(keras, layers, sizes, s)
    x, y, w = teacher_forced(*split["train"])
    if args.limit:
        x, y, w = {k: v[: args.limit] for k, v in x.items()}, y[: args.limit], w[: args.limit]
    valid = teacher_forced(*split["validation"])
    steps = math.ceil(len(y) / s["batch_size"])
    model.compile(
        keras.optimizers.Adam(learning_rate(keras, s, steps * s["epochs"])),
        smoothed_loss(keras, s["label_smoothing"]),
        weighted_metrics=["accuracy"],
    )
    callbacks = [averaging_callback(keras, s["average_last"])] if s["average_last"] else []
    started = time.perf_counter()
    history = model.fit(
        x, y, sample_weight=w, batch_size=s["batch_size"], epochs=s["epochs"],
        validation_data=valid, callbacks=callbacks, verbose=2, shuffle=True,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    sources = split["validation"][0][: args.limit or None]
    decode_started = time.perf_counter()
    translations = greedy(model, sources)
    row = {
        "settings": s,
        "parameters": int(model.count_params()),
        "val_accuracy_by_epoch": history.history["val_accuracy"],
        "train_seconds": seconds,
        "greedy_seconds": time.perf_counter() - decode_started,
        "vocabulary": vocabulary,
        "smoke": args.smoke,
        "validation_greedy_ids": translations,
    }
    print(name, json.dumps({k: v for k, v in row.items() if "ids" not in k}), flush=True)
    return row


def run(args) -> None:
    require_smoke_output(args.smoke, args.out, "--out")
    data = dict(np.load(args.data))
    only = args.only or ([PAPER] if args.smoke else None)
    run_each_setting(
        "translation_levers.py", SETTINGS, only,
        lambda name, changes: run_setting(name, changes, data, args), args.out, indent=None,
    )  # fmt: skip


# -- score (here) -------------------------------------------------------------------------


def score(args) -> None:
    import sacrebleu
    import sentencepiece

    ran = json.loads(args.results.read_text())
    # Run files from before runs were marked "smoke" hold measured runs only.
    smoke = any(run_.get("smoke", False) for run_ in ran["runs"].values())
    require_smoke_output(smoke, args.into, "--into")
    data = np.load(args.data)
    references = list(data["validation_references"])
    scored = json.loads(args.into.read_text()) if args.into.is_file() else {"runs": {}}
    for name, run_ in ran["runs"].items():
        model = data[f"{'shared' if run_['vocabulary'] == 'shared' else 'target'}_model"]
        processor = sentencepiece.SentencePieceProcessor(model_proto=model.tobytes())
        texts = [processor.decode(ids) for ids in run_.pop("validation_greedy_ids")]
        wanted = references[: len(texts)]
        lowered = [[text.lower() for text in wanted]]
        scored["runs"][name] = {
            **run_,
            "validation_bleu_greedy": sacrebleu.corpus_bleu(texts, [wanted]).score,
            "validation_chrf_greedy": sacrebleu.corpus_chrf(texts, [wanted]).score,
            "validation_bleu_lowercase_greedy": sacrebleu.corpus_bleu(
                [text.lower() for text in texts], lowered
            ).score,
            "sample": texts[:3],
            "command": ran["command"],
            "devices": ran["devices"],
            "backend": ran["backend"],
        }
    args.into.write_text(json.dumps(scored, indent=2) + "\n")
    for name, row in scored["runs"].items():
        print(
            f"| {name} | {row['parameters']:,} | {row['validation_bleu_greedy']:.1f} | "
            f"{row['validation_chrf_greedy']:.1f} | {row['val_accuracy_by_epoch'][-1]:.3f} | "
            f"{row['train_seconds']:.0f} s |"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    made = steps.add_parser("prepare")
    made.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    made.add_argument("--out", type=Path, required=True)
    running = steps.add_parser("run")
    running.add_argument("--data", type=Path, required=True)
    running.add_argument("--out", type=Path, required=True)
    running.add_argument("--only", nargs="*", help="run these settings (by name) only")
    running.add_argument("--seed", type=int, default=0)
    running.add_argument("--limit", type=int, help="a smoke test on the first N pairs")
    add_smoke_argument(running)
    scoring = steps.add_parser("score")
    scoring.add_argument("results", type=Path)
    scoring.add_argument("--data", type=Path, required=True)
    scoring.add_argument("--into", type=Path, default=RESULTS, help="the scored runs' file")
    args = parser.parse_args(argv)
    {"prepare": prepare, "run": run, "score": score}[args.step](args)


if __name__ == "__main__":
    main()
