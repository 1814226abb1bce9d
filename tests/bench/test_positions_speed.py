"""``bench/positions_speed.py --smoke``: each position scheme's second-epoch speed."""

from __future__ import annotations

import json

import pytest

from tests.helpers.bench import bench_script

pytestmark = pytest.mark.slow  # two trainings of two epochs


def test_the_first_and_last_candidates_are_timed_and_tabled(
    tiny_ag_news_dir, tmp_path, monkeypatch, capsys
):
    bench = bench_script("positions_speed", monkeypatch)
    results = tmp_path / "positions_speed.json"
    bench.main(["--datasets", "ag_news", "--data-dir", str(tiny_ag_news_dir), "--smoke",
                "--results", str(results)])  # fmt: skip
    rows = json.loads(results.read_text())["rows"]
    assert [row[0] for row in rows] == ["learned", "relative, pre-LN"]
    assert all(speed > 0 for _, speed in rows)
    assert "| relative, pre-LN |" in capsys.readouterr().out


def test_a_smoke_run_never_writes_into_bench_results(monkeypatch):
    bench = bench_script("positions_speed", monkeypatch)
    with pytest.raises(SystemExit, match="give --results PATH outside"):
        bench.main(["--smoke"])
