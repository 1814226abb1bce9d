"""``bench/translation.py`` on tiny spa-eng: a tiny transformer trained for one epoch,
scored greedy and with beam search, timed, tabled and drawn as the README's runs are."""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers.bench import bench_script
from tests.helpers.data import write_spa_txt
from tests.helpers.pictures import assert_not_blank, read_png

# A run's figures that must be positive numbers, the table's among them.
POSITIVE = (
    "parameters", "train_target_tokens_per_epoch", "train_tokens_per_second",
    "greedy_sentences_per_second", "beam_sentences_per_second", "wall_seconds",
)  # fmt: skip


def flags(options: dict) -> list[str]:
    """``{"embed_dim": 8}`` as the script's flags: ``["--embed-dim", "8"]``."""
    return [part for name, value in options.items()
            for part in (f"--{name.replace('_', '-')}", str(value))]  # fmt: skip


@pytest.mark.slow
def test_the_translation_bench_scores_times_and_tables_a_tiny_transformer(
    tmp_path, monkeypatch, capsys
):
    bench = bench_script("translation", monkeypatch)
    tiny = bench_script("smoke", monkeypatch).TINY_TRANSFORMER
    results = tmp_path / "translation.json"
    argv = [
        "--models", "transformer", "--epochs", "1", *flags(tiny), "--decode-sentences", "8",
        "--data-dir", str(write_spa_txt(tmp_path / "spa-eng")), "--work-dir", str(tmp_path),
        "--results", str(results),
    ]  # fmt: skip
    bench.main(argv)
    printed = capsys.readouterr().out.strip().splitlines()
    saved = json.loads(results.read_text())
    assert saved["beam_width"] == 4 and list(saved["runs"]) == ["word: transformer"]
    run = saved["runs"]["word: transformer"]
    assert run["command"] == "python bench/translation.py " + " ".join(argv)
    assert run["epochs"] == 1 and run["settings"] == tiny
    scores = {"validation": ["bleu"], "test_greedy": ["bleu"],
              "test_beam": ["bleu", "bleu_lowercase", "chrf", "chrf_lowercase"]}  # fmt: skip
    for part, names in scores.items():
        for name in names:
            assert 0 <= run[part][name] <= 100, (part, name)
    for key in POSITIVE:
        assert math.isfinite(run[key]) and run[key] > 0, key
    assert printed[-1].startswith(f"| word: transformer | 1 | {run['parameters']:,} | ")
    # --table prints the saved runs' table again; --plot draws their validation curves.
    bench.main(["--table", "--results", str(results)])
    assert capsys.readouterr().out.strip().splitlines() == printed[-3:]
    bench.main(["--plot", str(tmp_path / "curves.png"), "--results", str(results)])
    assert_not_blank(read_png(tmp_path / "curves.png"))


def test_the_rnn_takes_only_the_sizes_an_rnn_has(monkeypatch):
    """The run above leaves the RNN out (it trains for 20 s more); the same flags size it,
    less the transformer's own."""
    bench = bench_script("translation", monkeypatch)
    tiny = bench_script("smoke", monkeypatch).TINY_TRANSFORMER
    args = bench.parse_args([*flags(tiny), "--units", "8", "--lr-schedule", "cosine"])
    run_settings = {"lr_schedule": "cosine"}
    assert bench.levers(args, "rnn") == ({"embed_dim": 8, "units": 8}, run_settings)
    assert bench.levers(args, "transformer") == (tiny, run_settings)
