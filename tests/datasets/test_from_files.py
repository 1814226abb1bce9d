"""Your own labelled texts: tables and class folders become the data the trainer takes."""

import json

import numpy as np
import pytest

from kerasformer.datasets import from_csv, from_directory, from_jsonl
from kerasformer.errors import KerasformerError
from tests.helpers.data import TOPICS, topic_rows, write_topic_csv
from tests.helpers.processes import run_python_json


def as_pairs(data, split):
    part = data.splits[split]
    return sorted(
        (str(t), data.class_names[int(y)]) for t, y in zip(part.texts, part.labels, strict=True)
    )


def test_csv_files_give_each_split_with_class_names_sorted(tmp_path):
    train = write_topic_csv(
        tmp_path / "train.csv",
        [
            ("Cheap flights", "travel"),
            ("Goal", "sport"),
            ("Rome by train", "travel"),
            ("Final", "sport"),
        ],
    )
    validation_rows = [("Lap record", "sport"), ("Lisbon", "travel")]
    validation = write_topic_csv(tmp_path / "valid.csv", validation_rows)
    test = write_topic_csv(tmp_path / "test.csv", [("Night  bus", "travel"), ("Cup", "sport")])
    data = from_csv(train, validation, test, text_column="body", label_column="topic")
    assert data.name == "train"
    assert data.class_names == ("sport", "travel")
    assert as_pairs(data, "train") == [
        ("Cheap flights", "travel"),
        ("Final", "sport"),
        ("Goal", "sport"),
        ("Rome by train", "travel"),
    ]
    assert as_pairs(data, "validation") == [("Lap record", "sport"), ("Lisbon", "travel")]
    assert as_pairs(data, "test") == [("Cup", "sport"), ("Night bus", "travel")]


def test_missing_splits_are_held_out_of_train_stratified_and_seeded(tmp_path):
    rows = topic_rows(copies=10)  # 60 rows, 30 a class
    path = write_topic_csv(tmp_path / "all.csv", rows)
    settings = dict(text_column="body", label_column="topic", validation_fraction=0.2,
                    test_fraction=0.1, split_seed=3)  # fmt: skip
    data = from_csv(path, **settings)
    assert data.sizes() == {"train": 43, "validation": 11, "test": 6}
    everything = sorted(
        pair for split in ("train", "validation", "test") for pair in as_pairs(data, split)
    )
    assert everything == sorted(rows)
    for split in ("validation", "test"):
        counts = np.bincount(data.splits[split].labels, minlength=2)
        assert abs(counts[0] - counts[1]) <= 1, (split, counts)
    again = from_csv(path, **settings)
    assert as_pairs(again, "test") == as_pairs(data, "test")


def test_several_text_columns_are_joined_and_columns_may_be_indices(tmp_path):
    path = tmp_path / "ag.csv"
    rows = [
        f"{label},{title},{text} here"
        for label, texts in ((1, TOPICS["sport"]), (2, TOPICS["travel"]))
        for title, text in zip("abc", texts, strict=True)
    ]
    path.write_text("class,title,description\n" + "\n".join(rows) + "\n", encoding="utf-8")
    data = from_csv(
        path, text_column="1,2", label_column=0, validation_fraction=0.5, test_fraction=0.25
    )
    assert data.class_names == ("1", "2")
    texts = set(map(str, np.concatenate([part.texts for part in data.splits.values()])))
    assert "a Goal in the last minute here" in texts and "c A night in Lisbon here" in texts


def test_whole_number_labels_sort_as_numbers(tmp_path):
    path = tmp_path / "stars.jsonl"
    lines = [
        {"text": f"review {i} {stars}", "stars": stars} for i in range(6) for stars in (2, 10, 1)
    ]
    path.write_text("\n".join(map(json.dumps, lines)) + "\n", encoding="utf-8")
    data = from_jsonl(path, label_column="stars", validation_fraction=1 / 3, test_fraction=1 / 3)
    assert data.class_names == ("1", "2", "10")
    for part in data.splits.values():
        for text, label in zip(part.texts, part.labels, strict=True):
            assert str(text).endswith(" " + data.class_names[int(label)])


def test_class_folders_are_read_like_keras_text_dataset_from_directory(tmp_path):
    for label, texts in TOPICS.items():
        for split in ("train", "test"):
            (tmp_path / split / label).mkdir(parents=True)
            for i, text in enumerate(texts):
                (tmp_path / split / label / f"{i}.txt").write_text(f"{text}\n{split}\n")
    (tmp_path / "train" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "train" / "sport" / "notes.md").write_text("not an example")
    data = from_directory(tmp_path / "train", test_dir=tmp_path / "test", validation_fraction=0.5)
    assert data.name == "train" and data.class_names == ("sport", "travel")
    assert as_pairs(data, "test") == sorted(
        (f"{t} test", label) for label, texts in TOPICS.items() for t in texts
    )
    assert data.sizes() == {"train": 3, "validation": 3, "test": 6}


@pytest.mark.parametrize(
    ("train", "validation", "message"),
    [
        (
            "body,topic\nGoal,sport\nRome,travel\n",
            "body,topic\nJazz,music\n",
            r"valid.csv:2: label .music. is not in the training data \(its classes: sport, trav",
        ),
        ('body,topic\nGoal,sport\n" ",travel\n', None, r"train.csv:3: the text is empty"),
        ("body,topic\nGoal,sport\nRome,\n", None, r"train.csv:3: the label is ''"),
        ("body,label\nGoal,sport\n", None, r"train.csv has no column 'topic' \(label_column\)"),
    ],
)
def test_bad_rows_are_refused_with_their_place_and_fix(tmp_path, train, validation, message):
    (tmp_path / "train.csv").write_text(train, encoding="utf-8")
    if validation is not None:
        (tmp_path / "valid.csv").write_text(validation, encoding="utf-8")
    with pytest.raises(KerasformerError, match=message):
        from_csv(
            tmp_path / "train.csv",
            tmp_path / "valid.csv" if validation else None,
            text_column="body",
            label_column="topic",
        )


def test_labels_mixing_numbers_and_strings_are_refused(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"text": "a", "label": 1}\n{"text": "b", "label": "two"}\n')
    with pytest.raises(
        KerasformerError,
        match=r"mixed.jsonl:2: labels mix numbers \(1 at .*"
        r"mixed.jsonl:1\) and strings \('two'",
    ):
        from_jsonl(path)


def test_a_json_row_without_the_label_is_refused(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"text": "a", "label": "x"}\n{"text": "b"}\n')
    with pytest.raises(KerasformerError, match=r"rows.jsonl:2: no 'label'"):
        from_jsonl(path)


@pytest.mark.parametrize("classes", [[], ["only"]])
def test_a_folder_needs_two_class_folders(tmp_path, classes):
    for name in classes:
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.txt").write_text("text")
    expected = "only the class folder 'only'" if classes else "no class folders"
    with pytest.raises(KerasformerError, match=expected):
        from_directory(tmp_path)


def test_a_single_class_in_train_is_refused(tmp_path):
    path = write_topic_csv(tmp_path / "one.csv", [(f"text {i}", "spam") for i in range(20)])
    with pytest.raises(KerasformerError, match="every training example is of class 'spam'"):
        from_csv(path, text_column="body", label_column="topic")


@pytest.mark.slow
def test_a_csv_trains_and_its_export_names_the_classes_in_a_fresh_process(tmp_path):
    from kerasformer.training import TrainingConfig, train

    path = write_topic_csv(tmp_path / "tickets.csv", topic_rows(copies=8))
    data = from_csv(path, text_column="body", label_column="topic")
    export_dir = tmp_path / "tickets-export"
    config = TrainingConfig(
        epochs=1, batch_size=16, export_dir=str(export_dir),
        model_options=dict(vocab_size=200, maxlen=16, embed_dim=8, num_heads=1, ff_dim=8),
    )  # fmt: skip
    result = train(config, verbose=0, data=data)
    support = sum(c["support"] for c in result.metrics["test"]["per_class"].values())
    assert support == len(data.splits["test"]) == 5
    read_back = run_python_json(
        "import json, sys\n"
        "from kerasformer.loading import ExportedClassifier\n"
        "model = ExportedClassifier(sys.argv[1])\n"
        "print(json.dumps([model.class_names, model.predict_proba(['A record lap']).shape]))",
        str(export_dir),
    )
    assert read_back == [["sport", "travel"], [1, 2]]


def test_whole_number_labels_that_differ_as_text_stay_apart_in_a_fixed_order(tmp_path):
    rows = [(f"text {i} {label}", label) for i in range(5) for label in ("1", "01", "2", "-3")]
    data = from_csv(write_topic_csv(tmp_path / "t.csv", rows), text_column="body",
                    label_column="topic", validation_fraction=0.25, test_fraction=0.25)  # fmt: skip
    assert data.class_names == ("-3", "01", "1", "2")
    odd = [(f"text {i} {label}", label) for i in range(5) for label in ("--1", "2")]
    data = from_csv(write_topic_csv(tmp_path / "odd.csv", odd), text_column="body",
                    label_column="topic", validation_fraction=0.4, test_fraction=0.4)  # fmt: skip
    assert data.class_names == ("--1", "2")


def test_class_folders_keep_keras_order_and_an_empty_one_is_refused(tmp_path):
    for name in ("10", "2"):
        (tmp_path / name).mkdir()
        for i in range(3):
            (tmp_path / name / f"{i}.txt").write_text(f"text {i} of {name}")
    data = from_directory(tmp_path, validation_fraction=1 / 3, test_fraction=1 / 3)
    assert data.class_names == ("10", "2")  # as text_dataset_from_directory sorts them
    (tmp_path / "3").mkdir()
    (tmp_path / "3" / "notes.txt").mkdir()  # a folder with a .txt name is no example
    with pytest.raises(KerasformerError, match=r"3 has no .txt files, so class '3' has no"):
        from_directory(tmp_path)


def test_multi_label_rows_become_rows_of_zeros_and_ones(tmp_path):
    train = tmp_path / "train.csv"
    train.write_text(
        'body,tags\n"goal, then pizza","sport, food"\nflight,travel\n'
        'cup final,sport\n"pasta in Rome","food,travel"\n',
        "utf-8",
    )
    valid = tmp_path / "valid.jsonl"
    valid.write_text(
        json.dumps({"body": "soup", "tags": ["food"]}) + "\n"
        + json.dumps({"body": "train trip", "tags": "travel"}) + "\n",
        "utf-8",
    )  # fmt: skip
    data = from_csv(train, test_file=valid, validation_file=valid, text_column="body",
                    label_column="tags", multi_label=True)  # fmt: skip
    assert data.multi_label and data.class_names == ("food", "sport", "travel")
    rows = dict(zip(data.splits["train"].texts, data.splits["train"].labels.tolist(), strict=True))
    assert rows == {
        "goal, then pizza": [1, 1, 0], "flight": [0, 0, 1], "cup final": [0, 1, 0],
        "pasta in Rome": [1, 0, 1],
    }  # fmt: skip
    assert data.splits["test"].labels.tolist() == [[1, 0, 0], [0, 0, 1]]


@pytest.mark.parametrize(
    "content, options, phrase",
    [
        ("body,tags\nx,\n", {"multi_label": True}, "t.csv:2: the labels are ''"),
        ("body,tags\nx,a;b\ny,c\n", {"multi_label": True, "label_separator": ";"}, None),
        (
            "body,tags\nx,a\ny,b\n",
            {"label_separator": ";"},
            "--label-separator goes with --multi-label",
        ),
    ],
)
def test_multi_label_mistakes_are_one_line(tmp_path, content, options, phrase):
    from kerasformer.datasets.from_files import from_files

    path = tmp_path / "t.csv"
    path.write_text(content, "utf-8")
    test = tmp_path / "test.csv"
    test.write_text("body,tags\nz,zzz\n", "utf-8")
    with pytest.raises(KerasformerError) as error:
        from_files(path, path, test, text_column="body", label_column="tags", **options)
    expected = phrase or "test.csv:2: label 'zzz' is not in the training data"
    assert expected in str(error.value) and "\n" not in str(error.value)


def test_a_class_with_one_example_is_named_before_it_cannot_be_split(tmp_path):
    rows = [(f"sport words {i}", "sport") for i in range(12)] + [("one lonely text", "news")]
    path = tmp_path / "train.csv"
    path.write_text("text,label\n" + "".join(f"{t},{c}\n" for t, c in rows), "utf-8")
    with pytest.raises(KerasformerError) as caught:
        from_csv(path)
    assert str(caught.value).startswith("class 'news' has only one example (distinct text)")
    assert "[1]" not in str(caught.value)
