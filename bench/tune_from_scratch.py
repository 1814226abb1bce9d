"""Choose the from-scratch classifier's defaults on validation accuracy, never on test.

Each candidate trains on the train split of train.csv (AG News) or of BBC News with
three seeds; only validation accuracy is kept and compared. Test accuracy of the
chosen defaults is reported afterwards by `kerasformer train`.

    python bench/tune_from_scratch.py --datasets ag_news bbc_news --seeds 0 1 2
    python bench/tune_from_scratch.py --table     # the saved results
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

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


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    parser.add_argument("--datasets", nargs="+", default=["ag_news", "bbc_news"])
    parser.add_argument("--candidates", nargs="+", choices=CANDIDATES, default=list(CANDIDATES))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--results", default=str(HERE / "results" / "tune_from_scratch.json"))
    parser.add_argument("--table", action="store_true", help="print the saved results only")
    return parser.parse_args()


def validation_curve(dataset: str, data_dir: str, seed: int, overrides: dict, options: dict):
    from kerasformer.training import TrainingConfig, train

    config = TrainingConfig(
        dataset=dataset, data_dir=data_dir, seed=seed, model_options=options, **overrides
    )
    result = train(config, export=False, verbose=0)
    return result.history["val_accuracy"]


def table(runs: list[dict]) -> str:
    headers = ("dataset", "candidate", "seeds", "final validation acc.", "best epoch (mean curve)")
    rows = []
    for dataset, candidate in dict.fromkeys((r["dataset"], r["candidate"]) for r in runs):
        mine = [r for r in runs if (r["dataset"], r["candidate"]) == (dataset, candidate)]
        finals = [r["val_accuracy"][-1] for r in mine]
        curves = zip(*(r["val_accuracy"] for r in mine), strict=True)
        curve = [statistics.mean(epoch) for epoch in curves]
        best = max(range(len(curve)), key=curve.__getitem__)
        rows.append([
            dataset, candidate, len(mine), f"{statistics.mean(finals):.4f}",
            f"{best + 1}: {curve[best]:.4f}",
        ])  # fmt: skip
    return markdown_table(headers, rows)


def main() -> None:
    args = parse_args()
    results = Path(args.results)
    runs = json.loads(results.read_text()) if results.exists() else []
    if args.table:
        print(table(runs))
        return
    for dataset in args.datasets:
        for name in args.candidates:
            overrides, options = CANDIDATES[name]
            for seed in args.seeds:
                data_dir = args.data_dir if dataset == "ag_news" else None  # BBC: its package
                curve = validation_curve(dataset, data_dir, seed, overrides, options)
                key = (dataset, name, seed)
                runs = [r for r in runs if (r["dataset"], r["candidate"], r["seed"]) != key]
                runs.append(
                    {"dataset": dataset, "candidate": name, "seed": seed, "val_accuracy": curve}
                )
                results.parent.mkdir(parents=True, exist_ok=True)
                results.write_text(json.dumps(runs, indent=1) + "\n")
                print(f"{dataset} | {name} | seed {seed}: {curve[-1]:.4f}", flush=True)
    print(table(runs))


if __name__ == "__main__":
    main()
