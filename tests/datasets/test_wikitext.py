import re

import pytest

from kerasformer.datasets import LanguageModelData, load_wikitext2
from kerasformer.errors import KerasformerError

TRAIN = " \n = Title = \n \n the cat sat on the mat . \n the dog @-@ cat <unk> \n"
# Written out by hand from TRAIN: each line's words, then <eos>; blank lines give <eos> alone.
TRAIN_TOKENS = (
    ("<eos>",)
    + ("=", "Title", "=", "<eos>")
    + ("<eos>",)
    + ("the", "cat", "sat", "on", "the", "mat", ".", "<eos>")
    + ("the", "dog", "@-@", "cat", "<unk>", "<eos>")
)
# No final newline: the last line still ends with <eos>.
VALID = "a b\n\nc"
VALID_TOKENS = ("a", "b", "<eos>", "<eos>", "c", "<eos>")
# Windows line ends, a tab between words, and U+2028, which splits words but not lines.
TEST = "x\r\ny\tz\u2028w\n"
TEST_TOKENS = ("x", "<eos>", "y", "z", "w", "<eos>")


def write_wikitext(folder, train=TRAIN, valid=VALID, test=TEST):
    folder.mkdir(exist_ok=True)
    for name, text in [("train", train), ("valid", valid), ("test", test)]:
        (folder / f"wiki.{name}.tokens").write_text(text, encoding="utf-8", newline="")
    return folder


def pytorch_word_language_model_tokens(path):
    """Tokens as PyTorch's examples/word_language_model/data.py reads them."""
    tokens = []
    with open(path, encoding="utf8") as f:
        for line in f:
            tokens += line.split() + ["<eos>"]
    return tuple(tokens)


def test_tokens_are_words_of_every_line_followed_by_eos(tmp_path):
    data = load_wikitext2(write_wikitext(tmp_path / "wikitext-2"))
    assert isinstance(data, LanguageModelData)
    assert data.splits == {"train": TRAIN_TOKENS, "validation": VALID_TOKENS, "test": TEST_TOKENS}
    assert data.sizes() == {"train": 20, "validation": 6, "test": 6}


def test_tokens_match_the_pytorch_example_reader(tmp_path):
    folder = write_wikitext(tmp_path / "wikitext-2")
    data = load_wikitext2(folder)
    for split, name in [("train", "train"), ("validation", "valid"), ("test", "test")]:
        expected = pytorch_word_language_model_tokens(folder / f"wiki.{name}.tokens")
        assert data.splits[split] == expected


def test_vocabulary_is_by_frequency_then_first_appearance(tmp_path):
    data = load_wikitext2(write_wikitext(tmp_path / "wikitext-2"))
    # Counts: <eos> 4, the 3, then "=" and "cat" 2 each ("=" appears first), then the
    # words seen once in the order they appear.
    assert data.vocabulary() == [
        "<eos>",
        "the",
        "=",
        "cat",
        "Title",
        "sat",
        "on",
        "mat",
        ".",
        "dog",
        "@-@",
        "<unk>",
    ]


def test_vocabulary_comes_from_the_train_split_only(tmp_path):
    data = load_wikitext2(write_wikitext(tmp_path / "wikitext-2", valid="zebra zebra zebra\n"))
    assert "zebra" not in data.vocabulary()


def test_a_missing_file_names_its_path_and_data_dir(tmp_path):
    folder = write_wikitext(tmp_path / "wikitext-2")
    (folder / "wiki.test.tokens").unlink()
    missing = re.escape(str(folder / "wiki.test.tokens"))
    with pytest.raises(KerasformerError, match=missing + " is missing; pass --data-dir"):
        load_wikitext2(folder)
