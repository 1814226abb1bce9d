"""Cached against uncached decoding of a trained transformer translator, one run.

Both decode the same test sentences greedily for exactly ``--tokens`` output tokens
(the end token is ignored, so every sentence runs the full length): the cached decoder
feeds one token per step and reads earlier keys and values from its cache; the uncached
one runs the decoder over every token so far at every step. Their outputs must be
identical; the ratio of their times is the cache's speed-up.

    python bench/decoding_speed.py EXPORT_DIR --tokens 40

Its smoke run (CI's, `tests/bench/`) is the same on tiny data and a translator trained on
it (`smoke.TINY_TRANSFORMER`, one epoch), with small flags: ``--tokens 8 --sentences 8
--batch-sizes 1 4 --repeats 1 --data-dir TINY --results PATH``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from tables import markdown_table

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "decoding_speed.json"
DEFAULT_DATA_DIR = HERE.parent.parent / "shared" / "data" / "spa-eng"


def full_length_decoder(translator, tokens: int):
    """A tf.function decoding exactly ``tokens`` tokens (no end token can stop it)."""
    from kerasformer.backend import tf
    from kerasformer.models.generation import decode
    from kerasformer.models.translator import START_ID

    @tf.function(reduce_retracing=True)
    def run(texts):
        source = translator.source_ids(texts).to_tensor()
        cache = translator.decoding.initial_cache(source, tokens)
        ids, _ = decode(
            translator._step, tf.fill([tf.shape(source)[0]], START_ID), cache,
            vocab_size=translator.target_tokenizer.size, max_length=tokens, end_id=-1,
        )  # fmt: skip
        return ids

    return run


def timed(function, batches, repeats: int) -> tuple[float, list]:
    for batch in batches[:1]:
        function(batch)  # trace
    best, outputs = float("inf"), []
    for _ in range(repeats):
        started = time.perf_counter()
        outputs = [function(batch).numpy() for batch in batches]
        best = min(best, time.perf_counter() - started)
    return best, outputs


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("export_dir")
    parser.add_argument("--tokens", type=int, default=40)
    parser.add_argument("--sentences", type=int, default=256)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 32, 256])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument(
        "--results", type=Path, default=RESULTS,
        help="the runs' file (default: bench/results/decoding_speed.json)",
    )  # fmt: skip
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)

    import numpy as np

    from kerasformer.backend import tf
    from kerasformer.datasets.spa_eng import load_spa_eng
    from kerasformer.loading.translator import load_translator

    test = load_spa_eng(args.data_dir).splits["test"]
    rows, runs = [], []
    for batch_size in args.batch_sizes:
        count = min(args.sentences, batch_size * max(1, args.sentences // batch_size))
        if batch_size == 1:
            count = min(count, 32)  # one sentence at a time is slow uncached
        sentences = list(test.sources[:count])
        batches = [tf.constant(sentences[i : i + batch_size]) for i in range(0, count, batch_size)]
        times, outputs = {}, {}
        for cached in (True, False):
            translator = load_translator(args.export_dir, cached=cached)
            times[cached], outputs[cached] = timed(
                full_length_decoder(translator, args.tokens), batches, args.repeats
            )
        same = all(np.array_equal(a, b) for a, b in zip(outputs[True], outputs[False], strict=True))
        run = {
            "batch_size": batch_size,
            "sentences": count,
            "tokens": args.tokens,
            "cached_seconds": times[True],
            "uncached_seconds": times[False],
            "speedup": times[False] / times[True],
            "identical_outputs": same,
        }
        runs.append(run)
        rows.append((
            batch_size, count, args.tokens,
            f"{count / times[True]:.1f}", f"{count / times[False]:.1f}",
            f"{run['speedup']:.2f}x", "yes" if same else "NO",
        ))  # fmt: skip
        print(rows[-1], flush=True)
    command = (
        f"python bench/decoding_speed.py {args.export_dir} --tokens {args.tokens} "
        f"--batch-sizes {' '.join(map(str, args.batch_sizes))} --sentences {args.sentences} "
        f"--repeats {args.repeats}"
    )
    args.results.write_text(json.dumps({"command": command, "runs": runs}, indent=2) + "\n")
    headers = (
        "batch", "sentences", "tokens each", "cached sent/s", "uncached sent/s", "speed-up",
        "same output",
    )  # fmt: skip
    print(markdown_table(headers, rows))


if __name__ == "__main__":
    main()
