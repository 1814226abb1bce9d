"""``bench/bert_xla_steps.py``'s smoke run: the tiny BERT's training step, frozen and
trainable, with and without XLA, one timed step each, profiled, and XLA's cache probed."""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers.bench import bench_script

WAYS = [("frozen", False), ("frozen", True), ("trainable", False), ("trainable", True)]
PROBES = [
    "first call (traces, compiles)", "again, nothing changed", "again, one weight changed",
    "again, nothing changed since", "again, other ids of the same shape",
]  # fmt: skip


def positive(seconds: float) -> bool:
    return math.isfinite(seconds) and seconds > 0


@pytest.mark.slow
def test_each_way_of_stepping_is_timed_profiled_and_tabled(
    tiny_hub_bert, tmp_path, monkeypatch, capsys
):
    """Slow (about 15 s): XLA compiles the tiny BERT's training step twice (frozen and
    trainable encoder) and the cache probe's gradient step once."""
    bench = bench_script("bert_xla_steps", monkeypatch)
    out = tmp_path / "bert_xla_steps.json"
    bench.main([
        "--preprocess", str(tiny_hub_bert.preprocess), "--encoder", str(tiny_hub_bert.encoder),
        "--steps", "1", "--profile", "--cache-probe", "--out", str(out),
    ])  # fmt: skip
    results = json.loads(out.read_text())
    assert [(row["encoder"], row["xla"]) for row in results["steps"]] == WAYS
    for row in results["steps"]:
        assert positive(row["first_step_s"]) and len(row["step_s"]) == 1
        assert positive(row["step_s"][0])
        # One batch shape: under XLA the step is traced once, so any compile after the
        # first is XLA's own doing (what the benchmark looks for), not a new trace.
        assert row["traces"] == 1 if row["xla"] else row["traces"] >= 1
        assert row["profile_self_s_by_thread"], row["encoder"]
    assert list(results["cache_probe_s"]) == PROBES
    assert all(positive(seconds) for seconds in results["cache_probe_s"].values())
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert [line.split(" | ")[:2] for line in table] == [
        ["| frozen", "no XLA"], ["| frozen", "XLA"],
        ["| trainable", "no XLA"], ["| trainable", "XLA"],
    ]  # fmt: skip
