import numpy as np

from kerasformer.training.weight_files import read_weights, write_weights


def test_weights_come_back_in_order_with_their_dtypes_and_shapes(tmp_path):
    rng = np.random.default_rng(0)
    weights = [
        rng.normal(size=(3, 4)).astype("float32"),
        np.arange(5, dtype="int64"),
        np.array(["[PAD]", "[UNK]", "wort"], dtype=object).astype(str),
        np.float16(2.5) * np.ones((2,), dtype="float16"),
    ]
    path = write_weights(tmp_path / "w.npz", weights)
    back = read_weights(path)
    assert len(back) == len(weights)
    for original, read in zip(weights, back, strict=True):
        assert read.dtype == original.dtype and read.shape == original.shape
        np.testing.assert_array_equal(read, original)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.npz"]  # no partial left behind


def test_no_file_reads_as_none(tmp_path):
    assert read_weights(tmp_path / "missing.npz") is None
