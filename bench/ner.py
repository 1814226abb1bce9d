"""NER benchmark: CoNLL-2003 entity F1 on the official development split, by model and seed.

Each run trains through `kerasformer.training.train` on ``train.txt`` (10% of its
documents held out for validation and early stopping) and reports, on ``valid.txt`` (the
official development split, the data's ``test`` split here): entity F1, precision and
recall (strict IOB2, seqeval), the F1 of argmax decoding beside the constrained one,
training words/s, the export's tagging sentences/s (raw strings through the SavedModel's
``serving_default``), and wall time. Beside the trainer's F1, the export's own on raw
text: each sentence joined by spaces, sent to ``serving_default``, its entity offsets
scored (`ner_raw_text.py`), and `predict_tags` on the file's own words.

    python bench/ner.py --models rnn transformer --seeds 0 1 2 --epochs 10
    python bench/ner.py --models bert --epochs 3 --batch-size 32 \
        --preprocess hub/minilm/preprocess --encoder hub/minilm/encoder
    python bench/ner.py --models memorise      # each word's most frequent training tag
    python bench/ner.py --models rnn-lowercased --seeds 0   # what case is worth
    python bench/ner.py --table                # the saved results as Markdown

Runs accumulate in ``bench/results/ner.json`` (or ``--results``), each with its settings;
one already there (same model, seed and settings) is not run again.

``--smoke`` runs each model once (seed 0) for one epoch, the from-scratch taggers at
`SMOKE_SIZES`, into ``--results PATH``; CI's smoke run (`tests/bench/`) is ``--smoke
--models memorise rnn transformer`` on tiny data (a tiny BERT would add some 45 s).

Run it on a quiet machine: speed figures compare only within one run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time
from pathlib import Path

from ner_raw_text import raw_text_scores
from smoke import (
    TINY_TRANSFORMER,
    add_smoke_argument,
    parse_with_smoke_defaults,
    require_smoke_output,
)
from tables import markdown_table

HERE = Path(__file__).resolve().parent
DEFAULT_DATA_DIR = HERE.parent.parent / "shared" / "data" / "conll2003"
RESULTS = HERE / "results" / "ner.json"
# A model name ending in this trains on lower-cased words (`lowercased`).
LOWERCASED = "-lowercased"
# A smoke run's from-scratch taggers: the smallest that still run every layer.
SMOKE_SIZES = {"rnn": dict(embed_dim=8, units=8), "transformer": TINY_TRANSFORMER}


def served_sentences_per_second(export_dir: Path, texts: list[str], batch: int = 64) -> float:
    import tensorflow as tf

    serve = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    serve(inputs=tf.constant(texts[:batch]))  # trace and warm up
    started = time.perf_counter()
    for begin in range(0, len(texts), batch):
        serve(inputs=tf.constant(texts[begin : begin + batch]))
    return len(texts) / (time.perf_counter() - started)


def memorised_tags(data) -> dict:
    """The memorisation baseline: each training word's most frequent tag; others O."""
    from collections import Counter

    from kerasformer.training.tagging_metrics import entity_scores

    counts: dict[str, Counter] = {}
    for words, tags in zip(data.splits["train"].tokens, data.splits["train"].tags, strict=True):
        for word, tag in zip(words, tags, strict=True):
            counts.setdefault(word, Counter())[tag] += 1
    best = {word: tags.most_common(1)[0][0] for word, tags in counts.items()}
    test = data.splits["test"]
    predicted = [[best.get(word, "O") for word in words] for words in test.tokens]
    return entity_scores(test.tags, predicted)


def run_memorisation(args) -> dict:
    from kerasformer.datasets.tagged_sentences import load_conll2003

    started = time.perf_counter()
    metrics = memorised_tags(load_conll2003(str(args.data_dir)))
    return {
        "model": "memorise", "seed": 0, "epochs_run": 0, "best_epoch": None,
        "parameters": 0, "dev_f1": metrics["f1"], "dev_precision": metrics["precision"],
        "dev_recall": metrics["recall"], "dev_f1_argmax": metrics["f1"],
        "dev_per_type_f1": {kind: row["f1"] for kind, row in metrics["per_type"].items()},
        "validation_f1": None, "train_words_per_second": 0.0,
        "served_sentences_per_second": 0.0, "wall_seconds": time.perf_counter() - started,
    }  # fmt: skip


def lowercased(data):
    """The data with every word lower-cased, as an uncased BERT reads it: what case is
    worth to a from-scratch tagger (its character features see case otherwise)."""
    import dataclasses

    from kerasformer.datasets.tagged_sentences import TaggedSentences

    splits = {
        name: TaggedSentences.of(
            [[word.lower() for word in words] for words in part.tokens], part.tags,
            part.documents,
        )
        for name, part in data.splits.items()
    }  # fmt: skip
    return dataclasses.replace(data, splits=splits, notes=(*data.notes, "words lower-cased"))


def model_options(model: str, args) -> dict:
    if model != "bert":
        return tagger_sizes(model, args)
    return {"preprocess": str(args.preprocess), "encoder": str(args.encoder),
            "seq_length": args.seq_length}  # fmt: skip


def tagger_sizes(model: str, args) -> dict:
    """A from-scratch tagger's sizes: a smoke run's tiny ones; otherwise the package's."""
    return SMOKE_SIZES.get(model.removesuffix(LOWERCASED), {}) if args.smoke else {}


def run_model(model: str, seed: int, args) -> dict:
    from kerasformer.training import TrainingConfig, train

    if model == "memorise":
        return run_memorisation(args)
    data = None
    if model.endswith(LOWERCASED):
        from kerasformer.datasets.tagged_sentences import load_conll2003

        data = lowercased(load_conll2003(str(args.data_dir)))

    export_dir = Path(args.work_dir) / f"conll2003-{model}-{seed}"
    shutil.rmtree(export_dir.with_name(export_dir.name + ".training"), ignore_errors=True)
    config = TrainingConfig(
        task="ner", model=model.removesuffix(LOWERCASED), dataset="conll2003",
        data_dir=str(args.data_dir),
        epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
        seed=seed, export_dir=str(export_dir), overwrite=True,
        early_stopping=args.patience, monitor="val_entity_f1", recipe=args.recipe,
        fine_tune_learning_rate=args.fine_tune_learning_rate,
        model_options=model_options(model, args),
    )  # fmt: skip
    started = time.perf_counter()
    result = train(config, verbose=2, data=data)
    train_words = sum(len(words) for words in result.data.splits["train"].tokens)
    epochs_run = len(result.history["loss"])
    test = result.data.splits["test"]
    texts = [" ".join(words) for words in test.tokens]
    metrics = result.metrics["test"]
    test_file = Path(args.data_dir) / "test.txt"  # as load_conll2003 chooses its test split
    if not test_file.is_file():
        test_file = test_file.with_name("valid.txt")
    served = raw_text_scores(export_dir, test_file)
    return {
        "model": model,
        "seed": seed,
        "epochs_run": epochs_run,
        "best_epoch": result.history.get("best_epoch"),
        "parameters": int(result.model.model.count_params()),
        "dev_f1": metrics["f1"],
        "dev_precision": metrics["precision"],
        "dev_recall": metrics["recall"],
        "dev_f1_argmax": metrics["f1_argmax"],
        "dev_f1_raw_text": served["raw_text"]["f1"],
        "dev_f1_file_words": served["file_words"]["f1"],
        "dev_per_type_f1": {kind: row["f1"] for kind, row in metrics["per_type"].items()},
        "validation_f1": result.metrics["validation"]["f1"],
        "train_words_per_second": train_words * epochs_run / result.train_seconds,
        "served_sentences_per_second": served_sentences_per_second(export_dir, texts),
        "wall_seconds": time.perf_counter() - started,
    }


def table(results: dict) -> str:
    rows = []
    by_model: dict[tuple[str, str], list[dict]] = {}
    for run in results["runs"]:
        by_model.setdefault((run["model"], json.dumps(run["settings"])), []).append(run)
    for (model, _), runs in by_model.items():
        settings = runs[0]["settings"]
        f1 = [run["dev_f1"] for run in runs]
        spread = f" ± {statistics.stdev(f1):.3f}" if len(f1) > 1 else ""
        trained = bool(settings)
        rate = settings.get("fine_tune_learning_rate", settings.get("learning_rate"))
        rows.append((
            model if model != "bert" else f"bert ({settings['encoder']}, {settings['recipe']})",
            f"{settings['epochs']} (patience {settings['patience']})" if trained else "-",
            f"{settings['batch_size']}, {rate}" if trained else "-", len(runs),
            settings.get("words", "CoNLL's") if trained else "-",
            f"{statistics.mean(f1):.3f}{spread}",
            " / ".join(f"{x:.3f}" for x in f1),
            mean_of(runs, "dev_f1_raw_text"),
            mean_of(runs, "dev_f1_file_words"),
            f"{statistics.mean(run['dev_f1_argmax'] for run in runs):.3f}" if trained else "-",
            f"{statistics.mean(run['train_words_per_second'] for run in runs):,.0f}"
            if trained else "-",
            f"{statistics.mean(run['served_sentences_per_second'] for run in runs):,.0f}"
            if trained else "-",
            f"{statistics.mean(run['wall_seconds'] for run in runs) / 60:.0f} min",
        ))  # fmt: skip
    headers = (
        "model", "epochs at most", "batch, learning rate", "seeds", "words trained on",
        "dev entity F1 (mean)", "per seed", "raw-text F1 (export)", "F1 on CoNLL's words",
        "argmax F1", "train words/s", "served sentences/s", "wall time per run",
    )  # fmt: skip
    return markdown_table(headers, rows)


def mean_of(runs: list[dict], key: str) -> str:
    """The runs' mean of ``key``; "-" where they did not measure it (earlier runs)."""
    values = [run[key] for run in runs if key in run]
    return f"{statistics.mean(values):.3f}" if len(values) == len(runs) else "-"


def run_settings(model: str, args) -> dict:
    """What a run's figures depend on besides its model and seed."""
    if model == "memorise":
        return {}
    settings = {
        "epochs": args.epochs, "batch_size": args.batch_size,
        "learning_rate": args.learning_rate, "patience": args.patience,
        # Taggers train on the words their export reads in raw text (U.S. as U . S .);
        # runs without this key trained on CoNLL's own words.
        "words": "as served",
    }  # fmt: skip
    if sizes := tagger_sizes(model, args):  # a smoke run's; measured runs keep the defaults
        settings["sizes"] = sizes
    if model == "bert":
        settings.update(
            recipe=args.recipe or "unfrozen", seq_length=args.seq_length,
            fine_tune_learning_rate=args.fine_tune_learning_rate,
            encoder=encoder_name(args.encoder),
        )  # fmt: skip
    return settings


def encoder_name(encoder: Path | None) -> str | None:
    """``minilm`` of ``hub/minilm/encoder`` (as `convert-bert` lays it out)."""
    if encoder is None:
        return None
    return encoder.parent.name if encoder.name == "encoder" else encoder.name


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["rnn", "transformer"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=2e-3)
    parser.add_argument("--patience", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--preprocess", type=Path, help="bert: the converted preprocess model")
    parser.add_argument("--encoder", type=Path, help="bert: the converted encoder")
    parser.add_argument("--recipe", default=None, help="bert: unfrozen (default), frozen ...")
    parser.add_argument("--fine-tune-learning-rate", type=float, default=5e-5)
    parser.add_argument("--seq-length", type=int, default=128)
    parser.add_argument("--work-dir", default="/tmp/kerasformer-bench")
    parser.add_argument("--table", action="store_true", help="print the saved results")
    parser.add_argument(
        "--results", type=Path, help="the runs' file (default: bench/results/ner.json)"
    )
    add_smoke_argument(parser)
    args = parse_with_smoke_defaults(parser, argv, epochs=1, seeds=[0])
    require_smoke_output(args.smoke, args.results, "--results")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    path = args.results or RESULTS
    if args.table:
        print(table(json.loads(path.read_text())))
        return
    results = json.loads(path.read_text()) if path.is_file() else {"runs": []}
    done = {(run["model"], run["seed"], json.dumps(run["settings"])) for run in results["runs"]}
    for model in args.models:
        settings = run_settings(model, args)
        for seed in [0] if model == "memorise" else args.seeds:
            if (model, seed, json.dumps(settings)) in done:
                continue  # a run cut short goes on where it was
            results["runs"].append({**run_model(model, seed, args), "settings": settings})
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
