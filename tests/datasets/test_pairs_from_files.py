"""Your own sentence pairs: TSV, CSV and JSON Lines become the data translation trains on."""

import json

import pytest

from kerasformer.datasets import from_sentence_pairs
from kerasformer.errors import KerasformerError


def write_tsv(path, rows, header="English\tFrench"):
    path.write_text(header + "\n" + "".join("\t".join(row) + "\n" for row in rows), "utf-8")
    return path


def numbered_pairs(count, translations=1):
    return [(f"go {i}.", f"va {i} ({t}).") for i in range(count) for t in range(translations)]


def pairs_of(data, split):
    part = data.splits[split]
    return sorted(zip(part.sources.tolist(), part.targets.tolist(), strict=True))


def test_column_names_are_the_languages_and_every_pair_lands_in_one_split(tmp_path):
    rows = numbered_pairs(60, translations=2)
    data = from_sentence_pairs(
        write_tsv(tmp_path / "eng-fra.tsv", rows), source_column="English", target_column=1
    )
    languages = (data.source_language, data.target_language)
    assert (data.name, *languages) == ("eng-fra", "English", "French")
    together = sorted(p for split in ("train", "validation", "test") for p in pairs_of(data, split))
    assert together == sorted(rows)
    # Both translations of a sentence share its split: no test source is seen in training.
    sources = {split: set(data.splits[split].sources) for split in data.splits}
    assert not sources["train"] & sources["test"]
    assert not sources["train"] & sources["validation"]
    assert data.sizes() == {"train": 96, "validation": 12, "test": 12}


def test_files_given_for_validation_and_test_are_used_whole(tmp_path):
    train = write_tsv(tmp_path / "train.tsv", numbered_pairs(20))
    validation = write_tsv(tmp_path / "valid.tsv", [("hello  there", "salut")])
    test = write_tsv(tmp_path / "test.tsv", [("bye", "au revoir"), ("yes", "oui")])
    data = from_sentence_pairs(
        train, validation, test, source_column="English", target_column="French"
    )
    assert pairs_of(data, "train") == sorted(numbered_pairs(20))
    assert pairs_of(data, "validation") == [("hello there", "salut")]
    assert pairs_of(data, "test") == [("bye", "au revoir"), ("yes", "oui")]


def test_json_lines_pairs_with_default_columns(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        "".join(json.dumps({"source": s, "target": t}) + "\n" for s, t in numbered_pairs(30)),
        "utf-8",
    )
    data = from_sentence_pairs(path)
    assert (data.source_language, data.target_language) == ("source", "target")
    assert sum(data.sizes().values()) == 30


@pytest.mark.parametrize(
    "content, options, phrases",
    [
        (
            "English\tFrench\ngo.\tva.\n",
            {"source_column": "German"},
            ["has no column 'German' (source_column)", "'English', 'French'"],
        ),
        (
            "English\tFrench\ngo.\t \n",
            {"source_column": 0, "target_column": 1},
            ["p.tsv:2: the target sentence ('French') is empty"],
        ),
        (
            "English\tFrench\ngo.\tva.\tx\n",
            {"source_column": 0, "target_column": 1},
            ["p.tsv:2: 3 fields, but the header has 2"],
        ),
        (
            "English\tFrench\ngo.\tva.\n",
            {"source_column": 0, "target_column": "English"},
            ["the source and target columns are both 'English'"],
        ),
        (
            "English\tFrench\ngo.\tva.\n",
            {"source_column": 0, "target_column": 1},
            ["p: the train split would have no pairs; give more pairs, or --validation-file"],
        ),
    ],
)
def test_bad_pairs_are_refused_in_one_line_naming_the_place(tmp_path, content, options, phrases):
    path = tmp_path / "p.tsv"
    path.write_text(content, "utf-8")
    with pytest.raises(KerasformerError) as error:
        from_sentence_pairs(path, **options)
    message = str(error.value)
    assert "\n" not in message
    for phrase in phrases:
        assert phrase in message


def test_a_json_line_without_the_target_names_the_line(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"source": "go.", "target": "va."}\n{"source": "hi."}\n', "utf-8")
    with pytest.raises(KerasformerError, match=r"pairs.jsonl:2: the target sentence .* missing"):
        from_sentence_pairs(path)
