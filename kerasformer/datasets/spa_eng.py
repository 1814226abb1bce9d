"""English-Spanish sentence pairs from Tatoeba, via manythings.org, for translation.

The file is the one the Keras example "English-to-Spanish translation with a
sequence-to-sequence Transformer" downloads: ``spa-eng/spa.txt`` inside ``SPA_ENG_URL``,
one ``English<TAB>Spanish`` pair per line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kerasformer.backend import keras
from kerasformer.datasets.grouped_split import SPLITS, grouped_split, require_fractions
from kerasformer.datasets.sentence_pairs import SentencePairs, TranslationData
from kerasformer.datasets.wikitext import text_lines
from kerasformer.errors import KerasformerError
from kerasformer.files.text_files import read_utf8_text
from kerasformer.network import require_reachable

SPA_ENG_URL = "http://storage.googleapis.com/download.tensorflow.org/data/spa-eng.zip"
"""Where `load_spa_eng` downloads the pairs from without a ``data_dir``: a zip holding
``spa-eng/spa.txt``, the file of the Keras English-to-Spanish translation example."""
FILE_NAME = "spa.txt"


def load_spa_eng(
    data_dir: str | Path | None = None,
    validation_fraction: float = 0.1,
    test_fraction: float = 0.1,
    split_seed: int = 0,
) -> TranslationData:
    r"""Load English-Spanish pairs split into train, validation and test.

    The split is grouped by English sentence: all translations of one English sentence
    land in the same split, so no test sentence is seen in training. Pairs are shuffled
    inside each split. The 118,964 pairs of the real file split, with seed 0, into
    95,171 / 11,895 / 11,898 pairs.

    Args:
        data_dir: A folder holding ``spa.txt``: one ``English<TAB>Spanish`` pair per line
            (a third, attribution column is ignored). Without it, the zip at
            `SPA_ENG_URL` is downloaded into the Keras cache and read from there.
        validation_fraction: Part of the pairs held out for validation, approximately;
            with ``test_fraction``, each between 0 and 1 and summing to less than 1.
        test_fraction: Part of the pairs held out for test, approximately.
        split_seed: Seed of the split and of the order inside each split; the same seed
            always gives the same splits.

    Returns:
        The three splits, with source language ``English`` and target ``Spanish``.

    Raises:
        KerasformerError: A folder without ``spa.txt``, a line that is not a pair,
            fractions out of range, a split left empty, or no ``data_dir`` and no network.

    Examples:
        >>> from pathlib import Path
        >>> english = "Go. Hi. Run! Who? Wow! Fire! Help! Stop! Wait! Hello!".split()
        >>> spanish = "Ve. Hola. Corre. ¿Quién? ¡Órale! ¡Fuego! ¡Ayuda! ¡Para! ¡Espera!"
        >>> spanish = [*spanish.split(), "Hola."]
        >>> lines = [f"{en}\t{es}\n" for en, es in zip(english, spanish)]
        >>> Path("spa_eng_tiny").mkdir(exist_ok=True)
        >>> _ = Path("spa_eng_tiny", "spa.txt").write_text("".join(lines), encoding="utf-8")
        >>> data = load_spa_eng("spa_eng_tiny")
        >>> data.sizes(), data.source_language, data.target_language
        ({'train': 8, 'validation': 1, 'test': 1}, 'English', 'Spanish')
    """
    require_fractions(validation_fraction, test_fraction)
    root = Path(data_dir) if data_dir is not None else download_spa_eng()
    path = root / FILE_NAME
    pairs = read_pairs(path)
    splits = split_by_source(pairs, validation_fraction, test_fraction, split_seed)
    for name in SPLITS:
        if len(splits[name]) == 0:
            raise KerasformerError(
                f"{path} has {len(pairs)} pairs, too few for a {validation_fraction:.0%} "
                f"validation and {test_fraction:.0%} test split: the {name} split would be "
                "empty; give more pairs or change the fractions."
            )
    return TranslationData(
        name="spa_eng", source_language="English", target_language="Spanish", splits=splits
    )


def download_spa_eng() -> Path:
    """Download and extract the zip into the Keras cache; the folder holding ``spa.txt``."""
    require_reachable(
        SPA_ENG_URL, "spa-eng.zip", f"pass --data-dir with a folder holding {FILE_NAME}."
    )
    archive = keras.utils.get_file("spa-eng.zip", origin=SPA_ENG_URL, extract=True)
    return Path(archive).parent / "spa-eng"


def read_pairs(path: Path) -> SentencePairs:
    """The ``English<TAB>Spanish`` pairs of ``path`` in file order.

    A third column (the Tatoeba attribution of newer manythings.org files) is ignored;
    blank lines are skipped.
    """
    if not path.is_file():
        raise KerasformerError(
            f"{path} is missing; pass --data-dir with a folder holding {FILE_NAME} "
            "(one English<TAB>Spanish pair per line)."
        )
    sources, targets = [], []
    for number, line in enumerate(text_lines(read_utf8_text(path)), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if not 2 <= len(fields) <= 3:
            raise KerasformerError(
                f"{path}:{number}: expected English<TAB>Spanish (and an optional attribution), "
                f"got {len(fields)} tab-separated field(s)."
            )
        english, spanish = fields[0].strip(), fields[1].strip()
        if not english or not spanish:
            side = "English" if not english else "Spanish"
            raise KerasformerError(
                f"{path}:{number}: the {side} sentence is empty; give both sides of the pair."
            )
        sources.append(english)
        targets.append(spanish)
    if not sources:
        raise KerasformerError(
            f"{path} has no sentence pairs; it needs one English<TAB>Spanish pair per line."
        )
    return SentencePairs(np.array(sources, dtype=object), np.array(targets, dtype=object))


def split_by_source(
    pairs: SentencePairs, validation_fraction: float, test_fraction: float, seed: int
) -> dict[str, SentencePairs]:
    """Train, validation and test splits in which every source sentence has one split."""
    indices = grouped_split(pairs.sources, validation_fraction, test_fraction, seed)
    return {
        name: SentencePairs(pairs.sources[chosen], pairs.targets[chosen])
        for name, chosen in indices.items()
    }
