import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.datasets import load_bbc_news, load_dataset
from kerasformer.datasets.bbc_news import default_bbc_news_dir
from kerasformer.errors import KerasformerError

CLASSES = ("business", "entertainment", "politics", "sports", "tech")


@pytest.fixture(scope="module")
def bbc():
    return load_dataset("bbc_news")


def test_all_articles_in_five_classes(bbc):
    assert bbc.class_names == CLASSES
    assert sum(bbc.sizes().values()) == 2225
    files_per_class = [len(list((default_bbc_news_dir() / c).glob("*.txt"))) for c in CLASSES]
    all_labels = np.concatenate([part.labels for part in bbc.splits.values()])
    np.testing.assert_array_equal(np.bincount(all_labels), files_per_class)


def test_test_split_is_a_stratified_fifth(bbc):
    test = bbc.splits["test"]
    assert abs(len(test) - 445) <= 5  # a fifth of the unique texts, with their copies
    all_labels = np.concatenate([part.labels for part in bbc.splits.values()])
    expected = np.bincount(all_labels) * 0.2
    assert np.all(np.abs(np.bincount(test.labels) - expected) <= 3)


def test_splits_share_no_text_even_though_the_corpus_has_duplicates(bbc):
    all_texts = np.concatenate([part.texts for part in bbc.splits.values()])
    assert len(set(all_texts)) < len(all_texts)  # the corpus does hold copies
    texts = {name: set(part.texts) for name, part in bbc.splits.items()}
    assert not texts["train"] & texts["test"]
    assert not texts["train"] & texts["validation"]
    assert not texts["validation"] & texts["test"]
    again = load_bbc_news()
    for name, part in bbc.splits.items():
        np.testing.assert_array_equal(part.texts, again.splits[name].texts)
        np.testing.assert_array_equal(part.labels, again.splits[name].labels)


def test_title_comes_first_and_latin1_article_is_read(bbc):
    article = (default_bbc_news_dir() / "sports" / "199.txt").read_bytes().decode("latin-1")
    title = article.strip().splitlines()[0].strip()
    matches = [t for part in bbc.splits.values() for t in part.texts if t.startswith(title)]
    assert len(matches) == 1 and "£" in matches[0]


def test_tf_data_gives_string_and_integer_label(bbc):
    text, label = next(iter(bbc.train))
    assert text.dtype == tf.string and label.dtype == tf.int64
    assert bbc.train.cardinality().numpy() == len(bbc.splits["train"])


def test_a_folder_in_the_same_layout_can_be_given(tmp_path):
    for name, words in [("alpha", "a b c"), ("beta", "d e f")]:
        (tmp_path / name).mkdir()
        for i in range(10):
            (tmp_path / name / f"{i:03}.txt").write_text(f"Title {i}\n\n{words} {i}\n")
    data = load_bbc_news(tmp_path, validation_fraction=0.25)
    assert data.class_names == ("alpha", "beta")
    assert data.sizes() == {"train": 12, "validation": 4, "test": 4}
    assert all(t.startswith("Title") for t in data.splits["train"].texts)


def test_missing_or_empty_folder_is_a_clear_error(tmp_path):
    with pytest.raises(KerasformerError, match="does not exist"):
        load_bbc_news(tmp_path / "nope")
    with pytest.raises(KerasformerError, match="no class sub-folders"):
        load_bbc_news(tmp_path)


def test_unknown_dataset_name_lists_the_known_ones():
    with pytest.raises(
        KerasformerError, match="unknown dataset 'imdb'; choose one of: ag_news, bbc_news"
    ):
        load_dataset("imdb")
