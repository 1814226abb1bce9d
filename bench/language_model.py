"""Language-model benchmark: kerasformer's decoder-only transformer on WikiText-2.

Trains with `kerasformer.training.train` (task ``language-model``) and reports
validation and test perplexity, training tokens/s and sampling speed, next to a
published small-model figure: the PyTorch word_language_model example's README
(github.com/pytorch/examples, word_language_model), "python main.py --cuda --epochs 6
# Train a LSTM on Wikitext-2 with CUDA, reaching perplexity of 117.61" (2-layer LSTM,
200 units, tied embeddings off; 110.44 with --tied; 87.17 tied after 40 epochs).

    python bench/language_model.py --epochs 3 --batch-size 32
    python bench/language_model.py --table
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--work-dir", default="/tmp/kerasformer-bench")
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(RESULTS.read_text())))
        return

    from kerasformer.training import TrainingConfig, train

    export_dir = Path(args.work_dir) / "wikitext2-transformer"
    shutil.rmtree(export_dir.with_name(export_dir.name + ".training"), ignore_errors=True)
    config = TrainingConfig(
        task="language-model", dataset="wikitext2", data_dir=str(args.data_dir),
        epochs=args.epochs, batch_size=args.batch_size, seed=args.seed,
        export_dir=str(export_dir), overwrite=True,
    )  # fmt: skip
    started = time.perf_counter()
    result = train(config, verbose=2)
    generator = result.model
    train_tokens = (result.data.sizes()["train"] - 1) // generator.maxlen * generator.maxlen
    speed, samples = generation_tokens_per_second(generator, 40)
    run = {
        "command": f"python bench/language_model.py --epochs {args.epochs} "
        f"--batch-size {args.batch_size}",
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "parameters": int(generator.model.count_params()),
        "validation_perplexity": result.metrics["validation"]["perplexity"],
        "test_perplexity": result.metrics["test"]["perplexity"],
        "history": result.history,
        "train_seconds": result.train_seconds,
        "train_tokens_per_second": train_tokens * args.epochs / result.train_seconds,
        "sampled_tokens_per_second": speed,
        "samples": samples,
        "wall_seconds": time.perf_counter() - started,
    }
    RESULTS.write_text(json.dumps(run, indent=2) + "\n")
    print(table(run))


def table(run: dict) -> str:
    rows = [(
        f"kerasformer transformer, 2×128, window 128, {run['epochs']} epochs (this CPU)",
        f"{run['parameters']:,}", f"{run['validation_perplexity']:.1f}",
        f"{run['test_perplexity']:.1f}", f"{run['train_tokens_per_second']:,.0f}",
        f"{run['sampled_tokens_per_second']:.0f}", f"{run['wall_seconds'] / 60:.0f} min",
    )]  # fmt: skip
    rows += [(name, "", "", f"{value:.2f}", "", "", "") for name, value in PUBLISHED]
    headers = (
        "model", "weights", "valid ppl", "test ppl", "train tokens/s", "sampled tokens/s",
        "wall time",
    )  # fmt: skip
    return markdown_table(headers, rows)


if __name__ == "__main__":
    main()
