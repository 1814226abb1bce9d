"""Your own text for a language model: files become token streams, split by paragraph."""

import pytest

from kerasformer.datasets import from_text_files, load_wikitext2
from kerasformer.errors import KerasformerError

SPLITS = ("train", "validation", "test")


def paragraphs_text(count, lines_each=3):
    return "\n".join("".join(f"p{p} line {i} .\n" for i in range(lines_each)) for p in range(count))


def expected_tokens(lines):
    """WikiText's rule, written out: each line's words, then <eos>."""
    return tuple(token for line in lines for token in [*line.split(), "<eos>"])


def test_one_file_is_split_in_whole_paragraphs_keeping_the_texts_order(tmp_path):
    path = tmp_path / "novel.txt"
    path.write_text(paragraphs_text(40), "utf-8")
    data = from_text_files(path)
    assert data.name == "novel"
    words = {split: [t for t in data.splits[split] if t != "<eos>"] for split in SPLITS}
    paragraphs = {split: {w for w in words[split] if w.startswith("p")} for split in SPLITS}
    assert sum(len(p) for p in paragraphs.values()) == 40  # no paragraph in two splits
    assert len(paragraphs["test"]) == len(paragraphs["validation"]) == 4
    for split in SPLITS:
        numbers = [int(word[1:]) for word in words[split] if word.startswith("p")]
        assert numbers == sorted(numbers)  # in the text's order
        # Every paragraph arrives whole: its three lines, in order.
        for number in set(numbers):
            lines = [words[split][i + 2] for i, w in enumerate(words[split]) if w == f"p{number}"]
            assert lines == ["0", "1", "2"]


def test_files_per_split_are_tokenised_like_wikitext(tmp_path):
    texts = {"train": "a b\n\nc d e\n", "validation": "b a\n", "test": "e  c\nd\n"}
    paths = {}
    for split, text in texts.items():
        paths[split] = tmp_path / f"{split}.txt"
        paths[split].write_text(text, "utf-8")
    data = from_text_files(paths["train"], paths["validation"], paths["test"])
    for split, text in texts.items():
        assert data.splits[split] == expected_tokens(text.splitlines())


def test_it_reads_wikitext_files_as_the_wikitext_loader_does(tmp_path):
    names = {"train": "wiki.train.tokens", "validation": "wiki.valid.tokens",
             "test": "wiki.test.tokens"}  # fmt: skip
    for split, name in names.items():
        (tmp_path / name).write_text(f" = {split} = \n\n the <unk> cat \n", "utf-8")
    mine = from_text_files(*(tmp_path / names[split] for split in SPLITS))
    assert mine.splits == load_wikitext2(tmp_path).splits


def test_a_folder_of_text_files_is_one_text_in_sorted_order(tmp_path):
    (tmp_path / "books" / "b").mkdir(parents=True)
    (tmp_path / "books" / "b" / "two.txt").write_text("second\n", "utf-8")
    (tmp_path / "books" / "a.txt").write_text("first\n", "utf-8")
    (tmp_path / "books" / "notes.md").write_text("skipped\n", "utf-8")
    (tmp_path / "v.txt").write_text("v\n", "utf-8")
    data = from_text_files(tmp_path / "books", tmp_path / "v.txt", tmp_path / "v.txt")
    assert data.name == "books"
    assert data.splits["train"] == ("first", "<eos>", "second", "<eos>")


def test_a_text_without_blank_lines_is_dealt_line_by_line(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("".join(f"w{i}\n" for i in range(50)), "utf-8")
    data = from_text_files(path, validation_fraction=0.2, test_fraction=0.2)
    assert {split: size // 2 for split, size in data.sizes().items()} == {
        "train": 30, "validation": 10, "test": 10
    }  # fmt: skip


@pytest.mark.parametrize(
    "content, phrases",
    [
        (b"", ["holds no text"]),
        (b"caf\xe9\n", ["t.txt:1: not UTF-8 (byte 0xe9)", "save the file as UTF-8"]),
        (b"only one line\n", ["t: the train split would have no words; give more paragraphs"]),
    ],
)
def test_unreadable_text_is_refused_in_one_line(tmp_path, content, phrases):
    path = tmp_path / "t.txt"
    path.write_bytes(content)
    with pytest.raises(KerasformerError) as error:
        from_text_files(path)
    assert "\n" not in str(error.value)
    for phrase in phrases:
        assert phrase in str(error.value)


def test_a_missing_path_or_an_empty_folder_names_the_fix(tmp_path):
    with pytest.raises(KerasformerError, match="does not exist; give a UTF-8 text file"):
        from_text_files(tmp_path / "nope.txt")
    (tmp_path / "empty").mkdir()
    with pytest.raises(KerasformerError, match="holds no .txt files"):
        from_text_files(tmp_path / "empty")


def test_several_blank_lines_end_one_paragraph():
    from kerasformer.datasets.corpus_from_files import paragraph_numbers

    lines = []
    for number in range(10):
        lines += [f"p{number} a", f"p{number} b", "", ""]
    numbers = paragraph_numbers(lines)
    assert numbers == [n for n in range(10) for _ in range(4)]
