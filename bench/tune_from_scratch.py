"""Choose the from-scratch classifier's defaults on validation accuracy, never on test.

Each candidate trains on the train split of train.csv (AG News) or of BBC News with
three seeds; candidates are compared on validation accuracy only. Test accuracy is
recorded beside it for the report, never for choosing.

    python bench/tune_from_scratch.py --datasets ag_news bbc_news --seeds 0 1 2
    python bench/tune_from_scratch.py --candidates positions   # the position/LN study
    python bench/tune_from_scratch.py --datasets ag_news --candidates defaults  # vs seed 001
    python bench/tune_from_scratch.py --table     # the saved results

Each run also records its training examples/s; compare those only between runs made
one after another on a quiet machine. ``--smoke`` (CI's run, on tiny data) trains each
candidate asked for one epoch, kerasformer's with the smallest model
(`smoke.TINY_CLASSIFIER`), and needs ``--results`` outside bench/results.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from smoke import TINY_CLASSIFIER, add_smoke_argument, require_smoke_output
from tables import markdown_table

HERE = Path(__file__).resolve().parent
DEFAULT_DATA_DIR = HERE.parent.parent / "shared" / "data" / "ag_news_csv"

# (name, TrainingConfig overrides, model options); the first is the seed's settings.
CANDIDATES = {
    "seed 001 (5 epochs)": (dict(epochs=5), dict(key_dim=32)),
    "10 epochs": (dict(epochs=10), dict()),
    "20 epochs": (dict(epochs=20), dict()),
    "batch 32, 10 epochs": (dict(epochs=10, batch_size=32), dict()),
    "batch 32, dropout 0.3": (dict(epochs=10, batch_size=32), dict(dropout=0.3)),
    "batch 32, embed 64, dropout 0.3": (
        dict(epochs=10, batch_size=32),
        dict(embed_dim=64, ff_dim=64, dropout=0.3),
    ),
    "batch 32, embed 64, dropout 0.5": (
        dict(epochs=10, batch_size=32),
        dict(embed_dim=64, ff_dim=64, dropout=0.5),
    ),
    # BBC articles run past 256 words 71% of the time; the rest of them is never read.
    "maxlen 512": (dict(epochs=10), dict(maxlen=512)),
    "batch 32, vocab 10000, dropout 0.3": (
        dict(epochs=10, batch_size=32),
        dict(vocab_size=10000, dropout=0.3),
    ),
}
# Issue 11: where positions come from, and pre-LN against post-LN, at today's defaults.
POSITION_CANDIDATES = {
    f"{position}{', pre-LN' if norm_first else ''}": (
        dict(),
        dict(position=position, norm_first=norm_first),
    )
    for position in ("learned", "sinusoidal", "rotary", "relative")
    for norm_first in (False, True)
}
CANDIDATES.update(POSITION_CANDIDATES)
# Issue 14: the default against seed 001's own model (bench/seed_baseline.py) at equal epochs.
SEED_MODEL = "seed 001's model, 10 epochs"
DEFAULT_CANDIDATES = {
    "key_dim 32": (dict(), dict(key_dim=32)),
    "embed 64, ff 64": (dict(), dict(embed_dim=64, ff_dim=64)),
    "batch 64": (dict(batch_size=64), dict()),
    "learning rate 2e-3": (dict(learning_rate=2e-3), dict()),
    "batch 64, key_dim 32": (dict(batch_size=64), dict(key_dim=32)),
}
CANDIDATES.update({SEED_MODEL: (dict(epochs=10), dict()), **DEFAULT_CANDIDATES})
GROUPS = {
    "positions": list(POSITION_CANDIDATES),
    "defaults": [SEED_MODEL, "10 epochs", *DEFAULT_CANDIDATES],
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    parser.add_argument("--datasets", nargs="+", default=["ag_news", "bbc_news"])
    parser.add_argument(
        "--candidates", nargs="+", choices=[*CANDIDATES, *GROUPS], default=list(CANDIDATES),
        help="candidates by name, or a group: " + ", ".join(GROUPS),
    )  # fmt: skip
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--results", default=str(HERE / "results" / "tune_from_scratch.json"))
    parser.add_argument("--table", action="store_true", help="print the saved results only")
    add_smoke_argument(parser)
    return parser.parse_args(argv)


def validation_curve(dataset: str, data_dir: str, seed: int, overrides: dict, options: dict):
    from kerasformer.training import TrainingConfig, train

    config = TrainingConfig(
        dataset=dataset, data_dir=data_dir, seed=seed, model_options=options, **overrides
    )
    result = train(config, export=False, verbose=0)
    examples = len(result.data.splits["train"]) * len(result.history["val_accuracy"])
    test = result.metrics["test"]["accuracy"]
    return result.history["val_accuracy"], examples / result.train_seconds, test


def seed_model_curve(dataset: str, data_dir: str, seed: int, overrides: dict, options: dict):
    """Seed 001's model as it wrote it (unmasked, fixed maxlen), on the same split."""
    import time

    from seed_baseline import adapted_seed_model, fit_seed_model, string_tensors

    from kerasformer.backend import keras
    from kerasformer.datasets import load_dataset

    data = load_dataset(dataset, data_dir, validation_fraction=0.1, split_seed=0)
    train_part, validation = data.splits["train"], data.splits["validation"]
    keras.utils.set_random_seed(seed)

    model = adapted_seed_model(string_tensors(train_part)[0], data.num_classes)
    started = time.perf_counter()
    history = fit_seed_model(
        model, string_tensors(train_part), string_tensors(validation), overrides["epochs"]
    ).history.history
    speed = len(train_part) * overrides["epochs"] / (time.perf_counter() - started)
    test = model.evaluate(*string_tensors(data.splits["test"]), batch_size=256, verbose=0)[1]
    return history["val_acc"], speed, float(test)


def table(runs: list[dict]) -> str:
    headers = (
        "dataset", "candidate", "seeds", "final validation acc.", "best epoch (mean curve)",
        "train ex/s", "test acc. (not for choosing)",
    )  # fmt: skip
    rows = []
    for dataset, candidate in dict.fromkeys((r["dataset"], r["candidate"]) for r in runs):
        mine = [r for r in runs if (r["dataset"], r["candidate"]) == (dataset, candidate)]
        finals = [r["val_accuracy"][-1] for r in mine]
        curves = zip(*(r["val_accuracy"] for r in mine), strict=True)
        curve = [statistics.mean(epoch) for epoch in curves]
        best = max(range(len(curve)), key=curve.__getitem__)
        speeds = [r["train_examples_per_second"] for r in mine if "train_examples_per_second" in r]
        tests = [r["test_accuracy"] for r in mine if "test_accuracy" in r]
        rows.append([
            dataset, candidate, len(mine), f"{statistics.mean(finals):.4f}",
            f"{best + 1}: {curve[best]:.4f}",
            f"{statistics.mean(speeds):.0f}" if speeds else "",
            f"{statistics.mean(tests):.4f}" if len(tests) == len(mine) else "",
        ])  # fmt: skip
    return markdown_table(headers, rows)


def smoke_settings(overrides: dict, options: dict) -> tuple[dict, dict]:
    """One epoch, and the smallest model (seed 001's model keeps its own sizes)."""
    return {**overrides, "epochs": 1}, {**options, **TINY_CLASSIFIER}


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    require_smoke_output(args.smoke, args.results, "--results")
    results = Path(args.results)
    runs = json.loads(results.read_text()) if results.exists() else []
    if args.table:
        print(table(runs))
        return
    candidates = [n for c in args.candidates for n in GROUPS.get(c, [c])]
    for dataset in args.datasets:
        for name in candidates:
            overrides, options = CANDIDATES[name]
            if args.smoke:
                overrides, options = smoke_settings(overrides, options)
            for seed in args.seeds:
                data_dir = args.data_dir if dataset == "ag_news" else None  # BBC: its package
                measure = seed_model_curve if name == SEED_MODEL else validation_curve
                curve, speed, test = measure(dataset, data_dir, seed, overrides, options)
                key = (dataset, name, seed)
                runs = [r for r in runs if (r["dataset"], r["candidate"], r["seed"]) != key]
                runs.append({
                    "dataset": dataset, "candidate": name, "seed": seed, "val_accuracy": curve,
                    "train_examples_per_second": speed, "test_accuracy": test,
                })  # fmt: skip
                results.parent.mkdir(parents=True, exist_ok=True)
                results.write_text(json.dumps(runs, indent=1) + "\n")
                print(f"{dataset} | {name} | seed {seed}: {curve[-1]:.4f}", flush=True)
    print(table(runs))


if __name__ == "__main__":
    main()
