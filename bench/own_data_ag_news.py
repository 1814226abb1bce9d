"""The same AG News 5.5k rows read as the named dataset and as a user's CSV files.

Three runs of `kerasformer.training.train`, seed 0, the defaults, no export:

- ``named``: ``--dataset ag_news --data-dir DIR`` (train.csv, test.csv; validation held out);
- ``your CSV, as given``: the same two files with a header row added, read with
  ``--train-file train.csv --test-file test.csv --text-column title,description
  --label-column class`` (validation held out the same way);
- ``your CSV, named loader's texts``: each split as the named loader reads it, written to
  three CSV files (``text,label``) and read with ``--train-file/--validation-file/--test-file``.

    python bench/own_data_ag_news.py [--data-dir ../shared/data/ag_news_csv] [--epochs 10]

Prints the split sizes, validation and test accuracy of each, and whether the splits'
texts and labels are the same as the named dataset's. ``--smoke`` (CI's run, on tiny
data) trains the smallest model (`smoke.TINY_CLASSIFIER`) for one epoch.
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time
from pathlib import Path

import numpy as np
from smoke import TINY_CLASSIFIER, add_smoke_argument
from tables import markdown_table

HERE = Path(__file__).resolve().parent
DEFAULT_DATA_DIR = HERE.parent.parent / "shared" / "data" / "ag_news_csv"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    parser.add_argument("--epochs", type=int, default=10)
    add_smoke_argument(parser)
    return parser.parse_args(argv)


def with_header(source: Path, destination: Path) -> Path:
    """AG News's headerless ``class,title,description`` rows with a header row added."""
    destination.write_text(
        "class,title,description\n" + source.read_text(encoding="utf-8"), encoding="utf-8"
    )
    return destination


def write_split(part, destination: Path) -> Path:
    with open(destination, "w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["text", "label"])
        writer.writerows(zip(part.texts, part.labels.tolist(), strict=True))
    return destination


def same_splits(data, reference) -> bool:
    return all(
        list(data.splits[s].texts) == list(reference.splits[s].texts)
        and np.array_equal(data.splits[s].labels, reference.splits[s].labels)
        for s in ("train", "validation", "test")
    )


def main(argv: list[str] | None = None) -> None:
    from kerasformer.training import TrainingConfig, train

    args = parse_args(argv)
    data_dir = Path(args.data_dir)
    common = dict(epochs=args.epochs, seed=0)
    if args.smoke:
        common = dict(epochs=1, seed=0, model_options=TINY_CLASSIFIER)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        named_config = TrainingConfig(dataset="ag_news", data_dir=str(data_dir), **common)
        raw_config = TrainingConfig(
            train_file=str(with_header(data_dir / "train.csv", folder / "train.csv")),
            test_file=str(with_header(data_dir / "test.csv", folder / "test.csv")),
            data_options={"text_column": "title,description", "label_column": "class"},
            **common,
        )
        results = {"named": train(named_config, export=False, verbose=0)}
        reference = results["named"].data
        written = {s: write_split(reference.splits[s], folder / f"{s}-split.csv")
                   for s in ("train", "validation", "test")}  # fmt: skip
        texts_config = TrainingConfig(
            train_file=str(written["train"]), validation_file=str(written["validation"]),
            test_file=str(written["test"]), **common,
        )  # fmt: skip
        for name, config in (("your CSV, as given", raw_config),
                             ("your CSV, named loader's texts", texts_config)):  # fmt: skip
            started = time.perf_counter()
            results[name] = train(config, export=False, verbose=0)
            print(f"{name}: {time.perf_counter() - started:.0f} s")
        for name, result in results.items():
            sizes = result.data.sizes()
            rows.append((
                name, f"{sizes['train']:,} / {sizes['validation']:,} / {sizes['test']:,}",
                f"{result.metrics['validation']['accuracy']:.4f}",
                f"{result.metrics['test']['accuracy']:.4f}",
                "yes" if same_splits(result.data, reference) else "no",
            ))  # fmt: skip
    print(markdown_table(
        ("data", "train / validation / test", "validation acc.", "test acc.",
         "same texts and labels as named"), rows,
    ))  # fmt: skip


if __name__ == "__main__":
    main()
