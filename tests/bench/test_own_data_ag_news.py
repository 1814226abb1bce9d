"""``bench/own_data_ag_news.py --smoke``: AG News rows read as the named dataset and as a
user's CSV files, on tiny headerless files as AG News ships them."""

from __future__ import annotations

import pytest

from tests.helpers.bench import bench_script
from tests.helpers.data import synthetic_rows, write_ag_csv

pytestmark = pytest.mark.slow  # three trainings


def test_the_named_loaders_texts_read_from_csv_give_the_named_datasets_run(
    tmp_path, monkeypatch, capsys
):
    write_ag_csv(tmp_path / "train.csv", synthetic_rows(120, seed=0))
    write_ag_csv(tmp_path / "test.csv", synthetic_rows(40, seed=1))
    bench = bench_script("own_data_ag_news", monkeypatch)
    bench.main(["--data-dir", str(tmp_path), "--smoke"])
    table = capsys.readouterr().out.split("| data |")[1].splitlines()[2:]
    rows = {cells[0]: cells[1:] for cells in
            ([c.strip() for c in line.strip("|").split("|")] for line in table)}  # fmt: skip
    assert list(rows) == ["named", "your CSV, as given", "your CSV, named loader's texts"]
    assert len({cells[0] for cells in rows.values()}) == 1  # the same split sizes
    assert rows["named"][0].replace(",", "").split(" / ") == ["108", "12", "40"]
    # The same rows, read as the named loader reads them, train to the same accuracies.
    assert rows["your CSV, named loader's texts"] == rows["named"]
