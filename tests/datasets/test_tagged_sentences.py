"""CoNLL and JSON Lines tagged sentences: columns, documents, IOB1, and one-line errors."""

import json

import pytest

from kerasformer.datasets.tagged_sentences import (
    from_tagged_files,
    load_conll2003,
    read_tagged_file,
)
from kerasformer.errors import KerasformerError
from tests.helpers.data import write_conll

FOUR_COLUMNS = """-DOCSTART- -X- -X- O

EU NNP B-NP B-ORG
rejects VBZ B-VP O
German JJ B-NP B-MISC

Peter NNP B-NP B-PER
Blackburn NNP I-NP I-PER
"""


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_four_columns_give_the_first_and_the_last(tmp_path):
    part, converted = read_tagged_file(write(tmp_path / "train.txt", FOUR_COLUMNS))
    assert [list(words) for words in part.tokens] == [["EU", "rejects", "German"],
                                                      ["Peter", "Blackburn"]]  # fmt: skip
    assert [list(tags) for tags in part.tags] == [["B-ORG", "O", "B-MISC"], ["B-PER", "I-PER"]]
    assert converted == []


def test_crlf_two_columns_and_documents(tmp_path):
    text = "-DOCSTART- O\r\n\r\nA B-PER\r\n\r\n-DOCSTART- O\r\n\r\nB B-LOC\r\n\r\nC O\r\n"
    part, _ = read_tagged_file(write(tmp_path / "t.txt", text))
    assert [list(w) for w in part.tokens] == [["A"], ["B"], ["C"]]
    assert part.documents.tolist() == [1, 2, 2]


def test_iob1_is_converted_and_said(tmp_path):
    text = "Peter I-PER\nBlackburn I-PER\nand O\nParis I-LOC\nBerlin B-LOC\n"
    data = from_tagged_files(
        write(tmp_path / "iob1.txt", text), write(tmp_path / "v.txt", text),
        write(tmp_path / "t.txt", text),
    )  # fmt: skip
    assert list(data.splits["train"].tags[0]) == ["B-PER", "I-PER", "O", "B-LOC", "B-LOC"]
    assert any("IOB1 tags converted to IOB2" in note for note in data.notes)


def test_json_lines(tmp_path):
    lines = [{"tokens": ["Angela", "Merkel"], "tags": ["B-PER", "I-PER"]},
             {"tokens": ["in", "Bonn"], "tags": ["O", "B-LOC"]}]  # fmt: skip
    path = write(tmp_path / "train.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    part, _ = read_tagged_file(path)
    assert [list(t) for t in part.tags] == [["B-PER", "I-PER"], ["O", "B-LOC"]]


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("EU B-ORG\nrejects\n", "t.txt:2: one column ('rejects')"),
        ("EU B-ORG\nx E-ORG\n", "t.txt:2: tag 'E-ORG' is not IOB"),
        ("A I-PER\nB O\nC B-LOC\n", "t.txt:1: an I- tag starts an entity (IOB1), but line 3"),
    ],
)
def test_bad_lines_are_named_with_file_and_line(tmp_path, text, phrase):
    with pytest.raises(KerasformerError) as caught:
        read_tagged_file(write(tmp_path / "t.txt", text))
    assert phrase in str(caught.value) and "\n" not in str(caught.value)


def test_a_tag_unknown_to_train_is_refused_where_it_stands(tmp_path):
    train = write(tmp_path / "train.txt", "A B-PER\n\nB O\n")
    valid = write(tmp_path / "valid.txt", "A B-PER\n\nB B-GPE\n")
    with pytest.raises(KerasformerError, match=r"valid.txt:3: tag 'B-GPE' is not in the training"):
        from_tagged_files(train, valid, valid)


def test_held_out_splits_keep_documents_whole(tmp_path):
    blocks = []
    for document in range(20):
        blocks.append("-DOCSTART- O\n")
        blocks += [f"w{document} B-PER\nx O\n" for _ in range(5)]
    data = from_tagged_files(write(tmp_path / "train.txt", "\n".join(blocks)), split_seed=3)
    documents = {s: set(p.documents.tolist()) for s, p in data.splits.items()}
    assert sum(len(p) for p in data.splits.values()) == 100
    assert not documents["train"] & documents["validation"]
    assert not documents["train"] & documents["test"]
    assert not documents["validation"] & documents["test"]


def test_conll2003_reports_valid_as_test_when_there_is_no_test_file(tmp_path):
    blocks = "".join(f"-DOCSTART- O\n\nw{i} B-PER\n\n" for i in range(30))
    write(tmp_path / "train.txt", blocks)
    write(tmp_path / "valid.txt", "Paris B-PER\n\nBonn B-PER\n")
    data = load_conll2003(tmp_path)
    assert [list(w) for w in data.splits["test"].tokens] == [["Paris"], ["Bonn"]]
    assert len(data.splits["validation"]) + len(data.splits["train"]) == 30
    assert "official development split" in data.notes[0]
    write(tmp_path / "test.txt", "Rome B-PER\n")
    data = load_conll2003(tmp_path)
    assert [list(w) for w in data.splits["validation"].tokens] == [["Paris"], ["Bonn"]]
    assert [list(w) for w in data.splits["test"].tokens] == [["Rome"]]


def test_the_served_words_split_each_word_as_raw_text_is_split_and_carry_its_tag(tmp_path):
    from kerasformer.datasets.tagged_sentences import from_tagged_files

    train = write_conll(tmp_path / "train.txt", [
        (["U.S.", "troops", "left"], ["B-LOC", "O", "O"]),
        (["Ada", "met", "O'Neil", "."], ["B-PER", "O", "B-PER", "O"]),
        (["\u200b"], ["O"]),  # nothing the export would read: the sentence goes
    ])  # fmt: skip
    data = from_tagged_files(train, train, train)
    served = data.as_served_words()
    assert served.splits["train"].tokens.tolist() == [
        ("U", ".", "S", ".", "troops", "left"), ("Ada", "met", "O", "'", "Neil", "."),
    ]  # fmt: skip
    assert served.splits["train"].tags.tolist() == [
        ("B-LOC", "I-LOC", "I-LOC", "I-LOC", "O", "O"),
        ("B-PER", "O", "B-PER", "I-PER", "I-PER", "O"),
    ]
    # The file has no I- tag; its pieces do, so the tag set grows to hold them.
    assert data.tag_names == ("O", "B-LOC", "B-PER")
    assert served.tag_names == ("O", "B-LOC", "I-LOC", "B-PER", "I-PER")
    assert "train: 3 of 8 words (37.5%) split as raw text is split" in served.notes[-3]
    # Splitting served words again changes nothing.
    assert served.as_served_words() is served


def test_words_the_export_reads_whole_leave_the_data_as_it_is(tmp_path):
    from kerasformer.datasets.tagged_sentences import from_tagged_files

    train = write_conll(tmp_path / "train.txt", [(["Ada", "met", "Bob"], ["B-PER", "O", "B-PER"])])
    data = from_tagged_files(train, train, train)
    assert data.as_served_words() is data
