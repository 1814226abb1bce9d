"""How long each ``kerasformer`` command takes to start: help, a refusal, and each serving
command's first printed result on the smallest export of its kind, and what it imports.

    python bench/command_start.py --repeats 5 --workdir /tmp/kf-start
    python bench/command_start.py --repeats 5 --workdir /tmp/kf-start \\
        --before /path/to/old/venv/bin/python    # before/after, alternating, in one run

The exports are made once in ``--workdir`` by the command line itself, on small data the
script writes, and read by every interpreter measured: a from-scratch classifier (and
its LiteRT model), a BiLSTM tagger (and its LiteRT model), a transformer translator, a
language model and a MiniLM question answerer (``convert-bert`` of the offline MiniLM,
or ``--bert-dir``, a directory ``convert-bert --out`` wrote). Each command runs as a user
runs it, ``PYTHON -m kerasformer_command ARGS`` in a fresh interpreter, from the temporary
directory (so each interpreter imports the kerasformer installed for it, not one in the
working directory); the time is wall
time from its start to its first line on standard output (to its exit for help and
refusals). A second pass of each records which of `HEAVY` it imported. ``--smoke`` times
nothing, leaves the question answerer out and only records the imports, which
``tests/test_bench_command_start.py`` checks in CI. Results go to
``bench/results/command_start.json`` (``--output``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from tempfile import gettempdir

RESULTS = Path(__file__).resolve().parent / "results" / "command_start.json"
HEAVY = (
    "tensorflow", "tf_keras", "keras", "official", "tensorflow_hub", "tensorflow_text",
    "sentencepiece", "sklearn", "matplotlib", "ai_edge_litert", "jax",
)  # fmt: skip
# Runs the console script's main and, at exit, writes which of HEAVY were imported.
RECORD_IMPORTS = """
import atexit, json, os, sys
atexit.register(lambda: open(os.environ["KF_IMPORTS"], "w").write(json.dumps(
    [name for name in json.loads(os.environ["KF_HEAVY"]) if name in sys.modules])))
import kerasformer_command
sys.exit(kerasformer_command.main(sys.argv[1:]))
"""
TOPICS = {
    "sport": "match team goal season coach league striker final",
    "business": "shares profit market bank stocks investors earnings merger",
    "tech": "software computer internet chip research satellite browser phone",
}
PEOPLE, PLACES = ("Anna Berg", "Omar Haddad", "Li Wei"), ("Paris", "Lagos", "Lima")


def write_data(workdir: Path) -> dict[str, Path]:
    """Small training files for each kind of export, written once."""
    words = "the a of in on said today new after over".split()
    rows = ["text,topic"]
    for i in range(120):
        topic = list(TOPICS)[i % 3]
        picked = [TOPICS[topic].split()[(i * k) % 8] for k in (1, 3, 5)] + words[i % 5 :][:3]
        rows.append(f"{' '.join(picked)} {i},{topic}")
    conll = []
    for i in range(120):
        person, place = PEOPLE[i % 3].split(), PLACES[i % 3]
        tagged = [(person[0], "B-PER"), (person[1], "I-PER"), ("visited", "O"),
                  (place, "B-LOC"), ("today", "O"), (".", "O")]  # fmt: skip
        conll += [f"{word} {tag}" for word, tag in tagged] + [""]
    pairs = ["English\tSpanish"] + [
        f"I see {n} cats.\tVeo {n} gatos." for n in range(60)
    ] + [f"We like {n} dogs.\tNos gustan {n} perros." for n in range(60)]  # fmt: skip
    story = [f"The {w} of the day was new and the market said so {i} ." for i, w in
             enumerate(words * 12)]  # fmt: skip
    paragraphs = []
    for i in range(12):
        person, place = PEOPLE[i % 3], PLACES[i % 3]
        context = f"{person} was born in {place} and works there as a writer since {2000 + i}."
        questions = [
            {"id": f"q{i}-{k}", "question": question,
             "answers": [{"text": answer, "answer_start": context.index(answer)}]}
            for k, (question, answer) in enumerate(
                [("Where was the writer born?", place), ("Who is the writer?", person)])
        ]  # fmt: skip
        paragraphs.append({"title": f"article {i}", "paragraphs": [
            {"context": context, "qas": questions}]})  # fmt: skip
    files = {
        "news.csv": "\n".join(rows), "ner.txt": "\n".join(conll),
        "pairs.tsv": "\n".join(pairs), "story.txt": "\n".join(story),
        "faq.json": json.dumps({"version": "1.1", "data": paragraphs}),
    }  # fmt: skip
    paths = {}
    for name, text in files.items():
        paths[name] = workdir / name
        if not paths[name].exists():
            paths[name].write_text(text + "\n", encoding="utf-8")
    return paths


def make_exports(workdir: Path, python: str, bert_dir: Path | None, with_qa: bool) -> dict:
    """The smallest export of each kind, made once by the command line."""
    data = write_data(workdir)
    small = ["--epochs", "1", "--batch-size", "16", "--embed-dim", "16"]
    transformer = [*small, "--num-heads", "2", "--ff-dim", "16"]
    exports = {
        "classifier": ["train", "--train-file", data["news.csv"], "--text-column", "text",
                       "--label-column", "topic", "--maxlen", "32", *transformer],
        "tagger": ["train", "--task", "ner", "--model", "rnn", "--train-file", data["ner.txt"],
                   "--units", "16", *small],
        "translator": ["train", "--task", "translation", "--train-file", data["pairs.tsv"],
                       "--source-column", "English", "--target-column", "Spanish",
                       "--num-layers", "1", *transformer],
        # A window of 100 leaves room for the 50 tokens `generate` makes by default, which
        # its export's signature then makes too.
        "language_model": ["train", "--task", "language-model", "--train-file",
                           data["story.txt"], "--num-layers", "1", "--maxlen", "100",
                           *transformer],
    }  # fmt: skip
    if with_qa:
        bert = bert_dir or workdir / "minilm"
        if not (bert / "encoder").is_dir():
            run_or_fail(python, ["convert-bert", "--out", bert, "--seq-length", "64"])
        exports["question_answerer"] = [
            "train", "--task", "question-answering", "--model", "bert", "--train-file",
            data["faq.json"], "--preprocess", bert / "preprocess", "--encoder", bert / "encoder",
            "--seq-length", "64", "--epochs", "1", "--batch-size", "8",
        ]  # fmt: skip
    to_make = [
        [*argv, "--export-dir", workdir / name, "--overwrite"]
        for name, argv in exports.items()
        if not (workdir / name / "saved_model.pb").is_file()
    ]
    to_make += [
        ["export-litert", workdir / name, "--out", workdir / f"{name}.tflite"]
        for name in ("classifier", "tagger")
        if not (workdir / f"{name}.tflite").is_file()
    ]
    run_or_fail(python, *to_make)
    return exports


# Runs each command line given as JSON with the console script's main, one after the
# other in this one interpreter (the exports are made once; how is not measured), and
# stops at the first that fails.
RUN_EACH = """
import json, sys
import kerasformer_command
for argv in json.loads(sys.argv[1]):
    code = kerasformer_command.main(argv)
    if code:
        sys.exit(f"{' '.join(argv)} failed with status {code}")
"""


def run_or_fail(python: str, *commands: list) -> None:
    """Run the ``kerasformer`` command lines in one fresh interpreter; exit if one fails."""
    if not commands:
        return
    argvs = json.dumps([list(map(str, argv)) for argv in commands])
    result = subprocess.run([python, "-c", RUN_EACH, argvs], capture_output=True, text=True,
                            cwd=gettempdir())  # fmt: skip
    if result.returncode != 0:
        sys.exit(f"making the exports failed:\n{result.stderr[-3000:]}")


def measured_commands(workdir: Path, with_qa: bool) -> dict[str, list[str]]:
    """What is timed: help, a refusal, and each serving command's first result."""
    w = str(workdir)
    commands = {
        "--help": ["--help"],
        "train --help": ["train", "--help"],
        "refusal: train --epochs -1": ["train", "--epochs", "-1"],
        "refusal: predict NOT_AN_EXPORT": ["predict", w, "a text"],
        "predict (SavedModel)": ["predict", f"{w}/classifier", "Shares rose after profits"],
        "predict (LiteRT)": ["predict", f"{w}/classifier.tflite", "Shares rose after profits"],
        "tag (SavedModel)": ["tag", f"{w}/tagger", "Anna Berg visited Paris today ."],
        "tag (LiteRT)": ["tag", f"{w}/tagger.tflite", "Anna Berg visited Paris today ."],
        "translate": ["translate", f"{w}/translator", "I see 3 cats."],
        "generate": ["generate", f"{w}/language_model", "The market"],
    }
    if with_qa:
        commands["answer"] = [
            "answer", f"{w}/question_answerer", "--question", "Where was she born?",
            "--context", "Anna Berg was born in Lima.",
        ]  # fmt: skip
    return commands


def seconds_to_first_line(python: str, argv: list[str]) -> float:
    """Wall time from the start to the first line on stdout, or to the exit if none."""
    started = time.perf_counter()
    child = subprocess.Popen(
        [python, "-m", "kerasformer_command", *argv],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=gettempdir(),
    )  # fmt: skip
    child.stdout.readline()
    elapsed = time.perf_counter() - started
    child.stdout.read()
    child.wait()
    return elapsed


def imported(python: str, argv: list[str], workdir: Path) -> list[str]:
    record = workdir / "imports.json"
    env = {**os.environ, "KF_IMPORTS": str(record), "KF_HEAVY": json.dumps(HEAVY)}
    subprocess.run([python, "-c", RECORD_IMPORTS, *argv], env=env, capture_output=True,
                   cwd=gettempdir())  # fmt: skip
    return json.loads(record.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path("command_start"))
    parser.add_argument("--before", metavar="PYTHON",
                        help="an interpreter with the kerasformer to compare against")  # fmt: skip
    parser.add_argument("--bert-dir", type=Path, help="convert-bert's --out, reused")
    parser.add_argument("--smoke", action="store_true",
                        help="imports only: no timing, no question answerer")  # fmt: skip
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    repeats, with_qa = (0, False) if args.smoke else (args.repeats, True)
    args.workdir.mkdir(parents=True, exist_ok=True)
    args.workdir = args.workdir.resolve()
    make_exports(args.workdir, sys.executable, args.bert_dir, with_qa)
    pythons = {"after": sys.executable, **({"before": args.before} if args.before else {})}
    commands = measured_commands(args.workdir, with_qa)
    seconds = {who: {name: [] for name in commands} for who in pythons}
    for _ in range(repeats):
        for name, argv in commands.items():
            for who, python in pythons.items():  # alternately, so both see the same machine
                seconds[who][name].append(seconds_to_first_line(python, argv))
    report = {
        "command": " ".join(["python bench/command_start.py", *sys.argv[1:]]),
        "repeats": repeats,
        "commands": {name: " ".join(["kerasformer", *argv]) for name, argv in commands.items()},
        "median_seconds": {
            who: {
                name: statistics.median(values) if values else None
                for name, values in times.items()
            }
            for who, times in seconds.items()
        },  # fmt: skip
        "seconds": seconds,
        "imports": {
            who: {name: imported(python, argv, args.workdir) for name, argv in commands.items()}
            for who, python in pythons.items()
        },
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=1) + "\n")
    print_table(report, list(pythons))


def print_table(report: dict, who: list[str]) -> None:
    medians, imports = report["median_seconds"], report["imports"]
    header = "".join(f"{name:>10}" for name in who) + ("     ratio" if len(who) == 2 else "")
    print(f"{'median seconds to the first result':<36}{header}   imports (after)")
    for name in medians["after"]:
        values = [medians[w][name] or float("nan") for w in who]
        ratio = f"{values[0] / values[1]:>10.2f}" if len(values) == 2 else ""
        heavy = ", ".join(imports["after"][name]) or "-"
        print(f"{name:<36}" + "".join(f"{v:>10.2f}" for v in values) + f"{ratio}   {heavy}")


if __name__ == "__main__":
    main()
