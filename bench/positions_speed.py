"""Training speed of each position scheme and of pre-LN, measured back to back.

The accuracy study (`tune_from_scratch.py --candidates positions`) records speed too,
but its runs share the CPU with whatever else runs during an hour. This measures all
candidates one after another in one process, on a quiet machine: two epochs each, and
examples/s of the second epoch (the first pays for tracing), validation pass included.

    python bench/positions_speed.py --datasets ag_news bbc_news
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tables import markdown_table
from tune_from_scratch import DEFAULT_DATA_DIR, HERE, POSITION_CANDIDATES


def second_epoch_speed(dataset: str, data_dir: str | None, options: dict) -> float:
    from kerasformer.training import TrainingConfig, train

    config = TrainingConfig(
        dataset=dataset, data_dir=data_dir, epochs=2, seed=0, model_options=options
    )
    result = train(config, export=False, verbose=0)
    return len(result.data.splits["train"]) / result.history["seconds"][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    parser.add_argument("--datasets", nargs="+", default=["ag_news", "bbc_news"])
    parser.add_argument("--results", default=str(HERE / "results" / "positions_speed.json"))
    args = parser.parse_args()
    rows = []
    for name, (_, options) in POSITION_CANDIDATES.items():
        row = [name]
        for dataset in args.datasets:
            data_dir = args.data_dir if dataset == "ag_news" else None
            row.append(round(second_epoch_speed(dataset, data_dir, options)))
            print(name, dataset, row[-1], flush=True)
        rows.append(row)
    Path(args.results).write_text(json.dumps({"datasets": args.datasets, "rows": rows}) + "\n")
    print(markdown_table(("candidate", *(f"{d} train ex/s" for d in args.datasets)), rows))


if __name__ == "__main__":
    main()
