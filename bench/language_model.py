"""Language-model benchmark: kerasformer's decoder-only transformer on WikiText-2.

Trains with `kerasformer.training.train` (task ``language-model``) and reports
validation and test perplexity, training tokens/s and sampling speed, next to a
published small-model figure: the PyTorch word_language_model example's README
(github.com/pytorch/examples, word_language_model), "python main.py --cuda --epochs 6
# Train a LSTM on Wikitext-2 with CUDA, reaching perplexity of 117.61" (2-layer LSTM,
200 units, tied embeddings off; 110.44 with --tied; 87.17 tied after 40 epochs).

    python bench/language_model.py --epochs 3 --batch-size 32
    python bench/language_model.py --name tied --tie-embeddings --dropout 0.2 \\
        --weight-decay 0.1 --clip-norm 1 --lr-schedule cosine --early-stopping 2
    python bench/language_model.py --name tuned --epochs 6 --batch-size 16 --num-layers 6 \\
        --tie-embeddings --weight-decay 0.1 --clip-norm 1 --lr-schedule cosine \\
        --learning-rate 2e-3 --early-stopping 6
    python bench/language_model.py --name adaptive-6x4 --epochs 4 --batch-size 16 \\
        --num-layers 6 --tie-embeddings --adaptive-cutoffs 2000 10000 --weight-decay 0.1 \\
        --clip-norm 1 --lr-schedule cosine --learning-rate 2e-3
    python bench/language_model.py --name adaptive-8x6-b8-wd03 --epochs 6 --batch-size 8 \\
        --num-layers 8 --tie-embeddings --adaptive-cutoffs 2000 10000 --weight-decay 0.3 \\
        --clip-norm 1 --lr-schedule cosine --learning-rate 2e-3 --early-stopping 2
    python bench/language_model.py --table
    python bench/language_model.py --plot bench/results/language_model_history.png

Each run is kept under its --name in bench/results/language_model.json (or ``--results``).
Its smoke run (CI's, `tests/bench/`), ``--smoke --data-dir TINY --results PATH``, trains
the smallest model (`smoke.TINY_LANGUAGE_MODEL`: 1 block, 8 wide, window 16) for one
epoch of batch 8, with the levers given, and samples 8 tokens.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from pathlib import Path

from curves import plot_validation_curves
from levers import RUN_LEVERS, setting_name
from smoke import (
    TINY_LANGUAGE_MODEL,
    add_smoke_argument,
    parse_with_smoke_defaults,
    require_smoke_output,
)
from tables import markdown_table

HERE = Path(__file__).resolve().parent
DEFAULT_DATA_DIR = HERE.parent.parent / "shared" / "data" / "wikitext-2"
RESULTS = HERE / "results" / "language_model.json"
PUBLISHED = [
    ("PyTorch example LSTM, 2×200, 6 epochs (README)", 117.61),
    ("PyTorch example LSTM, 2×200 tied, 6 epochs (README)", 110.44),
    ("PyTorch example LSTM, 2×200 tied, 40 epochs (README)", 87.17),
]


def generation_tokens_per_second(generator, tokens: int) -> float:
    from kerasformer.models.generation import Sampling

    sampling = Sampling(temperature=1.0, top_k=40)
    prompts = ["The game", "In 1990 , the", "He was born in", "The album"]
    generator.generate(prompts[:1], max_tokens=tokens, sampling=sampling)  # trace
    started = time.perf_counter()
    texts = generator.generate(prompts, max_tokens=tokens, sampling=sampling)
    seconds = time.perf_counter() - started
    return sum(len(text.split()) for text in texts) / seconds, texts


# The model settings a run can change, as kerasformer train names them; None: the default.
LEVERS = (
    ("--tie-embeddings", dict(action="store_true")),
    ("--adaptive-cutoffs", dict(type=int, nargs="+")),
    ("--dropout", dict(type=float)),
    ("--maxlen", dict(type=int)),
    ("--num-layers", dict(type=int)),
    *RUN_LEVERS,
)
MODEL_LEVERS = ("tie_embeddings", "adaptive_cutoffs", "dropout", "maxlen", "num_layers")


VALIDATION_PANELS = {
    "validation perplexity (windows from a fresh start)": lambda history: [
        math.exp(loss) for loss in history["val_loss"]
    ],
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", default="baseline", help="the run's row in the results")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    for flag, options in LEVERS:
        parser.add_argument(flag, **options)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--work-dir", default="/tmp/kerasformer-bench")
    parser.add_argument("--results", type=Path, default=RESULTS, help="the runs' JSON file")
    parser.add_argument("--table", action="store_true")
    parser.add_argument(
        "--plot", type=Path, metavar="PNG", help="draw the saved runs' validation curves"
    )
    add_smoke_argument(parser)
    args = parse_with_smoke_defaults(parser, argv, epochs=1, batch_size=8)
    require_smoke_output(args.smoke, args.results, "--results")
    return args


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    runs = json.loads(args.results.read_text()) if args.results.is_file() else {}
    if args.table:
        print(table(runs))
        return
    if args.plot:
        plot_validation_curves(runs, VALIDATION_PANELS, args.plot)
        return
    runs[args.name] = measure(args, "python bench/language_model.py " + " ".join(argv))
    args.results.write_text(json.dumps(runs, indent=2) + "\n")
    print(table(runs))


def levers(args: argparse.Namespace) -> dict:
    """The settings this run changes, by TrainingConfig's names."""
    given = {name: getattr(args, name) for name in (setting_name(flag) for flag, _ in LEVERS)}
    return {name: value for name, value in given.items() if value not in (None, False)}


def measure(args: argparse.Namespace, command: str) -> dict:
    from kerasformer.training import TrainingConfig, train

    changed = levers(args)
    model_options = {name: changed.pop(name) for name in MODEL_LEVERS if name in changed}
    if args.smoke:  # the levers given still win over the tiny model's sizes
        model_options = {**TINY_LANGUAGE_MODEL, **model_options}
    export_dir = Path(args.work_dir) / f"wikitext2-{args.name}"
    shutil.rmtree(export_dir.with_name(export_dir.name + ".training"), ignore_errors=True)
    config = TrainingConfig(
        task="language-model", dataset="wikitext2", data_dir=str(args.data_dir),
        epochs=args.epochs, batch_size=args.batch_size, seed=args.seed,
        export_dir=str(export_dir), overwrite=True, model_options=model_options, **changed,
    )  # fmt: skip
    started = time.perf_counter()
    result = train(config, verbose=2)
    generator = result.model
    train_tokens = (result.data.sizes()["train"] - 1) // generator.maxlen * generator.maxlen
    epochs_run = len(result.history["loss"])
    speed, samples = generation_tokens_per_second(generator, min(40, generator.maxlen // 2))
    return {
        "command": command,
        "settings": {**model_options, **changed},
        "epochs": epochs_run,
        "batch_size": args.batch_size,
        "seed": args.seed,
        "parameters": int(generator.model.count_params()),
        "validation_perplexity": result.metrics["validation"]["perplexity"],
        "test_perplexity": result.metrics["test"]["perplexity"],
        "validation_strided_perplexity": result.metrics["validation"]["strided_perplexity"],
        "test_strided_perplexity": result.metrics["test"]["strided_perplexity"],
        "validation_perplexity_by_epoch": [math.exp(loss) for loss in result.history["val_loss"]],
        "history": result.history,
        "train_seconds": result.train_seconds,
        "train_tokens_per_second": train_tokens * epochs_run / result.train_seconds,
        "sampled_tokens_per_second": speed,
        "samples": samples,
        "wall_seconds": time.perf_counter() - started,
        "history_png": str(export_dir / "history.png"),
    }


def table(runs: dict) -> str:
    rows = []
    for name, run in runs.items():
        strided = run.get("test_strided_perplexity")
        rows.append((
            name, ", ".join(f"{key} {value}" for key, value in run.get("settings", {}).items()),
            run["epochs"], f"{run['parameters']:,}", f"{run['validation_perplexity']:.1f}",
            f"{run['test_perplexity']:.1f}", "" if strided is None else f"{strided:.1f}",
            f"{run['train_tokens_per_second']:,.0f}", f"{run['sampled_tokens_per_second']:.0f}",
            f"{run['wall_seconds'] / 60:.0f} min",
        ))  # fmt: skip
    rows += [(name, "", "", "", "", f"{value:.2f}", "", "", "", "") for name, value in PUBLISHED]
    headers = (
        "run", "settings", "epochs", "weights", "valid ppl", "test ppl", "test ppl (strided)",
        "train tokens/s", "sampled tokens/s", "wall time",
    )  # fmt: skip
    return markdown_table(headers, rows)


if __name__ == "__main__":
    main()
