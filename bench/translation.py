"""Translation benchmark: the transformer against the Bahdanau RNN on spa-eng, one run.

Both models train on the same seeded split for the same number of epochs (the same
target tokens), through `kerasformer.training.train`, then are measured on the test
split: BLEU and chrF (sacrebleu's defaults: cased, 13a; and lower-cased) of greedy and
beam-search translations, training target tokens/s, and decoding sentences/s (greedy
and beam) on the first ``--decode-sentences`` test sentences.

    python bench/translation.py --epochs 5                # both models, word tokenizer
    python bench/translation.py --name subwords --tokenizer sentencepiece --epochs 4
    python bench/translation.py --name avg2-2ep-seed1 --tokenizer sentencepiece \\
        --label-smoothing 0.1 --average-last 2 --epochs 2 --seed 1 --models transformer --no-beam
    python bench/translation.py --table                   # the saved results as Markdown
    python bench/translation.py --plot bench/results/translation_history.png

Each model of a run is kept as ``NAME: MODEL`` in bench/results/translation.json (NAME
from --name, ``word`` by default; ``--results`` names another file).

Its smoke run (CI's, `tests/bench/`) is the transformer alone for one epoch on tiny data,
sized by flags as `smoke.TINY_TRANSFORMER`, 8 sentences timed, into ``--results PATH``:
``--models transformer --epochs 1 --embed-dim 8 --num-heads 2 --ff-dim 8 --num-layers 1
--decode-sentences 8 --data-dir TINY --work-dir TMP --results PATH``.

Run it on a quiet machine: speed figures compare only within one run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from curves import plot_validation_curves
from levers import RUN_LEVERS, RUN_SETTINGS, setting_name
from tables import markdown_table

from kerasformer.registry import TOKENIZERS

HERE = Path(__file__).resolve().parent
DEFAULT_DATA_DIR = HERE.parent.parent / "shared" / "data" / "spa-eng"
RESULTS = HERE / "results" / "translation.json"


def target_tokens(translator, part) -> int:
    """Decoder positions trained per epoch: every target word plus [end]."""
    from kerasformer.datasets.pipeline import sequence_pair_examples

    examples = sequence_pair_examples(
        part.to_dataset(), translator.source_ids, translator.target_ids, translator.maxlen
    )
    return int(sum(int(target.shape[0]) - 1 for _, target in examples))


def sentences_per_second(translator, sentences, beam_width: int) -> float:
    translator.translate(sentences[:64], beam_width)  # trace and warm up
    started = time.perf_counter()
    translator.translate(sentences, beam_width)
    return len(sentences) / (time.perf_counter() - started)


# The model settings a run can change, as kerasformer train names them; None: the default.
LEVERS = (
    ("--tokenizer", dict(choices=TOKENIZERS)),
    ("--tie-embeddings", dict(action="store_true", default=None)),
    ("--label-smoothing", dict(type=float)),
    ("--vocab-size", dict(type=int)),
    ("--maxlen", dict(type=int)),
    ("--embed-dim", dict(type=int)),
    ("--ff-dim", dict(type=int)),
    ("--num-heads", dict(type=int)),
    ("--num-layers", dict(type=int)),
    ("--units", dict(type=int)),
    ("--dropout", dict(type=float)),
    *RUN_LEVERS,
)
TRANSFORMER_ONLY = ("num_heads", "ff_dim", "num_layers", "tie_embeddings")
RNN_ONLY = ("units",)


def levers(args: argparse.Namespace, model: str) -> tuple[dict, dict]:
    """The model options and the run settings this run changes, by TrainingConfig's names."""
    given = {setting_name(flag) for flag, _ in LEVERS}
    given = {name: getattr(args, name) for name in given if getattr(args, name) is not None}
    other_models = RNN_ONLY if model == "transformer" else TRANSFORMER_ONLY
    model_options = {
        name: value
        for name, value in given.items()
        if name not in RUN_SETTINGS and name not in other_models
    }
    return model_options, {name: given[name] for name in RUN_SETTINGS if name in given}


# Teacher-forced, per epoch: a label-smoothed run's loss is not comparable, its accuracy is.
VALIDATION_PANELS = {
    "validation token accuracy": lambda history: history["val_accuracy"],
    "validation loss": lambda history: history["val_loss"],
}


def run_model(model: str, args, command: str) -> dict:
    from kerasformer.training import TrainingConfig, train
    from kerasformer.training.tasks.translation import evaluate_translations

    export_dir = Path(args.work_dir) / f"spa_eng-{args.name}-{model}"
    if not args.resume:
        shutil.rmtree(export_dir.with_name(export_dir.name + ".training"), ignore_errors=True)
    model_options, run_settings = levers(args, model)
    config = TrainingConfig(
        task="translation", model=model, dataset="spa_eng", data_dir=str(args.data_dir),
        epochs=args.epochs, seed=args.seed, export_dir=str(export_dir), overwrite=True,
        model_options=model_options, resume=args.resume, **run_settings,
    )  # fmt: skip
    started = time.perf_counter()
    result = train(config, verbose=2)
    total_seconds = time.perf_counter() - started
    translator, test = result.model, result.data.splits["test"]
    beam = (
        {} if args.no_beam
        else evaluate_translations(translator, test, config.batch_size, args.beam_width)
    )  # fmt: skip
    sentences = list(test.sources[: args.decode_sentences])
    tokens = target_tokens(translator, result.data.splits["train"])
    epochs_run = len(result.history["loss"])  # fewer than asked when stopped early
    # A resumed run's epochs before the interruption are in its history, not its timing.
    train_seconds = sum(result.history["seconds"]) if args.resume else result.train_seconds
    return {
        "command": command,
        "model": model,
        "settings": {**model_options, **run_settings},
        "epochs": epochs_run,
        **{
            key: result.history[key]
            for key in ("best_epoch", "averaged_epochs")
            if key in result.history
        },
        "parameters": int(translator.model.count_params()),
        "train_seconds": train_seconds,
        "train_target_tokens_per_epoch": tokens,
        "train_tokens_per_second": tokens * epochs_run / train_seconds,
        "history": result.history,
        "validation": strip(result.metrics["validation"]),
        "test_greedy": strip(result.metrics["test"]),
        "test_beam": strip(beam),
        "greedy_sentences_per_second": sentences_per_second(translator, sentences, 1),
        "beam_sentences_per_second": (
            None if args.no_beam else sentences_per_second(translator, sentences, args.beam_width)
        ),
        # Resumed: this process's wall time plus the epochs before the interruption.
        "wall_seconds": time.perf_counter() - started + (train_seconds if args.resume else 0),
        "train_and_evaluate_seconds": total_seconds,
    }


def strip(metrics: dict) -> dict:
    return {key: value for key, value in metrics.items() if not key.endswith("signature")}


def score(metrics: dict, name: str) -> str:
    """A score to one decimal; runs from before cased scores have only lower-cased ones."""
    return f"{metrics[name]:.1f}" if name in metrics else "—"


def speed(sentences_per_second: float | None) -> str:
    return "—" if sentences_per_second is None else f"{sentences_per_second:.0f}"


def table(results: dict) -> str:
    rows = [
        (
            name, run["epochs"], f"{run['parameters']:,}",
            score(run["test_greedy"], "bleu"), score(run["test_beam"], "bleu"),
            score(run["test_beam"], "bleu_lowercase"), score(run["test_beam"], "chrf"),
            score(run["test_beam"], "chrf_lowercase"), score(run["validation"], "bleu"),
            f"{run['train_tokens_per_second']:,.0f}",
            f"{run['greedy_sentences_per_second']:.0f}",
            speed(run["beam_sentences_per_second"]),
            f"{run['wall_seconds'] / 60:.0f} min",
        )
        for name, run in results["runs"].items()
    ]  # fmt: skip
    beam = f"beam {results['beam_width']}"
    headers = (
        "run: model", "epochs", "weights", "test BLEU greedy", f"BLEU {beam}",
        f"BLEU {beam}, lower-cased", f"chrF {beam}", f"chrF {beam}, lower-cased",
        "val BLEU greedy", "train tokens/s", "greedy sent/s", "beam sent/s", "wall time",
    )  # fmt: skip
    return markdown_table(headers, rows)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", default="word", help="the run's name in the results")
    parser.add_argument("--models", nargs="+", default=["transformer", "rnn"])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--beam-width", type=int, default=4)
    parser.add_argument("--decode-sentences", type=int, default=1000)
    parser.add_argument(
        "--no-beam", action="store_true",
        help="skip beam search (about 22 minutes of the test split): greedy scores only",
    )  # fmt: skip
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--work-dir", default="/tmp/kerasformer-bench")
    parser.add_argument(
        "--resume", action="store_true",
        help="continue the run of the same --name that stopped (its backups are kept)",
    )  # fmt: skip
    parser.add_argument("--table", action="store_true", help="print the saved results")
    parser.add_argument(
        "--plot", type=Path, metavar="PNG", help="draw the saved runs' validation curves"
    )
    parser.add_argument(
        "--results", type=Path, default=RESULTS,
        help="the runs' file (default: bench/results/translation.json)",
    )  # fmt: skip
    for flag, options in LEVERS:
        parser.add_argument(flag, **options)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    path = args.results
    results = json.loads(path.read_text()) if path.is_file() else {"runs": {}}
    if args.table:
        print(table(results))
        return
    if args.plot:
        plot_validation_curves(results["runs"], VALIDATION_PANELS, args.plot)
        return
    if results.setdefault("beam_width", args.beam_width) != args.beam_width:
        raise SystemExit(f"{path} holds beam {results['beam_width']}; move it aside first.")
    command = "python bench/translation.py " + " ".join(argv)
    for model in args.models:
        results["runs"][f"{args.name}: {model}"] = run_model(model, args, command)
        path.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
