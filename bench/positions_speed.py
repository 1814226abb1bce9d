"""Training speed of each position scheme and of pre-LN, measured back to back.

The accuracy study (`tune_from_scratch.py --candidates positions`) records speed too,
but its runs share the CPU with whatever else runs during an hour. This measures all
candidates one after another in one process, on a quiet machine: two epochs each, and
examples/s of the second epoch (the first pays for tracing), validation pass included.

    python bench/positions_speed.py --datasets ag_news bbc_news

``--smoke`` (CI's run, on tiny data) times the first and the last candidate (learned
positions; relative, pre-LN) with the smallest model (`smoke.TINY_CLASSIFIER`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from smoke import TINY_CLASSIFIER, add_smoke_argument, require_smoke_output
from tables import markdown_table
from tune_from_scratch import DEFAULT_DATA_DIR, HERE, POSITION_CANDIDATES


def second_epoch_speed(dataset: str, data_dir: str | None, options: dict) -> float:
    from kerasformer.training import TrainingConfig, train

    config = TrainingConfig(
        dataset=dataset, data_dir=data_dir, epochs=2, seed=0, model_options=options
    )
    result = train(config, export=False, verbose=0)
    return len(result.data.splits["train"]) / result.history["seconds"][1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    parser.add_argument("--datasets", nargs="+", default=["ag_news", "bbc_news"])
    parser.add_argument("--results", help="the results' file (default: bench/results/...)")
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    require_smoke_output(args.smoke, args.results, "--results")
    results = Path(args.results or HERE / "results" / "positions_speed.json")
    candidates = dict(POSITION_CANDIDATES)
    if args.smoke:
        first, *_, last = candidates
        candidates = {
            name: (overrides, {**options, **TINY_CLASSIFIER})
            for name, (overrides, options) in candidates.items() if name in (first, last)
        }  # fmt: skip
    rows = []
    for name, (_, options) in candidates.items():
        row = [name]
        for dataset in args.datasets:
            data_dir = args.data_dir if dataset == "ag_news" else None
            row.append(round(second_epoch_speed(dataset, data_dir, options)))
            print(name, dataset, row[-1], flush=True)
        rows.append(row)
    results.write_text(json.dumps({"datasets": args.datasets, "rows": rows}) + "\n")
    print(markdown_table(("candidate", *(f"{d} train ex/s" for d in args.datasets)), rows))


if __name__ == "__main__":
    main()
