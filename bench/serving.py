"""``kerasformer serve`` under load: requests/s, texts/s and latency, batched and not.

The server runs as a user runs it, ``kerasformer serve NAME=EXPORT ... --port 0`` in a
process of its own on loopback (once with batching, once with ``--no-batching``), serving
the AG News classifier and, where given, a translator and a tagger (one of them is sent
requests at a time; the others sit idle). A load generator,
in a third process, keeps ``--clients`` clients busy, each on its own keep-alive HTTP/1.1
connection, each sending its next ``POST /v1/models/NAME:predict`` (TF Serving's
``{"instances": [text, ...]}``, ``--texts-per-request`` texts) as soon as its last was
answered, until ``--requests`` requests were sent or ``--seconds`` passed. It is a raw
asyncio client that writes ready-made requests and reads each answer by its
Content-Length, so that on a machine of two cores it takes little of the CPU the server
needs (each row records both processes' CPU use).

Each row: requests answered, requests/s, texts/s, median and 99th-percentile latency
(from a request's first byte written to its answer's last byte read), errors (a status
other than 200, or an answer without one prediction per text sent: 0 in a good run), and
texts/s as a share of the in-process ceiling: the same SavedModel, ``tf.saved_model.load(
EXPORT).signatures["serving_default"]``, called in this process on batches of
``--ceiling-batch-size`` (64) of the same texts, as fast as it goes, with no server
running, before the servers start and again after they stop (the faster of the two
counts: other processes on a shared machine move it). For the classifier, "same class"
is the share of texts answered whose most probable class is the in-process call's.
Texts: AG News's test split, spa-eng's test split (English) and CoNLL-2003's
``valid.txt`` (its words joined by spaces). ``os.getloadavg()`` is recorded before,
during and after.

    kerasformer train --dataset ag_news --data-dir ../shared/data/ag_news_csv \\
        --epochs 3 --export-dir /tmp/ag_news
    kerasformer train --task translation --data-dir ../shared/data/spa-eng --epochs 1 \\
        --embed-dim 64 --num-heads 2 --ff-dim 128 --num-layers 1 --vocab-size 8000 \\
        --export-dir /tmp/spa_eng
    kerasformer train --task ner --model rnn --data-dir ../shared/data/conll2003 \\
        --epochs 1 --batch-size 32 --export-dir /tmp/conll_rnn
    python bench/serving.py /tmp/ag_news --translator /tmp/spa_eng --tagger /tmp/conll_rnn

``--smoke`` (CI's ``tests/bench/test_serving.py``) sends 20 requests at 1 and 8 clients
and writes its results only to ``--output PATH`` outside ``bench/results/``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from smoke import add_smoke_argument, parse_with_smoke_defaults, require_smoke_output
from tables import markdown_table

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "serving.json"
SHARED_DATA = HERE.parent.parent / "shared" / "data"
LISTENING = re.compile(r"listening on http://(\S+):(\d+) ")
# The hidden first argument that makes this script the load generator (its own process).
LOAD_GENERATOR = "--load-generator"


# The load generator: a process of its own, config on stdin, results on stdout.


def text_indices(body: int, per_request: int, count: int) -> list[int]:
    """Which of ``count`` texts request body number ``body`` holds (wrapping round)."""
    return [(body * per_request + j) % count for j in range(per_request)]


def distinct_bodies(requests: int, per_request: int, count: int) -> int:
    """How many different bodies a run cycles through: every text once where it can."""
    return max(1, min(requests, count // per_request))


def cpu_seconds(pid: int) -> float:
    """Process ``pid``'s CPU time so far (user and system), from /proc; 0 where there is none."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def http_request(host: str, port: int, path: str, texts: list[str]) -> bytes:
    body = json.dumps({"instances": texts}, ensure_ascii=False).encode("utf-8")
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """``(status, body)`` of one HTTP/1.1 answer, read by its Content-Length."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return status, await reader.readexactly(int(value))
    raise ValueError("an answer without Content-Length")


async def drive(config: dict) -> dict:
    """Keep ``clients`` connections busy until the requests are sent or the time is up."""
    host, port, path = config["host"], config["port"], config["path"]
    texts, per_request = config["texts"], config["texts_per_request"]
    count = distinct_bodies(config["requests"], per_request, len(texts))
    requests = [
        http_request(host, port, path, [texts[i] for i in text_indices(b, per_request, len(texts))])
        for b in range(count)
    ]
    connections = [list(await asyncio.open_connection(host, port))
                   for _ in range(config["clients"])]  # fmt: skip

    async def exchange(connection, request: bytes) -> tuple[int, bytes]:
        connection[1].write(request)
        return await read_response(connection[0])

    # Untimed: one request on each connection, so every client starts connected and warm.
    await asyncio.gather(*(exchange(c, requests[0]) for c in connections))
    records, sent = [], 0
    server_cpu_started, cpu_started = cpu_seconds(config["server_pid"]), time.process_time()
    started = time.perf_counter()
    deadline = started + config["seconds"]

    async def client(connection) -> None:
        nonlocal sent
        while sent < config["requests"] and time.perf_counter() < deadline:
            body_index = sent % count
            sent += 1
            begun = time.perf_counter()
            try:
                status, answer = await exchange(connection, requests[body_index])
            except (OSError, ValueError, asyncio.IncompleteReadError) as error:
                status, answer = 0, f"{type(error).__name__}: {error}".encode()
                connection[1].close()
                connection[:] = await asyncio.open_connection(host, port)
            ended = time.perf_counter()
            records.append((body_index, status, (ended - begun) * 1000, ended - started,
                            answer.decode("utf-8", "replace")))  # fmt: skip

    await asyncio.gather(*(client(c) for c in connections))
    # Both processes' CPU time over the timed part alone: who had the CPU meanwhile.
    cpu = time.process_time() - cpu_started
    server_cpu = cpu_seconds(config["server_pid"]) - server_cpu_started
    for _, writer in connections:
        writer.close()
    return {
        "elapsed_s": max(record[3] for record in records) if records else 0.0,
        "cpu_s": cpu, "server_cpu_s": server_cpu, "records": records,
    }  # fmt: skip


def run_load_generator() -> None:
    print(json.dumps(asyncio.run(drive(json.load(sys.stdin)))))


def generate_load(config: dict) -> dict:
    """`drive` in a fresh process: the bench's own never competes with the clients."""
    child = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), LOAD_GENERATOR],
        input=json.dumps(config), capture_output=True, text=True, timeout=config["seconds"] + 600,
    )  # fmt: skip
    if child.returncode != 0:
        raise SystemExit(f"the load generator failed:\n{child.stderr[-3000:]}")
    return json.loads(child.stdout)


# The server: `kerasformer serve` in a process of its own.


class Server:
    """``kerasformer serve ARGS --port 0``; ``host`` and ``port`` are what it printed."""

    def __init__(self, args: list[str], startup_timeout: float = 600):
        command = shutil.which("kerasformer")
        start = [command] if command else [sys.executable, "-m", "kerasformer_command"]
        self.args = [*start, "serve", *args, "--port", "0"]
        self.startup_timeout = startup_timeout
        self.lines: list[str] = []
        self.host, self.port = "", 0

    def __enter__(self) -> Server:
        self.process = subprocess.Popen(
            self.args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
        )  # fmt: skip
        listening = threading.Event()
        threading.Thread(target=self.read, args=(listening,), daemon=True).start()
        if not listening.wait(self.startup_timeout) or not self.port:
            self.process.kill()
            raise SystemExit(f"kerasformer serve did not start:\n{''.join(self.lines)[-3000:]}")
        return self

    def read(self, listening: threading.Event) -> None:
        # Read to the end, so the server never blocks on a full pipe.
        for line in self.process.stdout:
            self.lines.append(line)
            match = LISTENING.search(line)
            if match and not self.port:
                self.host, self.port = match.group(1), int(match.group(2))
                listening.set()
        listening.set()

    def __exit__(self, *exc_info) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.exit_status = self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.exit_status = self.process.wait()


# The texts, and the in-process ceiling.


def read_texts(kind: str, data_dir: Path) -> list[str]:
    """The texts each model is sent: test splits, as the model never saw them."""
    if kind == "classifier":
        from kerasformer.datasets.ag_news import read_csv_folder

        return [str(text) for text in read_csv_folder(data_dir)[1].texts]
    if kind == "translator":
        from kerasformer.datasets.spa_eng import load_spa_eng

        return [str(text) for text in load_spa_eng(data_dir).split("test").sources]
    from kerasformer.datasets.tagged_sentences import read_tagged_file

    sentences, _ = read_tagged_file(data_dir / "valid.txt")
    return [" ".join(words) for words in sentences.tokens]


class InProcess:
    """``serving_default`` of the SavedModel at ``export``, loaded once in this process."""

    def __init__(self, export: Path):
        import tensorflow as tf

        self.tf = tf
        # Kept: the signatures hold only weak references to the object they came from.
        self.loaded = tf.saved_model.load(str(export))
        self.function = self.loaded.signatures["serving_default"]
        (self.input,) = self.function.structured_input_signature[1]

    def __call__(self, texts: list[str]) -> dict[str, np.ndarray]:
        outputs = self.function(**{self.input: self.tf.constant(texts)})
        return {name: value.numpy() for name, value in outputs.items()}


def in_process_ceiling(model: InProcess, texts: list[str], batch_size: int, seconds: float):
    """Texts/s of ``model`` on batches of ``batch_size``, the texts measured, and each
    batch's outputs (``{output: array}``), in order. Stops after ``seconds`` (at least one
    batch)."""
    model(texts[:batch_size])  # warm up
    outputs, done = [], 0
    started = time.perf_counter()
    while done < len(texts):
        outputs.append(model(texts[done : done + batch_size]))
        done = min(done + batch_size, len(texts))
        if time.perf_counter() - started >= seconds:
            break
    return done / (time.perf_counter() - started), done, outputs


# One row: a load run's records, checked and summed up.


def check_answers(records, texts_per_request: int, count: int, reference) -> dict:
    """Errors, latencies and (``reference`` classes by text, for a classifier) agreement."""
    errors, samples, latencies, same, compared = 0, [], [], 0, 0
    for body_index, status, latency, _, answer in records:
        predictions = None
        if status == 200:
            predictions = json.loads(answer).get("predictions")
        if not isinstance(predictions, list) or len(predictions) != texts_per_request:
            errors += 1
            if len(samples) < 3:
                samples.append(f"{status}: {answer[:300]}")
            continue
        latencies.append(latency)
        if reference is None:
            continue
        for index, prediction in zip(text_indices(body_index, texts_per_request, count),
                                     predictions, strict=True):  # fmt: skip
            if index < len(reference):
                compared += 1
                same += int(np.argmax(prediction["probabilities"]) == reference[index])
    return {
        "errors": errors, "error_samples": samples, "latencies": np.asarray(latencies),
        "same_class": same / compared if compared else None, "compared": compared,
    }  # fmt: skip


def measure_row(server: Server, kind: str, clients: int, batching: bool, texts, reference,
                args) -> dict:  # fmt: skip
    config = {
        "host": server.host, "port": server.port, "path": f"/v1/models/{kind}:predict",
        "texts": texts, "texts_per_request": args.texts_per_request, "clients": clients,
        "requests": args.requests, "seconds": args.seconds, "server_pid": server.process.pid,
    }  # fmt: skip
    load_average = os.getloadavg()[0]
    result = generate_load(config)
    checked = check_answers(result["records"], args.texts_per_request, len(texts), reference)
    answered, elapsed = len(result["records"]), result["elapsed_s"] or math.nan
    latencies = checked["latencies"]
    rate = answered / elapsed
    row = {
        "model": kind, "clients": clients, "batching": batching, "requests": answered,
        "seconds": elapsed, "requests_per_s": rate,
        "texts_per_s": rate * args.texts_per_request,
        "latency_ms_p50": float(np.percentile(latencies, 50)) if latencies.size else None,
        "latency_ms_p99": float(np.percentile(latencies, 99)) if latencies.size else None,
        "errors": checked["errors"], "error_samples": checked["error_samples"],
        "same_class": checked["same_class"], "compared": checked["compared"],
        # Cores busy during the row (CPU seconds over wall seconds): who had the CPU.
        "server_cores": result["server_cpu_s"] / elapsed,
        "load_generator_cores": result["cpu_s"] / elapsed,
        "load_average_1m": load_average,
    }  # fmt: skip
    print(json.dumps({k: v for k, v in row.items() if k != "error_samples"}), flush=True)
    return row


def server_args(models: dict[str, Path], batching: bool, args) -> list[str]:
    served = [f"{kind}={export}" for kind, export in models.items()]
    if not batching:
        return [*served, "--no-batching"]
    options = []
    if args.max_batch_size is not None:
        options += ["--max-batch-size", str(args.max_batch_size)]
    if args.batch_timeout_ms is not None:
        options += ["--batch-timeout-ms", str(args.batch_timeout_ms)]
    return served + options


@contextmanager
def timed(what: str):
    started = time.perf_counter()
    yield
    print(f"{what}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)


def measure_ceilings(models: dict[str, InProcess], texts: dict, args) -> dict:
    """Each model's in-process texts/s (and the classifier's classes), no server running."""
    ceilings = {}
    for kind, model in models.items():
        # At least the texts the load sends, so that every answer can be compared.
        needed = min(len(texts[kind]), max(args.ceiling_batch_size * 16,
                                           args.requests * args.texts_per_request))  # fmt: skip
        with timed(f"{kind}: in-process"):
            rate, done, outputs = in_process_ceiling(
                model, texts[kind][:needed], args.ceiling_batch_size, args.seconds
            )
        ceilings[kind] = {"texts_per_s": rate, "texts": done,
                          "load_average_1m": os.getloadavg()[0]}  # fmt: skip
        if kind == "classifier":
            ceilings[kind]["classes"] = np.concatenate(
                [batch["probabilities"].argmax(axis=1) for batch in outputs]
            )
        print(json.dumps({"model": kind, "in_process_texts_per_s": rate, "texts": done}),
              flush=True)  # fmt: skip
    return ceilings


def run(args) -> dict:
    started = time.perf_counter()
    load_before = os.getloadavg()
    models = {"classifier": args.classifier, "translator": args.translator,
              "tagger": args.tagger}  # fmt: skip
    models = {kind: Path(export) for kind, export in models.items() if export is not None}
    data_dirs = {"classifier": args.data_dir, "translator": args.spa_eng_dir,
                 "tagger": args.conll_dir}  # fmt: skip
    texts = {kind: read_texts(kind, data_dirs[kind]) for kind in models}
    in_process = {kind: InProcess(export) for kind, export in models.items()}
    before = measure_ceilings(in_process, texts, args)
    rows, exit_statuses = [], {}
    for batching in (setting == "on" for setting in args.batching):
        with (
            timed(f"server, batching {'on' if batching else 'off'}"),
            Server(server_args(models, batching, args)) as server,
        ):
            for kind in models:
                clients = args.clients if kind == "classifier" else args.other_clients
                for count in clients:
                    rows.append(measure_row(server, kind, count, batching, texts[kind],
                                            before[kind].get("classes"), args))  # fmt: skip
        exit_statuses["on" if batching else "off"] = server.exit_status
    # Other processes on the machine move the ceiling from minute to minute: it is measured
    # before the servers and after, and each row is set against the faster of the two.
    after = measure_ceilings(in_process, texts, args)
    ceilings = {}
    for kind in models:
        rates = [before[kind]["texts_per_s"], after[kind]["texts_per_s"]]
        ceilings[kind] = {"texts_per_s": max(rates), "before": before[kind]["texts_per_s"],
                          "after": after[kind]["texts_per_s"], "texts": before[kind]["texts"],
                          "load_average_1m": [before[kind]["load_average_1m"],
                                              after[kind]["load_average_1m"]]}  # fmt: skip
    for row in rows:
        row["of_in_process"] = row["texts_per_s"] / ceilings[row["model"]]["texts_per_s"]
    return {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "cpu_count": os.cpu_count(),
        "load_average_before": load_before, "load_average_after": os.getloadavg(),
        "shared_machine": "other processes ran on this machine during the run; the load "
        "averages (1, 5, 15 min) say how busy it was",
        "exports": {kind: str(export) for kind, export in models.items()},
        "texts": {kind: len(texts[kind]) for kind in models},
        "requests_per_row": args.requests, "seconds_per_row": args.seconds,
        "texts_per_request": args.texts_per_request,
        "ceiling_batch_size": args.ceiling_batch_size,
        "server_options": {"max_batch_size": args.max_batch_size,
                           "batch_timeout_ms": args.batch_timeout_ms},
        "server_exit_statuses": exit_statuses,
        "in_process": ceilings, "rows": rows,
        "run_seconds": time.perf_counter() - started,
    }  # fmt: skip


def table(results: dict) -> str:
    rows = []
    for kind, ceiling in results["in_process"].items():
        rate = (f"{ceiling['texts_per_s']:.0f} (before {ceiling['before']:.0f}, after "
                f"{ceiling['after']:.0f})")  # fmt: skip
        rows.append([kind, "in-process", f"batches of {results['ceiling_batch_size']}",
                     ceiling["texts"], "", rate, "", "", "", "1.00", "", ""])  # fmt: skip
        for row in (row for row in results["rows"] if row["model"] == kind):
            rows.append([
                kind, row["clients"], "on" if row["batching"] else "off", row["requests"],
                f"{row['requests_per_s']:.0f}", f"{row['texts_per_s']:.0f}",
                number(row["latency_ms_p50"], 1), number(row["latency_ms_p99"], 1),
                row["errors"], f"{row['of_in_process']:.2f}", number(row["same_class"], 3),
                f"{row['server_cores']:.2f} / {row['load_generator_cores']:.2f}",
            ])  # fmt: skip
    headers = ["model", "clients", "batching", "requests", "requests/s", "texts/s",
               "p50 ms", "p99 ms", "errors", "of in-process", "same class",
               "cores: server / clients"]  # fmt: skip
    return markdown_table(headers, rows)


def number(value, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("classifier", type=Path, help="the AG News classifier's export")
    parser.add_argument("--translator", type=Path, help="a translator's export (English in)")
    parser.add_argument("--tagger", type=Path, help="a tagger's export")
    parser.add_argument(
        "--clients", type=int, nargs="+", default=[1, 8, 64],
        help="concurrent clients of the classifier (default 1 8 64)",
    )  # fmt: skip
    parser.add_argument(
        "--other-clients", type=int, nargs="+", default=[8],
        help="concurrent clients of the translator and the tagger (default 8)",
    )  # fmt: skip
    parser.add_argument(
        "--requests", type=int, default=10000,
        help="the most requests a row sends (default %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--seconds", type=float, default=30,
        help="the most seconds a row, or a ceiling, runs (default %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--batching", nargs="+", choices=["on", "off"], default=["on", "off"],
        help="the servers to measure: with batching, without, or both (default)",
    )  # fmt: skip
    parser.add_argument("--texts-per-request", type=int, default=1)
    parser.add_argument("--ceiling-batch-size", type=int, default=64)
    parser.add_argument("--max-batch-size", type=int, help="the server's (default its own)")
    parser.add_argument("--batch-timeout-ms", type=float, help="the server's (default its own)")
    parser.add_argument("--data-dir", type=Path, default=SHARED_DATA / "ag_news_csv",
                        help="AG News's train.csv and test.csv")  # fmt: skip
    parser.add_argument("--spa-eng-dir", type=Path, default=SHARED_DATA / "spa-eng")
    parser.add_argument("--conll-dir", type=Path, default=SHARED_DATA / "conll2003")
    parser.add_argument("--table", action="store_true", help="print the last results only")
    parser.add_argument("--output", type=Path, help=f"where the results go (default {RESULTS})")
    add_smoke_argument(parser)
    args = parse_with_smoke_defaults(parser, argv, requests=20, seconds=10, clients=[1, 8])
    require_smoke_output(args.smoke, args.output, "--output")
    return args


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [LOAD_GENERATOR]:
        run_load_generator()
        return
    args = parse_args(argv)
    output = args.output or RESULTS
    if not args.table:
        results = run(args)
        output.write_text(json.dumps(results, indent=1))
    print(table(json.loads(output.read_text())))


if __name__ == "__main__":
    main()
