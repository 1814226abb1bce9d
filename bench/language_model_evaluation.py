"""How long the language model's strided perplexity takes: every word's log-probability
against the adaptive softmax's cluster-only losses.

Builds the 6-block, tied, adaptive model of the README's run
(``build_transformer_language_model(33280, adaptive_cutoffs=[2000, 10000])``, untrained)
and reads WikiText-2's validation split with `strided_perplexity`, once from the model's
logits and once from `next_token_loss_model`, as evaluation now does for an adaptive
model. Both must give the same perplexity; the script says so and fails otherwise.

    python bench/language_model_evaluation.py --num-layers 6

Results go to ``bench/results/language_model_evaluation.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from tables import markdown_table

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "language_model_evaluation.json"
DEFAULT_SPLIT = HERE.parent.parent / "shared" / "data" / "wikitext-2" / "wiki.valid.tokens"
WINDOW = 128
VOCAB_SIZE = 33280
CUTOFFS = [2000, 10000]


def frequency_ranked_ids(path: Path) -> np.ndarray:
    """The split's tokens as ids ranked by their frequency in the split (2 and up), so each
    cluster scores the share of targets it would score in a trained vocabulary."""
    from collections import Counter

    from kerasformer.datasets.wikitext import read_tokens

    tokens = read_tokens(path)
    ranked = [token for token, _ in Counter(tokens).most_common(VOCAB_SIZE - 2)]
    index = {token: rank + 2 for rank, token in enumerate(ranked)}
    return np.fromiter((index.get(token, 1) for token in tokens), np.int32, len(tokens))


def timed(function) -> tuple[float, float]:
    started = time.perf_counter()
    value = function()
    return value, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-layers", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--split-file", type=Path, default=DEFAULT_SPLIT)
    args = parser.parse_args()

    from kerasformer.backend import keras
    from kerasformer.models.language_model import (
        build_transformer_language_model,
        next_token_loss_model,
    )
    from kerasformer.training.language_model_metrics import strided_perplexity

    keras.utils.set_random_seed(0)
    ids = frequency_ranked_ids(args.split_file)
    model = build_transformer_language_model(
        VOCAB_SIZE, maxlen=WINDOW, num_layers=args.num_layers, tie_embeddings=True,
        adaptive_cutoffs=CUTOFFS,
    )  # fmt: skip
    loss_model = next_token_loss_model(model)
    full, full_seconds = timed(lambda: strided_perplexity(model, ids, WINDOW, args.batch_size))
    cluster, cluster_seconds = timed(
        lambda: strided_perplexity(model, ids, WINDOW, args.batch_size, loss_model)
    )
    if not math.isclose(full, cluster, rel_tol=1e-4):
        sys.exit(f"the two perplexities differ: {full} from logits, {cluster} from clusters")
    row = {
        "num_layers": args.num_layers, "batch_size": args.batch_size,
        "tokens": len(ids), "split": args.split_file.name,
        "perplexity_untrained": cluster, "full_seconds": full_seconds,
        "cluster_seconds": cluster_seconds, "ratio": cluster_seconds / full_seconds,
        "command": "python bench/language_model_evaluation.py " + " ".join(sys.argv[1:]),
    }  # fmt: skip
    saved = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {"runs": []}
    saved["runs"].append(row)
    RESULTS.write_text(json.dumps(saved, indent=2) + "\n")
    print(markdown_table(
        ("blocks", "tokens", "every word's log-probability, s", "cluster-only, s", "ratio"),
        [(args.num_layers, f"{len(ids):,}", f"{full_seconds:.1f}", f"{cluster_seconds:.1f}",
          f"{row['ratio']:.2f}")],
    ))  # fmt: skip


if __name__ == "__main__":
    main()
