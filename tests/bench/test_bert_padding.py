"""``bench/bert_padding.py``'s smoke runs on the tiny BERT and tiny AG News: the speed of
each input pipeline, and a fine-tuning run; FLOPs counted with the tiny BERT's own sizes."""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers.bench import bench_script

SERVING = ["string-in model, padded to 128", "kerasformer export, packed chunks, float32 encoder"]


def tiny_bert_flags(tiny_hub_bert, tiny_bert_checkpoint, tiny_ag_news_dir) -> list[str]:
    return [
        "--bert-dir", str(tiny_hub_bert.preprocess.parent),
        "--bert-config", str(tiny_bert_checkpoint / "config.json"),
        "--data-dir", str(tiny_ag_news_dir), "--serving-batch", "8", "--serving-batches", "1",
    ]  # fmt: skip


def positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


def flops_per_example(bench, checkpoint, tokens_per_text: float) -> float:
    """What effective GFLOP/s over examples/s must be: the tiny BERT's forward and
    backward FLOPs (3x forward) for one text of that many tokens, in GFLOP."""
    config = json.loads((checkpoint / "config.json").read_text())
    return 3 * tokens_per_text * bench.encoder_flops_per_token(config, tokens_per_text) / 1e9


@pytest.mark.slow
def test_each_pipeline_trains_and_serves_and_its_speed_is_tabled(
    tiny_hub_bert, tiny_bert_checkpoint, tiny_ag_news_dir, tmp_path, monkeypatch, capsys
):
    """Slow (about 20 s): it builds and steps a classifier for each pipeline, and
    exports and serves the string-in baseline and kerasformer's export, as the benchmark does."""
    bench = bench_script("bert_padding", monkeypatch)
    speed_out = tmp_path / "speed.json"
    bench.main([
        *tiny_bert_flags(tiny_hub_bert, tiny_bert_checkpoint, tiny_ag_news_dir), "--speed",
        "--variants", "strings", "bucketed", "--speed-batches", "2", "--speed-out", str(speed_out),
    ])  # fmt: skip
    report = json.loads(speed_out.read_text())
    assert list(report["train"]) == ["strings", "bucketed"]
    strings, bucketed = report["train"]["strings"], report["train"]["bucketed"]
    # The string-in model pads every text to the tiny BERT's 32 positions; packing does not.
    assert strings["mean_positions_per_text"] == 32
    assert bucketed["mean_real_tokens_per_text"] <= bucketed["mean_positions_per_text"] < 32
    for run in (strings, bucketed):
        assert 2 < run["mean_real_tokens_per_text"] <= 32  # [CLS], [SEP] and word pieces
        assert positive(run["train_examples_per_second"]) and positive(run["effective_gflops"])
        assert run["effective_gflops"] / run["train_examples_per_second"] == pytest.approx(
            flops_per_example(bench, tiny_bert_checkpoint, run["mean_real_tokens_per_text"])
        )
    assert list(report["serving_examples_per_second"]) == SERVING
    assert all(map(positive, report["serving_examples_per_second"].values()))
    printed = capsys.readouterr().out
    assert "| strings | 32.0 |" in printed and "| bucketed |" in printed


@pytest.mark.slow
def test_a_fine_tuning_run_is_saved_and_tabled(
    tiny_hub_bert, tiny_bert_checkpoint, tiny_ag_news_dir, tmp_path, monkeypatch, capsys
):
    """Slow (about 20 s): it fine-tunes the tiny BERT for an epoch, and exports
    and serves it twice (the string-in baseline and kerasformer's export)."""
    bench = bench_script("bert_padding", monkeypatch)
    out = tmp_path / "bert_padding.json"
    flags = [*tiny_bert_flags(tiny_hub_bert, tiny_bert_checkpoint, tiny_ag_news_dir),
             "--out", str(out), "--speed-out", str(tmp_path / "no_speed_run.json")]  # fmt: skip
    bench.main([*flags, "--seeds", "0", "--variants", "bucketed", "--epochs", "1"])
    (run,) = json.loads(out.read_text())["runs"]
    assert (run["variant"], run["seed"]) == ("bucketed", 0)
    assert 0 <= run["validation_accuracy"] <= 1 and 0 <= run["test_accuracy"] <= 1
    for name in ("train_examples_per_second", "effective_gflops", "wall_seconds"):
        assert positive(run[name]), name
    assert list(run["serving_examples_per_second"]) == SERVING
    assert all(map(positive, run["serving_examples_per_second"].values()))
    capsys.readouterr()
    bench.main([*flags, "--table"])  # the saved runs again, the speed table absent
    header, _, row = capsys.readouterr().out.strip().splitlines()
    assert header.startswith("| variant | seeds | validation acc.")
    assert row.startswith("| bucketed | 0 |")
