"""A from-scratch AG News classifier as a SavedModel and as LiteRT models, one run.

For the SavedModel (raw strings in, TensorFlow) and each ``.tflite`` quantisation
(token ids made in Python by ``WordIds``, run by ``ai_edge_litert``), on the AG News
test split: file size (a ``.tflite`` with its ``vocab.txt``), accuracy, agreement with
the SavedModel's classes, single-text latency (median and 90th percentile over
``--latency-texts`` texts, each from text to probabilities, one at a time) and batch
throughput (texts/s in batches of ``--batch-size``). Both use every core of this machine.

    kerasformer train --dataset ag_news --data-dir ../shared/data/ag_news_csv \\
        --epochs 3 --export-dir /tmp/ag_news
    python bench/litert.py /tmp/ag_news
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
from tables import markdown_table

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "litert.json"
DEFAULT_DATA_DIR = HERE.parent.parent / "shared" / "data" / "ag_news_csv"
QUANTIZATIONS = ("none", "dynamic", "float16")
# The SavedModel's own files; model.keras and the training records are not served.
SAVED_MODEL_PARTS = ("saved_model.pb", "variables", "assets")


def size_of(path: Path) -> int:
    return path.stat().st_size if path.is_file() else sum(
        p.stat().st_size for p in path.rglob("*") if p.is_file()
    )  # fmt: skip


def latencies(function, texts: list[str]) -> np.ndarray:
    function(texts[:1])  # warm up
    seconds = []
    for text in texts:
        started = time.perf_counter()
        function([text])
        seconds.append(time.perf_counter() - started)
    return np.asarray(seconds) * 1000


def throughput(function, texts: list[str], batch_size: int) -> tuple[float, np.ndarray]:
    function(texts[:batch_size])  # warm up
    started = time.perf_counter()
    probabilities = np.concatenate(
        [function(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)]
    )
    return len(texts) / (time.perf_counter() - started), probabilities


def measure(name: str, size: int, function, texts, labels, args, reference=None):
    """The row of one model, and its probabilities on every text."""
    per_text = latencies(function, texts[: args.latency_texts])
    rate, probabilities = throughput(function, texts, args.batch_size)
    predicted = probabilities.argmax(axis=1)
    row = {
        "model": name, "bytes": size, "accuracy": float((predicted == labels).mean()),
        "latency_ms_median": float(np.median(per_text)),
        "latency_ms_p90": float(np.percentile(per_text, 90)), "texts_per_s": rate,
    }  # fmt: skip
    if reference is not None:
        row["same_class"] = float((predicted == reference.argmax(axis=1)).mean())
        row["max_abs_diff"] = float(np.abs(probabilities - reference).max())
    print(json.dumps(row), flush=True)
    return row, probabilities


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("export_dir", type=Path)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--latency-texts", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--table", action="store_true", help="print the last results only")
    parser.add_argument("--output", type=Path, default=RESULTS, help="where the results go")
    args = parser.parse_args(argv)
    if not args.table:
        run(args)
    print(table(json.loads(args.output.read_text())))


def run(args) -> None:
    from kerasformer.datasets.ag_news import read_csv_folder
    from kerasformer.export.litert_export import export_litert
    from kerasformer.litert import LiteRTClassifier
    from kerasformer.litert.files import LiteRTFiles
    from kerasformer.loading import ExportedClassifier

    _, test, _ = read_csv_folder(args.data_dir)
    texts, labels = [str(t) for t in test.texts], np.asarray(test.labels)
    saved = ExportedClassifier(args.export_dir)
    saved_size = sum(size_of(args.export_dir / part) for part in SAVED_MODEL_PARTS)
    rows = []
    row, reference = measure("SavedModel", saved_size, lambda t: saved.predict_proba(t),
                             texts, labels, args)  # fmt: skip
    rows.append(row)
    with tempfile.TemporaryDirectory() as scratch:
        for quantize in QUANTIZATIONS:
            files = LiteRTFiles(Path(scratch) / f"{quantize}.tflite")
            export_litert(args.export_dir, files.model, quantize, progress=False)
            classifier = LiteRTClassifier(files.model)
            # The vocabulary file is part of what a device needs, as it is in the SavedModel.
            size = size_of(files.model) + size_of(files.vocabulary)
            row, _ = measure(f".tflite {quantize}", size,
                             lambda t, c=classifier: c.predict_proba(t), texts, labels, args,
                             reference)  # fmt: skip
            row["model_bytes"] = size_of(files.model)
            rows.append(row)
    results = {"machine": f"{platform.processor() or platform.machine()}, "
               f"{__import__('os').cpu_count()} cores", "export": str(args.export_dir),
               "test_texts": len(texts), "batch_size": args.batch_size,
               "latency_texts": args.latency_texts, "rows": rows}  # fmt: skip
    args.output.write_text(json.dumps(results, indent=1))


def table(results: dict) -> str:
    base = results["rows"][0]
    rows = [
        [
            row["model"],
            f"{row['bytes'] / 2**20:.2f} MiB",
            f"{row.get('model_bytes', row['bytes']) / 2**20:.2f} MiB",
            f"{base['bytes'] / row['bytes']:.1f}x",
            f"{row['accuracy']:.4f}",
            f"{row['accuracy'] - base['accuracy']:+.4f}",
            f"{row.get('same_class', 1.0):.4f}",
            f"{row['latency_ms_median']:.2f}",
            f"{row['latency_ms_p90']:.2f}",
            f"{row['texts_per_s']:.0f}",
            f"{row['texts_per_s'] / base['texts_per_s']:.2f}x",
        ]
        for row in results["rows"]
    ]
    headers = ["model", "files", "model file", "smaller", "test accuracy", "vs SavedModel",
               "same class", "latency ms (median)", "p90", "texts/s", "throughput"]  # fmt: skip
    return markdown_table(headers, rows)


if __name__ == "__main__":
    main()
