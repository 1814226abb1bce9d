"""``bench/serving.py --smoke`` runs as the README gives it, on the tiny exports the serving
tests serve: every row measured, every answer checked, nothing refused."""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers.bench import bench_script
from tests.helpers.served import serving_exports


@pytest.fixture(scope="session")
def served_exports(tmp_path_factory):
    """``{kind: export}`` and ``data``, the tiny data they were trained on (made once)."""
    exports = serving_exports(tmp_path_factory)
    return {**exports, "data": exports["classifier"].parents[1] / "data"}


@pytest.mark.slow
def test_the_serving_bench_loads_each_model_with_and_without_batching(
    served_exports, tmp_path, monkeypatch, capsys
):
    """Slow: two servers start, each loading three exports, and the bench loads them too."""
    bench = bench_script("serving", monkeypatch)
    output, data = tmp_path / "serving.json", served_exports["data"]
    bench.main([
        str(served_exports["classifier"]), "--translator", str(served_exports["translator"]),
        "--tagger", str(served_exports["tagger"]), "--data-dir", str(data / "ag_news_csv"),
        "--spa-eng-dir", str(data / "spa-eng"), "--conll-dir", str(data / "conll2003"),
        "--smoke", "--output", str(output),
    ])  # fmt: skip
    results = json.loads(output.read_text())
    settings = [(row["model"], row["clients"], row["batching"]) for row in results["rows"]]
    assert settings == [
        ("classifier", 1, True), ("classifier", 8, True), ("translator", 8, True),
        ("tagger", 8, True), ("classifier", 1, False), ("classifier", 8, False),
        ("translator", 8, False), ("tagger", 8, False),
    ]  # fmt: skip
    for row in results["rows"]:
        assert row["errors"] == 0, row["error_samples"]
        assert row["requests"] == 20, row
        assert row["requests_per_s"] > 0 and row["texts_per_s"] > 0, row
        assert row["latency_ms_p50"] <= row["latency_ms_p99"], row
    for kind in ("classifier", "translator", "tagger"):
        assert results["in_process"][kind]["texts_per_s"] > 0, kind
    # Served or called in-process, the classifier picks the same class for every text.
    assert all(row["same_class"] == 1.0 for row in results["rows"] if row["model"] == "classifier")
    assert results["server_exit_statuses"] == {"on": 0, "off": 0}
    assert results["cpu_count"] == os.cpu_count()
    assert "| classifier | 8 | on |" in capsys.readouterr().out
