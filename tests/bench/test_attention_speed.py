"""``bench/attention_speed.py --smoke``: both attention layers timed with each mask."""

from __future__ import annotations

import json

import pytest

from tests.helpers.bench import bench_script


def test_both_layers_are_timed_with_every_mask_and_tabled(tmp_path, monkeypatch, capsys):
    bench = bench_script("attention_speed", monkeypatch)
    out = tmp_path / "attention_speed.json"
    bench.main(["--smoke", "--out", str(out)])
    (results,) = json.loads(out.read_text()).values()  # one backend: this process's
    assert [(row["length"], row["mask"]) for row in results["rows"]] == [
        (length, mask) for length in (8, 16) for mask in bench.MASKS
    ]
    for row in results["rows"]:
        assert row["kerasformer"] > 0 and row["keras"] > 0
    assert f"| {results['backend']} | 16 | causal |" in capsys.readouterr().out


def test_a_smoke_run_refuses_to_write_into_bench_results(monkeypatch):
    bench = bench_script("attention_speed", monkeypatch)
    with pytest.raises(SystemExit, match="give --out PATH outside"):
        bench.main(["--smoke"])
