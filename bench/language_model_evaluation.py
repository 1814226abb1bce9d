"""How long the language model's strided perplexity takes: every word's log-probability
against the adaptive softmax's cluster-only losses.

Builds the 6-block, tied, adaptive model of the README's run
(``build_transformer_language_model(33280, adaptive_cutoffs=[2000, 10000])``, untrained)
and reads WikiText-2's validation split with `strided_perplexity`, once from the model's
logits and once from `next_token_loss_model`, as evaluation now does for an adaptive
model. Both must give the same perplexity; the script says so and fails otherwise.

    python bench/language_model_evaluation.py --num-layers 6

Results go to ``bench/results/language_model_evaluation.json`` (or ``--results``). Its smoke
run (CI's, `tests/bench/`), ``--smoke --split-file TINY --results PATH``, reads the tiny
split with the smallest model (`smoke.TINY_LANGUAGE_MODEL`: 1 block, 8 wide, window 16)
over a 40-id vocabulary in clusters cut at 4 and 9, and checks the same agreement.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from smoke import (
    TINY_CUTOFFS,
    TINY_LANGUAGE_MODEL,
    TINY_VOCAB_SIZE,
    add_smoke_argument,
    parse_with_smoke_defaults,
    require_smoke_output,
)
from tables import markdown_table

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "language_model_evaluation.json"
DEFAULT_SPLIT = HERE.parent.parent / "shared" / "data" / "wikitext-2" / "wiki.valid.tokens"
# The README's model: WikiText-2's vocabulary in clusters cut at 2,000 and 10,000 words,
# the package's default sizes otherwise (window 128); --smoke's: the tiny ones.
MODEL = dict(vocab_size=33280, adaptive_cutoffs=[2000, 10000], maxlen=128)
SMOKE_MODEL = dict(TINY_LANGUAGE_MODEL, vocab_size=TINY_VOCAB_SIZE, adaptive_cutoffs=TINY_CUTOFFS)


def frequency_ranked_ids(path: Path, vocab_size: int) -> np.ndarray:
    """The split's tokens as ids ranked by their frequency in the split (2 and up), so each
    cluster scores the share of targets it would score in a trained vocabulary."""
    from collections import Counter

    from kerasformer.datasets.wikitext import read_tokens

    tokens = read_tokens(path)
    ranked = [token for token, _ in Counter(tokens).most_common(vocab_size - 2)]
    index = {token: rank + 2 for rank, token in enumerate(ranked)}
    return np.fromiter((index.get(token, 1) for token in tokens), np.int32, len(tokens))


def timed(function) -> tuple[float, float]:
    started = time.perf_counter()
    value = function()
    return value, time.perf_counter() - started


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-layers", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--split-file", type=Path, default=DEFAULT_SPLIT)
    parser.add_argument("--results", type=Path, default=RESULTS, help="the runs' JSON file")
    add_smoke_argument(parser)
    args = parse_with_smoke_defaults(parser, argv, num_layers=TINY_LANGUAGE_MODEL["num_layers"])
    require_smoke_output(args.smoke, args.results, "--results")
    return args


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    row = measure(args, "python bench/language_model_evaluation.py " + " ".join(argv))
    saved = json.loads(args.results.read_text()) if args.results.is_file() else {"runs": []}
    saved["runs"].append(row)
    args.results.write_text(json.dumps(saved, indent=2) + "\n")
    print(markdown_table(
        ("blocks", "tokens", "every word's log-probability, s", "cluster-only, s", "ratio"),
        [(args.num_layers, f"{row['tokens']:,}", f"{row['full_seconds']:.1f}",
          f"{row['cluster_seconds']:.1f}", f"{row['ratio']:.2f}")],
    ))  # fmt: skip


def measure(args: argparse.Namespace, command: str) -> dict:
    """Both ways' strided perplexity and seconds; exits if the perplexities differ."""
    from kerasformer.backend import keras
    from kerasformer.models.language_model import (
        build_transformer_language_model,
        next_token_loss_model,
    )
    from kerasformer.training.language_model_metrics import strided_perplexity

    keras.utils.set_random_seed(0)
    options = {**(SMOKE_MODEL if args.smoke else MODEL), "num_layers": args.num_layers}
    vocab_size, window = options.pop("vocab_size"), options["maxlen"]
    ids = frequency_ranked_ids(args.split_file, vocab_size)
    model = build_transformer_language_model(vocab_size, tie_embeddings=True, **options)
    loss_model = next_token_loss_model(model)
    full, full_seconds = timed(lambda: strided_perplexity(model, ids, window, args.batch_size))
    cluster, cluster_seconds = timed(
        lambda: strided_perplexity(model, ids, window, args.batch_size, loss_model)
    )
    if not math.isclose(full, cluster, rel_tol=1e-4):
        sys.exit(f"the two perplexities differ: {full} from logits, {cluster} from clusters")
    return {
        "num_layers": args.num_layers, "batch_size": args.batch_size,
        "tokens": len(ids), "split": args.split_file.name,
        "perplexity_untrained": cluster, "full_seconds": full_seconds,
        "cluster_seconds": cluster_seconds, "ratio": cluster_seconds / full_seconds,
        "command": command,
    }  # fmt: skip


if __name__ == "__main__":
    main()
