"""WikiText-2: Wikipedia articles, already tokenised, for word-level language modelling."""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kerasformer.backend import keras
from kerasformer.datasets.splits import Splits
from kerasformer.errors import KerasformerError
from kerasformer.files.text_files import read_utf8_text
from kerasformer.network import require_reachable

WIKITEXT2_URL = "https://wikitext.smerity.com/wikitext-2-v1.zip"
END_OF_LINE = "<eos>"
FILES = {
    "train": "wiki.train.tokens",
    "validation": "wiki.valid.tokens",
    "test": "wiki.test.tokens",
}


@dataclass(frozen=True)
class LanguageModelData(Splits):
    """A language-modelling dataset: each split's tokens as one flat sequence.

    Example:

    >>> data = load_wikitext2("../shared/data/wikitext-2")
    >>> data.sizes()
    {'train': 2088628, 'validation': 217646, 'test': 245569}
    >>> len(data.vocabulary())
    33278
    """

    name: str
    splits: dict[str, tuple[str, ...]]

    def vocabulary(self) -> list[str]:
        """The distinct tokens of the train split, most frequent first.

        Ties keep the order in which the tokens first appear, so the list never changes.
        """
        return [token for token, _ in Counter(self.splits["train"]).most_common()]


def load_wikitext2(data_dir: str | Path | None = None) -> LanguageModelData:
    """Load WikiText-2 (v1, tokenised) from a folder, or download it.

    Args:
        data_dir: A folder with ``wiki.train.tokens``, ``wiki.valid.tokens`` and
            ``wiki.test.tokens``. Without it, the zip at ``WIKITEXT2_URL`` is downloaded
            into the Keras cache and read from there.

    Tokens are those of PyTorch's word_language_model example: every line of a file,
    blank ones included, is split on whitespace and followed by ``<eos>``. The real files
    give 2,088,628 / 217,646 / 245,569 tokens and a train vocabulary of 33,278.

    Example:

    >>> data = load_wikitext2("../shared/data/wikitext-2")
    >>> data.splits["train"][:5]
    ('<eos>', '=', 'Valkyria', 'Chronicles', 'III')
    """
    root = Path(data_dir) if data_dir is not None else download_wikitext2()
    paths = {split: root / name for split, name in FILES.items()}
    for path in paths.values():
        if not path.is_file():
            raise KerasformerError(
                f"{path} is missing; pass --data-dir with a folder holding "
                f"{', '.join(FILES.values())}."
            )
    return LanguageModelData(
        name="wikitext2", splits={split: read_tokens(path) for split, path in paths.items()}
    )


def download_wikitext2() -> Path:
    """Download and extract the WikiText-2 zip into the Keras cache; the extracted folder."""
    require_reachable(
        WIKITEXT2_URL, "WikiText-2", f"pass --data-dir with {', '.join(FILES.values())}."
    )
    archive = keras.utils.get_file("wikitext-2-v1.zip", origin=WIKITEXT2_URL, extract=True)
    return Path(archive).parent / "wikitext-2"


def read_tokens(path: Path) -> tuple[str, ...]:
    """Every line's whitespace-separated tokens followed by ``<eos>``, as one sequence."""
    return line_tokens(text_lines(read_utf8_text(path)))


def line_tokens(lines) -> tuple[str, ...]:
    """Each line's whitespace-separated tokens followed by ``<eos>``, as one sequence."""
    tokens = []
    for line in lines:
        # Interned: two million tokens share the strings of a 33,278-word vocabulary.
        tokens.extend(map(sys.intern, line.split()))
        tokens.append(END_OF_LINE)
    return tuple(tokens)


def text_lines(text: str) -> list[str]:
    """The lines of ``text`` as Python reads a text file: split at ``\\n``, ``\\r\\n`` or ``\\r``.

    Unlike ``str.splitlines``, characters such as U+2028 stay inside their line, and a
    final newline ends the last line rather than starting an empty one.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return lines[:-1] if lines[-1] == "" else lines
