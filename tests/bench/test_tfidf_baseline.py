"""``bench/tfidf_baseline.py`` on tiny AG News: C chosen on validation, test reported."""

from __future__ import annotations

from tests.helpers.bench import bench_script


def test_the_tfidf_baseline_chooses_on_validation_and_reports_test(
    tiny_ag_news_dir, monkeypatch, capsys
):
    bench = bench_script("tfidf_baseline", monkeypatch)
    bench.main(["--datasets", "ag_news", "--data-dir", str(tiny_ag_news_dir)])
    header, _, row = capsys.readouterr().out.strip().splitlines()
    dataset, chosen, validation, test = (cell.strip() for cell in row.strip("|").split("|"))
    assert dataset == "ag_news" and float(chosen) in bench.STRENGTHS
    # The synthetic texts are words of their class's topic: any sane model separates them.
    assert float(validation) > 0.8 and float(test) > 0.8
