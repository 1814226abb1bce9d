"""A from-scratch student distilled from fine-tuned MiniLM on AG News 5.5k, against the
same transformer trained on the labels alone, the teacher, and TF-IDF + logistic regression.

    python bench/distillation.py --seeds 0 1 2                        # the table
    python bench/distillation.py --seeds 0 1 2 --unlabelled-bbc        # plus BBC News texts
    python bench/distillation.py --seeds 0 1 2 --augment 4   # plus perturbed training texts
    python bench/distillation.py --table

The teacher is MiniLM-L6 (converted by ``convert-bert``, bfloat16 encoder with
``--teacher-bf16``) fine-tuned with the unfrozen recipe, trained once (seed 0) and kept in
the work directory. Students use kerasformer's from-scratch defaults for the epochs,
batch size and model; ``--temperature`` and ``--teacher-weight`` are chosen on validation
accuracy. Serving speed is each export's ``serving_default`` on the test texts in batches
of 256, measured in this process one after another.

Its smoke run (CI's, `tests/bench/`), ``--smoke --bert-dir TINY_BERT --data-dir TINY
--work-dir DIR --out PATH``, fine-tunes a tiny BERT teacher for one epoch and trains the
smallest students (`TINY_CLASSIFIER`) for one epoch, one seed; no BBC texts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from smoke import (
    TINY_CLASSIFIER,
    add_bert_dir_argument,
    add_smoke_argument,
    converted_bert_in,
    parse_with_smoke_defaults,
    require_smoke_output,
)
from tables import markdown_table

HERE = Path(__file__).resolve().parent
DEFAULT_DATA_DIR = HERE.parent.parent / "shared" / "data" / "ag_news_csv"
RESULTS = HERE / "results" / "distillation.json"
TFIDF_BASELINE = 0.874  # bench/tfidf_baseline.py on the same split (README, Benchmarks)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    parser.add_argument("--work-dir", default="/tmp/kerasformer-bench/distillation")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--teacher-epochs", type=int, default=3)
    parser.add_argument("--teacher-bf16", action="store_true")
    add_bert_dir_argument(parser)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--temperature", type=float, default=2.0)
    parser.add_argument("--teacher-weight", type=float, default=0.5)
    parser.add_argument("--unlabelled-bbc", action="store_true")
    parser.add_argument("--augment", type=int, default=0, help="perturbed copies per text")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the results' JSON file")
    parser.add_argument("--table", action="store_true")
    add_smoke_argument(parser)
    args = parse_with_smoke_defaults(parser, argv, seeds=[0], teacher_epochs=1, epochs=1)
    require_smoke_output(args.smoke, args.out, "--out")
    if args.bert_dir and args.teacher_bf16:
        parser.error("--teacher-bf16 picks MiniLM's bfloat16 conversion; --bert-dir gives one")
    return args


def teacher_export(args) -> Path:
    """MiniLM fine-tuned on the training split, trained once and kept; the BERT of
    --bert-dir is fine-tuned afresh every time, as its folder's name cannot tell one
    conversion from another."""
    from bert_padding import converted_minilm

    if args.bert_dir:
        export_dir = Path(args.work_dir) / "teacher-bert-dir"
        return fine_tuned(args, converted_bert_in(args.bert_dir), export_dir)
    name = "bucketed+bf16" if args.teacher_bf16 else "bucketed"
    export_dir = Path(args.work_dir) / f"teacher-{name.replace('+', '-')}"
    if (export_dir / "saved_model.pb").is_file():
        return export_dir
    return fine_tuned(args, converted_minilm(128, name), export_dir)


def fine_tuned(args, hub_bert, export_dir: Path) -> Path:
    """``hub_bert`` fine-tuned as the teacher (seed 0), exported to ``export_dir``."""
    from kerasformer.training import TrainingConfig, train

    config = TrainingConfig(
        model="bert", dataset="ag_news", data_dir=args.data_dir, epochs=args.teacher_epochs,
        batch_size=32, seed=0, export_dir=str(export_dir), overwrite=True,
        model_options=dict(preprocess=str(hub_bert.preprocess), encoder=str(hub_bert.encoder)),
    )  # fmt: skip
    train(config, verbose=2)
    return export_dir


def bbc_unlabelled_file(work_dir: Path) -> Path:
    """BBC News cut into two-sentence texts (about an AG News item's length) as unlabelled
    texts: news of another corpus, none of it in AG News."""
    import re

    from kerasformer.datasets import load_dataset

    data = load_dataset("bbc_news", None, 0.1, split_seed=0)
    texts = []
    for part in data.splits.values():
        for article in part.texts:
            sentences = re.split(r"(?<=[.!?])\s+", " ".join(str(article).split()))
            texts += [" ".join(sentences[i : i + 2]) for i in range(0, len(sentences), 2)]
    path = work_dir / "bbc_two_sentences.txt"
    path.write_text("\n".join(t for t in texts if len(t.split()) >= 8) + "\n", encoding="utf-8")
    return path


def serving_examples_per_second(export_dir: Path, texts) -> float:
    import tensorflow_text  # noqa: F401

    from kerasformer.backend import tf

    serve = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    batches = [tf.constant(list(texts[i : i + 256])) for i in range(0, len(texts), 256)]
    serve(inputs=batches[0])
    started = time.perf_counter()
    for batch in batches:
        serve(inputs=batch)
    return len(texts) / (time.perf_counter() - started)


def run_student(args, seed: int, teacher: Path | None, unlabelled: Path | None) -> dict:
    from kerasformer.training import TrainingConfig, train

    distilled = teacher is not None
    with tempfile.TemporaryDirectory(prefix="kerasformer-student-") as scratch:
        config = TrainingConfig(
            task="distillation" if distilled else "classification", dataset="ag_news",
            data_dir=args.data_dir, epochs=args.epochs, seed=seed,
            export_dir=str(Path(scratch) / "student"),
            model_options=TINY_CLASSIFIER if args.smoke else {},
            **(dict(teacher=str(teacher), temperature=args.temperature,
                    teacher_weight=args.teacher_weight, augmented_copies=args.augment,
                    unlabelled_texts=None if unlabelled is None else str(unlabelled))
               if distilled else {}),
        )  # fmt: skip
        started = time.perf_counter()
        result = train(config, verbose=2)
        wall = time.perf_counter() - started
        speed = serving_examples_per_second(
            result.export_dir, list(result.data.splits["test"].texts)
        )
    return {
        "system": "distilled student" if distilled else "from scratch, labels only",
        "seed": seed,
        "unlabelled": None if unlabelled is None else str(unlabelled),
        "validation_accuracy": result.metrics["validation"]["accuracy"],
        "test_accuracy": result.metrics["test"]["accuracy"],
        "serving_examples_per_second": speed,
        "wall_seconds": wall,
    }


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.table:
        print(table(json.loads(args.out.read_text())))
        return
    work_dir = Path(args.work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    teacher = teacher_export(args)
    metrics = json.loads((teacher / "metrics.json").read_text())
    from kerasformer.datasets import load_dataset

    test_texts = list(
        load_dataset("ag_news", args.data_dir, 0.1, split_seed=0).splits["test"].texts
    )
    report = json.loads(args.out.read_text()) if args.out.is_file() else {"runs": []}
    teacher_speed = serving_examples_per_second(teacher, test_texts)
    report["teacher"] = {
        "export": str(teacher),
        "validation_accuracy": metrics["validation"]["accuracy"],
        "test_accuracy": metrics["test"]["accuracy"],
        "serving_examples_per_second": teacher_speed,
    }
    unlabelled = bbc_unlabelled_file(work_dir) if args.unlabelled_bbc else None
    settings = {
        "epochs": args.epochs, "temperature": args.temperature,
        "teacher_weight": args.teacher_weight, "unlabelled_bbc": args.unlabelled_bbc,
        **({"augment": args.augment} if args.augment else {}),
    }  # fmt: skip
    for seed in args.seeds:
        for distilled in (True, False):
            run = run_student(args, seed, teacher if distilled else None, unlabelled)
            run["settings"] = settings if distilled else {"epochs": args.epochs}
            # Speeds compare within one invocation: the teacher is timed in each.
            run["teacher_serving_examples_per_second"] = teacher_speed
            report["runs"] = [
                r for r in report["runs"]
                if (r["system"], r["seed"], r["settings"]) != (run["system"], seed, run["settings"])
            ] + [run]  # fmt: skip
            args.out.write_text(json.dumps(report, indent=2) + "\n")
            print(table(report), flush=True)


def table(report: dict) -> str:
    teacher = report["teacher"]
    rows = [(
        "MiniLM-L6 teacher (fine-tuned, seed 0)", "", f"{teacher['validation_accuracy']:.4f}",
        f"{teacher['test_accuracy']:.4f}", f"{teacher['serving_examples_per_second']:.0f}", "1.0x",
    )]  # fmt: skip
    groups = {}
    for run in report["runs"]:
        key = (run["system"], json.dumps(run["settings"], sort_keys=True))
        groups.setdefault(key, []).append(run)
    for (system, settings), runs in groups.items():
        test = [run["test_accuracy"] for run in runs]
        spread = f" ± {statistics.stdev(test):.4f}" if len(test) > 1 else ""
        speed = statistics.mean(run["serving_examples_per_second"] for run in runs)
        versus = statistics.mean(
            run["serving_examples_per_second"]
            / run.get("teacher_serving_examples_per_second", teacher["serving_examples_per_second"])
            for run in runs
        )
        rows.append((
            f"{system} {settings}", ", ".join(str(run["seed"]) for run in runs),
            f"{statistics.mean(run['validation_accuracy'] for run in runs):.4f}",
            f"{statistics.mean(test):.4f}{spread}", f"{speed:.0f}",
            f"{versus:.1f}x",
        ))  # fmt: skip
    rows.append(("TF-IDF + logistic regression", "", "", f"{TFIDF_BASELINE:.3f}", "", ""))
    return markdown_table(
        ("system", "seeds", "validation acc.", "test acc.", "serving ex/s", "vs teacher"), rows
    )


if __name__ == "__main__":
    main()
