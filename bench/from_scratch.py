"""kerasformer's from-scratch classifier against seed 001's, on AG News and BBC News.

Every run is its own process, one after another on the same machine, so peak memory
is the run's own. Both systems train on the same train split (validation held out
from train.csv), with the same hyperparameters and epochs, and are tested on test.csv.

    python bench/from_scratch.py compare --seeds 0 1 2   # the side-by-side table
    python bench/from_scratch.py ablation                # what each optimisation buys
    python bench/from_scratch.py scaling                 # epoch time vs maxlen and data size

Measures:
- training examples/s: train examples x epochs over the training wall time, which runs
  from building the input pipeline to the end of the last epoch (validation included);
- inference examples/s: the exported SavedModel on test texts in batches of 256;
- latency: median time of the exported SavedModel on one text;
- peak memory: the process's peak resident set (training, export and inference).

``--smoke`` (CI's run, on tiny data, ``--results`` outside bench/results) runs, in this
process, each system's last row of the mode (the ablation's with XLA) for one epoch
(scaling: two, for a second epoch to time).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from smoke import add_smoke_argument, require_smoke_output
from tables import markdown_table

HERE = Path(__file__).resolve().parent
DEFAULT_DATA_DIR = HERE.parent.parent / "shared" / "data" / "ag_news_csv"
DATASETS = ("ag_news", "bbc_news")
# The seed's hyperparameters; kerasformer's defaults differ only in key_dim and epochs.
SEED_SETTINGS = dict(epochs=5, batch_size=128, learning_rate=1e-3)
SEED_MODEL = dict(vocab_size=20000, maxlen=256, embed_dim=32, num_heads=2, ff_dim=32, key_dim=32)
ABLATION = (
    ("strings", dict(input_pipeline="strings")),
    ("+ vectorise once (cached ids, padded to maxlen)", dict(input_pipeline="padded")),
    ("+ pad to the longest text of the batch", dict(input_pipeline="dynamic")),
    ("+ length buckets", dict(input_pipeline="bucketed")),
    ("+ XLA", dict(input_pipeline="bucketed", xla=True)),
)


# --- one run, in its own process ---------------------------------------------------------


def run_one(spec: dict) -> dict:
    """Train, test, export and time one system on one dataset, as ``spec`` says."""
    sys.path.insert(0, str(HERE.parent))
    from kerasformer.backend import keras
    from kerasformer.datasets import LabeledTexts, load_dataset

    data = load_dataset(spec["dataset"], spec["data_dir"], validation_fraction=0.1, split_seed=0)
    train_part = data.splits["train"]
    if spec.get("train_fraction", 1.0) < 1.0:
        train_part = train_part.sample(round(len(train_part) * spec["train_fraction"]))
    splits = {**data.splits, "train": train_part}
    keras.utils.set_random_seed(spec["seed"])
    if spec["system"] == "baseline":
        trained = train_baseline(spec, splits, data.num_classes)
    else:
        trained = train_kerasformer(spec, splits, data)
    test: LabeledTexts = data.splits["test"]
    with tempfile.TemporaryDirectory() as export_dir:
        serve = trained["export"](Path(export_dir) / "model")
        predictions = predict_in_batches(serve, list(test.texts))
        inference = {} if spec.get("skip_inference") else time_inference(serve, list(test.texts))
    return {
        **{k: v for k, v in spec.items() if k != "data_dir"},
        "train_examples": len(train_part),
        "epochs_run": trained["epochs"],
        "train_seconds": trained["seconds"],
        "train_examples_per_second": len(train_part) * trained["epochs"] / trained["seconds"],
        "epoch_seconds": trained["epoch_seconds"],
        "test_accuracy": float((predictions.argmax(-1) == test.labels).mean()),
        **inference,
        "peak_memory_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def train_baseline(spec: dict, splits: dict, num_classes: int) -> dict:
    import numpy as np
    import tensorflow as tf
    from seed_baseline import adapted_seed_model, fit_seed_model, string_tensors

    from kerasformer.training.trainer import EpochLog

    model = adapted_seed_model(string_tensors(splits["train"])[0], num_classes, spec["maxlen"])
    recorder = EpochLog(run=None)
    started = time.perf_counter()
    fit_seed_model(
        model, string_tensors(splits["train"]), string_tensors(splits["validation"]),
        spec["epochs"], callbacks=[recorder],
    )  # fmt: skip
    seconds = time.perf_counter() - started

    def export(path: Path):
        model.save(path, save_format="tf")
        signature = tf.saved_model.load(str(path)).signatures["serving_default"]
        (input_name,) = signature.structured_input_signature[1]
        (output_name,) = signature.structured_outputs

        def serve(batch):
            inputs = tf.constant(np.asarray(batch, dtype=object)[:, None], dtype=tf.string)
            return signature(**{input_name: inputs})[output_name].numpy()

        return serve

    return dict(
        epochs=spec["epochs"], seconds=seconds, epoch_seconds=recorder.history["seconds"],
        export=export,
    )  # fmt: skip


def train_kerasformer(spec: dict, splits: dict, data) -> dict:
    import dataclasses

    from kerasformer.export import ExportedClassifier, export_classifier
    from kerasformer.training import TrainingConfig, train

    config = TrainingConfig(
        dataset=spec["dataset"], data_dir=spec["data_dir"], seed=spec["seed"],
        epochs=spec["epochs"], batch_size=spec["batch_size"],
        learning_rate=spec["learning_rate"], input_pipeline=spec.get("input_pipeline"),
        xla=spec.get("xla", False), model_options=spec["model_options"],
    )  # fmt: skip
    data = dataclasses.replace(data, splits=splits)
    result = train(config, export=False, verbose=2, data=data)

    def export(path: Path):
        export_classifier(result.model, data.class_names, path)
        return ExportedClassifier(path).predict_proba

    return dict(
        epochs=len(result.history["loss"]), seconds=result.train_seconds,
        epoch_seconds=result.history["seconds"], export=export,
    )  # fmt: skip


def predict_in_batches(serve, texts: list[str], batch_size: int = 256):
    import numpy as np

    return np.concatenate(
        [serve(texts[start : start + batch_size]) for start in range(0, len(texts), batch_size)]
    )


def time_inference(serve, texts: list[str]) -> dict:
    """Throughput at batch 256 over every test text (twice), and single-text latency."""
    import numpy as np

    serve(texts[:256])  # warm up: trace and load
    started = time.perf_counter()
    for _ in range(2):
        for start in range(0, len(texts), 256):
            serve(texts[start : start + 256])
    throughput = 2 * len(texts) / (time.perf_counter() - started)
    latencies = []
    for text in texts[:201]:
        started = time.perf_counter()
        serve([text])
        latencies.append(time.perf_counter() - started)
    return {
        "inference_examples_per_second": throughput,
        "latency_ms_median": 1000 * float(np.median(latencies)),
    }


# --- what to run, and the tables -----------------------------------------------------------


def seed_spec(system: str, dataset: str, seed: int, data_dir: str, **extra) -> dict:
    maxlen = extra.pop("maxlen", SEED_MODEL["maxlen"])
    data_dir = data_dir if dataset == "ag_news" else None  # BBC News comes with a package
    return {
        "system": system, "dataset": dataset, "seed": seed, "data_dir": data_dir,
        **SEED_SETTINGS, "maxlen": maxlen, "model_options": {**SEED_MODEL, "maxlen": maxlen},
        **extra,
    }  # fmt: skip


def compare_specs(args) -> list[dict]:
    return [
        {**seed_spec(system, dataset, seed, args.data_dir), "mode": "compare", "label": system}
        for dataset in args.datasets
        for seed in args.seeds
        for system in ("baseline", "kerasformer")
    ]


def ablation_specs(args) -> list[dict]:
    specs = []
    for dataset in args.datasets:
        for seed in args.seeds:
            specs.append(
                {**seed_spec("baseline", dataset, seed, args.data_dir), "label": "seed 001"}
            )
            for label, options in ABLATION:
                spec = seed_spec("kerasformer", dataset, seed, args.data_dir, **options)
                specs.append({**spec, "label": label})
    return [{**spec, "mode": "ablation"} for spec in specs]


def scaling_specs(args) -> list[dict]:
    specs = []
    for system in ("baseline", "kerasformer"):
        for maxlen in (64, 128, 256, 512):
            spec = seed_spec(system, "ag_news", 0, args.data_dir, maxlen=maxlen, epochs=2)
            specs.append({**spec, "label": f"maxlen {maxlen}"})
        for fraction in (0.25, 0.5):
            spec = seed_spec(system, "ag_news", 0, args.data_dir, epochs=2, train_fraction=fraction)
            specs.append({**spec, "label": f"train x{fraction}"})
    return [{**spec, "mode": "scaling", "skip_inference": True} for spec in specs]


def run_in_child(spec: dict) -> dict:
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        command = [sys.executable, __file__, "run", json.dumps(spec), "--out", out.name]
        subprocess.run(command, check=True)
        return json.loads(Path(out.name).read_text())


def run_key(run: dict) -> tuple:
    return run["mode"], run["label"], run["system"], run["dataset"], run["seed"]


def mean(values) -> float:
    return statistics.mean(values)


def accuracy_cell(runs: list[dict]) -> str:
    accuracies = [r["test_accuracy"] for r in runs]
    spread = f" ± {statistics.stdev(accuracies):.3f}" if len(accuracies) > 1 else ""
    return f"{mean(accuracies):.3f}{spread}"


def compare_table(runs: list[dict]) -> str:
    headers = (
        "dataset", "system", "seeds", "test accuracy", "train ex/s",
        "inference ex/s (batch 256)", "latency, 1 text (ms)", "peak memory (MB)",
    )  # fmt: skip
    rows = []
    for dataset in DATASETS:
        groups = {}
        for system in ("baseline", "kerasformer"):
            mine = [r for r in runs if (r["dataset"], r["system"]) == (dataset, system)]
            if not mine:
                continue
            groups[system] = mine
            rows.append([
                dataset, system, len(mine), accuracy_cell(mine),
                f"{mean(r['train_examples_per_second'] for r in mine):.0f}",
                f"{mean(r['inference_examples_per_second'] for r in mine):.0f}",
                f"{mean(r['latency_ms_median'] for r in mine):.2f}",
                f"{mean(r['peak_memory_mb'] for r in mine):.0f}",
            ])  # fmt: skip
        if len(groups) == 2:
            base, mine = groups["baseline"], groups["kerasformer"]

            def ratio(key, runs_a=mine, runs_b=base):
                return mean(r[key] for r in runs_a) / mean(r[key] for r in runs_b)

            rows.append([
                dataset, "**kerasformer / baseline**", "", f"{ratio('test_accuracy'):.3f}x",
                f"**{ratio('train_examples_per_second'):.2f}x**",
                f"**{ratio('inference_examples_per_second'):.2f}x**",
                f"{ratio('latency_ms_median'):.2f}x", f"{ratio('peak_memory_mb'):.2f}x",
            ])  # fmt: skip
    return markdown_table(headers, rows)


def ablation_table(runs: list[dict]) -> str:
    headers = (
        "dataset", "training", "seeds", "train ex/s", "vs seed 001", "test accuracy",
        "inference ex/s",
    )  # fmt: skip
    rows = []
    for dataset in DATASETS:
        mine = [r for r in runs if r["dataset"] == dataset]
        base = [r for r in mine if r["label"] == "seed 001"]
        for label in ["seed 001", *(label for label, _ in ABLATION)]:
            group = [r for r in mine if r["label"] == label]
            if not group:
                continue
            speed = mean(r["train_examples_per_second"] for r in group)
            versus = speed / mean(r["train_examples_per_second"] for r in base) if base else 0
            rows.append([
                dataset, label, len(group), f"{speed:.0f}", f"{versus:.2f}x",
                accuracy_cell(group),
                f"{mean(r['inference_examples_per_second'] for r in group):.0f}",
            ])  # fmt: skip
    return markdown_table(headers, rows)


def scaling_table(runs: list[dict]) -> str:
    headers = (
        "setting",
        "train examples",
        "seed 001: s/epoch",
        "kerasformer: s/epoch",
        "speed-up",
    )
    rows = []
    for label in dict.fromkeys(r["label"] for r in runs):
        cells = {run["system"]: run for run in runs if run["label"] == label}
        if len(cells) < 2:
            continue
        per_epoch = {s: r["train_seconds"] / r["epochs_run"] for s, r in cells.items()}
        rows.append([
            label, cells["kerasformer"]["train_examples"], f"{per_epoch['baseline']:.1f}",
            f"{per_epoch['kerasformer']:.1f}",
            f"{per_epoch['baseline'] / per_epoch['kerasformer']:.2f}x",
        ])  # fmt: skip
    return markdown_table(headers, rows)


TABLES = {"compare": compare_table, "ablation": ablation_table, "scaling": scaling_table}
SPECS = {"compare": compare_specs, "ablation": ablation_specs, "scaling": scaling_specs}


def smoke_specs(specs: list[dict]) -> list[dict]:
    """A smoke run's specs: of each system, its last row only (the ablation's with XLA),
    for one epoch (two for scaling, whose seconds per epoch need a second)."""
    last = {spec["system"]: spec for spec in specs}
    return [{**spec, "epochs": 2 if spec["mode"] == "scaling" else 1} for spec in last.values()]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=(*SPECS, "table", "run"))
    parser.add_argument("spec", nargs="?", help="(run) the run's settings as JSON")
    parser.add_argument("--out", help="(run) where to write the run's result")
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--results", default=str(HERE / "results" / "from_scratch.json"))
    add_smoke_argument(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.mode == "run":
        Path(args.out).write_text(json.dumps(run_one(json.loads(args.spec))))
        return
    require_smoke_output(args.smoke, args.results, "--results")
    results = Path(args.results)
    runs = json.loads(results.read_text()) if results.exists() else []
    if args.mode != "table":
        specs = SPECS[args.mode](args)
        # A smoke run measures nothing, so it skips the process of its own per run.
        for spec in smoke_specs(specs) if args.smoke else specs:
            run = run_one(spec) if args.smoke else run_in_child(spec)
            runs = [r for r in runs if run_key(r) != run_key(run)] + [run]
            results.parent.mkdir(parents=True, exist_ok=True)
            results.write_text(json.dumps(runs, indent=1) + "\n")
    modes = SPECS if args.mode == "table" else [args.mode]
    for mode in modes:
        mine = [r for r in runs if r["mode"] == mode]
        if mine:
            print(f"\n{mode}\n\n{TABLES[mode](mine)}")


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    main()
