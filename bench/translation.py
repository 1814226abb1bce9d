"""Translation benchmark: the transformer against the Bahdanau RNN on spa-eng, one run.

Both models train on the same seeded split for the same number of epochs (the same
target tokens), through `kerasformer.training.train`, then are measured on the test
split: BLEU and chrF (sacrebleu, lower-cased) of greedy and beam-search translations,
training target tokens/s, and decoding sentences/s (greedy and beam) on the first
``--decode-sentences`` test sentences.

    python bench/translation.py --epochs 5                # both models, results JSON
    python bench/translation.py --table                   # the saved results as Markdown

Run it on a quiet machine: speed figures compare only within one run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from tables import markdown_table

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


def run_model(model: str, args) -> dict:
    from kerasformer.training import TrainingConfig, train
    from kerasformer.training.tasks.translation import evaluate_translations

    export_dir = Path(args.work_dir) / f"spa_eng-{model}"
    shutil.rmtree(export_dir.with_name(export_dir.name + ".training"), ignore_errors=True)
    config = TrainingConfig(
        task="translation", model=model, dataset="spa_eng", data_dir=str(args.data_dir),
        epochs=args.epochs, seed=args.seed, export_dir=str(export_dir), overwrite=True,
    )  # fmt: skip
    started = time.perf_counter()
    result = train(config, verbose=2)
    total_seconds = time.perf_counter() - started
    translator, test = result.model, result.data.splits["test"]
    beam = evaluate_translations(translator, test, config.batch_size, args.beam_width)
    sentences = list(test.sources[: args.decode_sentences])
    tokens = target_tokens(translator, result.data.splits["train"])
    return {
        "model": model,
        "epochs": args.epochs,
        "parameters": int(translator.model.count_params()),
        "train_seconds": result.train_seconds,
        "train_target_tokens_per_epoch": tokens,
        "train_tokens_per_second": tokens * args.epochs / result.train_seconds,
        "history": result.history,
        "validation": strip(result.metrics["validation"]),
        "test_greedy": strip(result.metrics["test"]),
        "test_beam": strip(beam),
        "greedy_sentences_per_second": sentences_per_second(translator, sentences, 1),
        "beam_sentences_per_second": sentences_per_second(translator, sentences, args.beam_width),
        "wall_seconds": time.perf_counter() - started,
        "train_and_evaluate_seconds": total_seconds,
    }


def strip(metrics: dict) -> dict:
    return {key: value for key, value in metrics.items() if not key.endswith("signature")}


def table(results: dict) -> str:
    rows = [
        (
            run["model"], run["epochs"], f"{run['parameters']:,}",
            f"{run['test_greedy']['bleu']:.1f}", f"{run['test_beam']['bleu']:.1f}",
            f"{run['test_greedy']['chrf']:.1f}", f"{run['test_beam']['chrf']:.1f}",
            f"{run['validation']['bleu']:.1f}",
            f"{run['train_tokens_per_second']:,.0f}",
            f"{run['greedy_sentences_per_second']:.0f}",
            f"{run['beam_sentences_per_second']:.0f}",
            f"{run['wall_seconds'] / 60:.0f} min",
        )
        for run in results["runs"]
    ]  # fmt: skip
    headers = (
        "model", "epochs", "weights", "test BLEU greedy", f"BLEU beam {results['beam_width']}",
        "chrF greedy", "chrF beam", "val BLEU greedy", "train tokens/s", "greedy sent/s",
        "beam sent/s", "wall time",
    )  # fmt: skip
    return markdown_table(headers, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["transformer", "rnn"])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--beam-width", type=int, default=4)
    parser.add_argument("--decode-sentences", type=int, default=1000)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--work-dir", default="/tmp/kerasformer-bench")
    parser.add_argument("--table", action="store_true", help="print the saved results")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(RESULTS.read_text())))
        return
    results = {"command": "python bench/translation.py " + " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in (("epochs", args.epochs),)
    ), "beam_width": args.beam_width, "runs": []}  # fmt: skip
    for model in args.models:
        results["runs"].append(run_model(model, args))
        RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
