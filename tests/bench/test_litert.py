"""``bench/litert.py`` runs as the README gives it, on a tiny classifier and data: the
SavedModel and each LiteRT quantisation, measured side by side."""

from __future__ import annotations

import json

from tests.helpers.bench import bench_script


def test_the_litert_bench_measures_the_savedmodel_and_each_quantisation(
    tiny_transformer, tiny_ag_news_dir, tmp_path, monkeypatch, capsys
):
    bench = bench_script("litert", monkeypatch)
    output = tmp_path / "litert.json"
    bench.main([
        str(tiny_transformer.export_dir), "--data-dir", str(tiny_ag_news_dir),
        "--latency-texts", "5", "--batch-size", "16", "--output", str(output),
    ])  # fmt: skip
    results = json.loads(output.read_text())
    rows = {row["model"]: row for row in results["rows"]}
    assert list(rows) == ["SavedModel", ".tflite none", ".tflite dynamic", ".tflite float16"]
    assert results["test_texts"] == 80
    # Unquantised, the LiteRT model computes what the SavedModel does.
    assert rows[".tflite none"]["same_class"] == 1.0
    assert rows[".tflite none"]["max_abs_diff"] < 1e-4
    assert rows[".tflite none"]["accuracy"] == rows["SavedModel"]["accuracy"]
    for name, row in rows.items():
        assert row["bytes"] > 0 and row["texts_per_s"] > 0, name
    assert rows[".tflite dynamic"]["model_bytes"] < rows[".tflite none"]["model_bytes"]
    assert "| .tflite dynamic |" in capsys.readouterr().out
