"""Any TFDS text dataset by name, read offline: faked with TFDS's own ``mock_data``.

``tfds.testing.mock_data`` fakes a registered dataset's examples from its features. Without
metadata files it knows no split names (so only train is read); with a ``dataset_info.json``
written here (``MockPolicy.USE_FILES``) the dataset has the splits the test gives it, and
``as_dataset_fn`` replaces the random examples with texts whose labels the test knows.
"""

import math
import time

import numpy as np
import pytest
import tensorflow_datasets as tfds

from kerasformer.datasets.from_tfds import from_tfds
from kerasformer.errors import KerasformerError
from tests.helpers.tfds_mock import numbered_examples, prepared_dataset

SPLITS = ("train", "validation", "test")


def as_pairs(data, split):
    part = data.splits[split]
    return sorted((str(t), int(y)) for t, y in zip(part.texts, part.labels, strict=True))


def all_pairs(data):
    return sorted(pair for split in SPLITS for pair in as_pairs(data, split))


def held_out_size(n, fraction):
    # scikit-learn's train_test_split rounds the held-out part up.
    return math.ceil(fraction * n)


def review(split, i):
    # Messy whitespace on purpose: the texts come back normalised.
    return {"text": f"  {split}\treview\n {i} ", "label": i % 2}


def test_imdb_reviews_from_mock_data_holds_test_then_validation_out_of_train():
    lines = []
    with tfds.testing.mock_data(num_examples=50):
        data = from_tfds("tfds:imdb_reviews", log=lines.append)
        faked = tfds.as_numpy(tfds.load("imdb_reviews", split="train"))
        expected = sorted((" ".join(ex["text"].decode().split()), int(ex["label"])) for ex in faked)
    assert data.name == "imdb_reviews"
    assert data.class_names == ("neg", "pos")
    test = held_out_size(50, 0.1)
    validation = held_out_size(50 - test, 0.1)
    assert data.sizes() == {"train": 50 - test - validation, "validation": validation, "test": test}
    assert all_pairs(data) == expected
    assert lines == [
        "tfds:imdb_reviews: text from 'text', labels from 'label' (2 classes: neg, pos); "
        "splits train (test and validation held out of train)"
    ]


def test_the_datasets_own_splits_are_used_and_only_missing_ones_held_out(tmp_path):
    lines = []
    with prepared_dataset(
        tmp_path, "imdb_reviews", {"train": 40, "test": 12, "unsupervised": 7}, review
    ):
        data = from_tfds(
            "imdb_reviews/plain_text", tmp_path, validation_fraction=0.25, log=lines.append
        )
    assert data.name == "imdb_reviews-plain_text"
    assert as_pairs(data, "test") == sorted((f"test review {i}", i % 2) for i in range(12))
    assert sorted(as_pairs(data, "train") + as_pairs(data, "validation")) == sorted(
        (f"train review {i}", i % 2) for i in range(40)
    )
    assert data.sizes()["validation"] == held_out_size(40, 0.25)
    assert np.bincount(data.splits["validation"].labels).tolist() == [5, 5]  # stratified
    assert lines == [
        "tfds:imdb_reviews/plain_text: text from 'text', labels from 'label' (2 classes: neg, "
        "pos); splits train, test (validation held out of train)"
    ]


def test_held_out_splits_are_seeded(tmp_path):
    with prepared_dataset(tmp_path, "imdb_reviews", {"train": 40}, review):
        first, again, other = (from_tfds("imdb_reviews", split_seed=seed) for seed in (1, 1, 2))
    assert as_pairs(first, "test") == as_pairs(again, "test")
    assert as_pairs(first, "test") != as_pairs(other, "test")


def test_an_unlabelled_test_split_is_held_out_of_train_instead(tmp_path):
    # GLUE's test labels are -1: no label. A test split of them would measure nothing.
    def sentence(split, i):
        return {"sentence": f"{split} {i}", "label": -1 if split == "test" else i % 2, "idx": i}

    lines = []
    with prepared_dataset(
        tmp_path, "glue/sst2", {"train": 20, "validation": 6, "test": 8}, sentence
    ):
        data = from_tfds("glue/sst2", test_fraction=0.2, log=lines.append)
    assert data.name == "glue-sst2"
    assert data.class_names == ("negative", "positive")
    assert as_pairs(data, "validation") == sorted((f"validation {i}", i % 2) for i in range(6))
    assert sorted(as_pairs(data, "train") + as_pairs(data, "test")) == sorted(
        (f"train {i}", i % 2) for i in range(20)
    )
    assert data.sizes()["test"] == held_out_size(20, 0.2)
    assert lines == [
        "tfds:glue/sst2: text from 'sentence', labels from 'label' (2 classes: negative, "
        "positive); splits train, validation (test held out of train); its test split has no "
        "labels"
    ]


def topic(split, i):
    return {"title": f"Title {i}", "description": f" about  {i}", "label": i % 4}


@pytest.mark.parametrize("text_column", [["title", "description"], "title, description"])
def test_chosen_text_columns_are_joined_by_a_space(text_column):
    lines = []
    with tfds.testing.mock_data(as_dataset_fn=numbered_examples(topic)):
        data = from_tfds(
            "ag_news_subset", text_column=text_column, label_column="label", log=lines.append
        )
    assert data.class_names == ("World", "Sports", "Business", "Sci/Tech")
    assert all_pairs(data) == sorted((f"Title {i} about {i}", i % 4) for i in range(60))
    assert lines[0].startswith("tfds:ag_news_subset: text from 'title' + 'description', ")


def test_by_default_the_first_text_feature_is_read_and_the_others_named():
    lines = []
    with tfds.testing.mock_data(as_dataset_fn=numbered_examples(topic)):
        data = from_tfds("ag_news_subset", log=lines.append)
    assert all_pairs(data) == sorted((f"Title {i}", i % 4) for i in range(60))
    assert lines == [
        "tfds:ag_news_subset: text from 'title', labels from 'label' (4 classes: World, Sports, "
        "Business, Sci/Tech); splits train (test and validation held out of train); other text "
        "features: description (--text-column)"
    ]


def one_line_error(call) -> str:
    with pytest.raises(KerasformerError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    "name, columns, message",
    [
        (
            "imdb_reviews",
            {"text_column": "body"},
            "--text-column 'body' is not a feature of tfds:imdb_reviews (its features: text "
            "(Text), label (ClassLabel)); pass --text-column one of them.",
        ),
        (
            "imdb_reviews",
            {"label_column": "stars"},
            "--label-column 'stars' is not a feature of tfds:imdb_reviews (its features: text "
            "(Text), label (ClassLabel)); pass --label-column one of them.",
        ),
        (
            "imdb_reviews",
            {"label_column": "text"},
            "--label-column 'text' of tfds:imdb_reviews is not a ClassLabel feature (its "
            "features: text (Text), label (ClassLabel)); pass --label-column one of: label.",
        ),
        (
            "glue/sst2",
            {"text_column": "sentence,idx"},
            "--text-column 'idx' of tfds:glue/sst2 is not a string feature (its features: "
            "sentence (Text), label (ClassLabel), idx (Tensor)); pass --text-column one of: "
            "sentence.",
        ),
    ],
)
def test_a_column_that_is_not_a_fitting_feature_is_refused_naming_the_features(
    name, columns, message
):
    with tfds.testing.mock_data(num_examples=20):
        assert one_line_error(lambda: from_tfds(name, **columns)) == message


def test_an_unknown_dataset_suggests_the_close_names():
    message = one_line_error(lambda: from_tfds("tfds:imdb_reviewz"))
    assert message.startswith(
        "tfds:imdb_reviewz is not a TensorFlow Datasets dataset; did you mean tfds:imdb_reviews?"
    )
    assert "`tfds.list_builders()` lists the names" in message


def test_an_unknown_config_names_the_configs():
    assert one_line_error(lambda: from_tfds("imdb_reviews/bytes")) == (
        "tfds:imdb_reviews has no config 'bytes' (its configs: plain_text); use e.g. "
        "tfds:imdb_reviews/plain_text."
    )


def test_a_dataset_without_class_labels_is_refused_before_any_reading(tmp_path):
    # lm1b's only feature is its text: a language-model corpus, nothing to classify.
    assert one_line_error(lambda: from_tfds("lm1b", tmp_path)) == (
        "tfds:lm1b has no ClassLabel feature (its features: text (Text)), so it has no classes "
        "to learn; pick a dataset with one, which --label-column can name."
    )


def test_a_dataset_not_prepared_fails_at_once_without_a_download(tmp_path, monkeypatch, offline):
    def no_download(self, *args, **kwargs):
        raise RuntimeError("download_and_prepare was called")

    monkeypatch.setattr(tfds.core.DatasetBuilder, "download_and_prepare", no_download)
    started = time.monotonic()
    message = one_line_error(lambda: from_tfds("imdb_reviews", tmp_path))
    assert time.monotonic() - started < 10
    assert message == (
        f"tfds:imdb_reviews is not prepared in {tmp_path}; run `tfds build imdb_reviews "
        f"--data_dir {tmp_path}` on a machine with internet, or pass --tfds-data-dir where it "
        "is prepared."
    )
    assert list(tmp_path.iterdir()) == []
