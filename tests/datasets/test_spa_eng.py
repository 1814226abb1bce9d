import re
from collections import Counter

import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.datasets import SentencePairs, TranslationData, load_spa_eng
from kerasformer.datasets.spa_eng import read_pairs
from kerasformer.errors import KerasformerError


def write_spa(folder, text):
    folder.mkdir(exist_ok=True)
    path = folder / "spa.txt"
    path.write_text(text, encoding="utf-8", newline="")
    return path


def grouped_corpus():
    """60 English sentences with 1 to 4 translations each (150 pairs), plus one exact copy."""
    pairs = [(f"English {i}.", f"Spanish {i}-{j}.") for i in range(60) for j in range(1 + i % 4)]
    return pairs + [pairs[7]]


def load_grouped(tmp_path, **kwargs):
    pairs = grouped_corpus()
    write_spa(tmp_path / "spa-eng", "".join(f"{en}\t{es}\n" for en, es in pairs))
    return pairs, load_spa_eng(tmp_path / "spa-eng", **kwargs)


def all_pairs(data):
    return [
        (source, target)
        for part in data.splits.values()
        for source, target in zip(part.sources, part.targets, strict=True)
    ]


def test_lines_are_stripped_blank_lines_skipped_and_the_attribution_ignored(tmp_path):
    path = write_spa(
        tmp_path / "spa-eng",
        "Go.\tVe.\n"
        "  Run!  \t ¡Corre! \tCC-BY 2.0 (France) Attribution: tatoeba.org #906328\n"
        "\n"
        "   \n"
        "Hi.\tHola.\r\n"
        "Wow!\t¡Órale!",
    )
    pairs = read_pairs(path)
    assert list(pairs.sources) == ["Go.", "Run!", "Hi.", "Wow!"]
    assert list(pairs.targets) == ["Ve.", "¡Corre!", "Hola.", "¡Órale!"]
    data = load_spa_eng(tmp_path / "spa-eng", validation_fraction=0.25, test_fraction=0.25)
    assert sorted(all_pairs(data)) == sorted(zip(pairs.sources, pairs.targets, strict=True))


def test_every_pair_is_kept_once_and_no_english_sentence_is_in_two_splits(tmp_path):
    pairs, data = load_grouped(tmp_path, validation_fraction=0.2, test_fraction=0.2)
    assert Counter(all_pairs(data)) == Counter(pairs)
    sources = {name: set(part.sources) for name, part in data.splits.items()}
    assert not sources["train"] & sources["validation"]
    assert not sources["train"] & sources["test"]
    assert not sources["validation"] & sources["test"]
    # Fractions are of pairs, missed by less than one group (at most 4 pairs).
    for name, fraction in [("validation", 0.2), ("test", 0.2), ("train", 0.6)]:
        assert abs(len(data.split(name)) - fraction * len(pairs)) < 4


def test_pairs_are_shuffled_inside_each_split(tmp_path):
    pairs = grouped_corpus()[:-1]  # every Spanish sentence once, so it names its line
    write_spa(tmp_path / "spa-eng", "".join(f"{en}\t{es}\n" for en, es in pairs))
    data = load_spa_eng(tmp_path / "spa-eng")
    line_of = {target: line for line, (_, target) in enumerate(pairs)}
    for name in ("train", "validation", "test"):
        lines = [line_of[target] for target in data.split(name).targets]
        assert lines != sorted(lines)


def test_same_seed_same_split_and_another_seed_another_split(tmp_path):
    _, data = load_grouped(tmp_path, split_seed=5)
    again = load_spa_eng(tmp_path / "spa-eng", split_seed=5)
    for name, part in data.splits.items():
        np.testing.assert_array_equal(part.sources, again.splits[name].sources)
        np.testing.assert_array_equal(part.targets, again.splits[name].targets)
    other = load_spa_eng(tmp_path / "spa-eng", split_seed=6)
    assert set(other.split("test").sources) != set(data.split("test").sources)


@pytest.mark.parametrize(
    "validation_fraction, test_fraction",
    [(0, 0.1), (0.1, 0.0), (1, 0.1), (-0.1, 0.1), (0.5, 0.5), (0.6, 0.5), (True, 0.1)],
)
def test_fractions_outside_zero_to_one_or_summing_to_one_are_refused(
    tmp_path, validation_fraction, test_fraction
):
    write_spa(tmp_path / "spa-eng", "".join(f"E{i}\tS{i}\n" for i in range(50)))
    with pytest.raises(KerasformerError, match="must each be between 0 and 1 and sum to less"):
        load_spa_eng(tmp_path / "spa-eng", validation_fraction, test_fraction)


def test_too_few_pairs_for_three_splits_is_a_clear_error(tmp_path):
    write_spa(tmp_path / "spa-eng", "Go.\tVe.\nGo.\tVete.\nHi.\tHola.\n")
    with pytest.raises(KerasformerError, match="split would be empty; give more pairs"):
        load_spa_eng(tmp_path / "spa-eng")


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("Just English", "expected English<TAB>Spanish.*got 1 tab-separated field"),
        ("Hello.\t  ", "the Spanish sentence is empty"),
        (" \tHola.", "the English sentence is empty"),
        ("a\tb\tc\td", "got 4 tab-separated field"),
    ],
)
def test_a_malformed_line_is_named_by_file_and_line_number(tmp_path, bad_line, message):
    path = write_spa(tmp_path / "spa-eng", f"Go.\tVe.\n\n{bad_line}\nHi.\tHola.\n")
    with pytest.raises(KerasformerError, match=re.escape(f"{path}:3: ") + ".*" + message):
        load_spa_eng(tmp_path / "spa-eng")


def test_missing_file_names_the_path_and_data_dir(tmp_path):
    missing = re.escape(str(tmp_path / "spa.txt"))
    with pytest.raises(KerasformerError, match=missing + " is missing; pass --data-dir"):
        load_spa_eng(tmp_path)


def test_a_file_that_is_not_utf8_is_refused_with_its_line(tmp_path):
    (tmp_path / "spa.txt").write_bytes("Go.\tVe.\nYes.\tSí.\n".encode("latin-1"))
    with pytest.raises(KerasformerError, match=r"spa\.txt:2: not UTF-8"):
        load_spa_eng(tmp_path)


def test_translation_data_names_languages_and_refuses_unknown_splits(tmp_path):
    pairs, data = load_grouped(tmp_path)
    assert isinstance(data, TranslationData)
    assert (data.name, data.source_language, data.target_language) == (
        "spa_eng",
        "English",
        "Spanish",
    )
    assert set(data.sizes()) == {"train", "validation", "test"}
    assert sum(data.sizes().values()) == len(pairs)
    with pytest.raises(KerasformerError, match="unknown split 'dev'; choose one of: train"):
        data.split("dev")


def test_sentence_pairs_give_aligned_string_pairs():
    pairs = SentencePairs(
        np.array([f"en {i}" for i in range(20)], dtype=object),
        np.array([f"es {i}" for i in range(20)], dtype=object),
    )
    dataset = pairs.to_dataset()
    assert dataset.cardinality().numpy() == 20
    source, target = next(iter(dataset))
    assert source.dtype == tf.string and target.dtype == tf.string and source.shape == ()
    assert (source.numpy().decode(), target.numpy().decode()) == ("en 0", "es 0")
    assert list(pairs.head(3).targets) == ["es 0", "es 1", "es 2"]
    sample = pairs.sample(8, seed=1)
    assert len(set(sample.sources)) == 8
    assert [s.split()[1] for s in sample.sources] == [t.split()[1] for t in sample.targets]
    np.testing.assert_array_equal(pairs.sample(8, seed=1).sources, sample.sources)
    assert sorted(pairs.sample(100).sources) == sorted(pairs.sources)
    with pytest.raises(KerasformerError, match="whole number >= 1"):
        pairs.sample(0)
    with pytest.raises(ValueError, match="3 sources but 2 targets"):
        SentencePairs(np.array(["a", "b", "c"], dtype=object), np.array(["x", "y"], dtype=object))
