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
"""Where `load_wikitext2` downloads WikiText-2 (v1, tokenised) from without a
``data_dir``: a zip holding ``wikitext-2/wiki.{train,valid,test}.tokens``."""
END_OF_LINE = "<eos>"
FILES = {
    "train": "wiki.train.tokens",
    "validation": "wiki.valid.tokens",
    "test": "wiki.test.tokens",
}


@dataclass(frozen=True)
class LanguageModelData(Splits):
    """A language-modelling dataset: each split's tokens as one flat sequence.

    What `load_wikitext2` and `from_text_files` return. ``sizes()`` counts tokens, and
    ``vocabulary()`` lists the train split's distinct tokens, most frequent first (the
    real WikiText-2: 2,088,628 / 217,646 / 245,569 tokens, 33,278 words).

    Args:
        name: The dataset's name in messages and export names (``wikitext2``).
        splits: The ``train``, ``validation`` and ``test`` tokens by name, each a tuple
            of strings in text order (every line ending in ``<eos>``).

    Examples:
        >>> data = LanguageModelData("tiny", {"train": ("a", "b", "a", "<eos>"),
        ...                                   "validation": ("a", "<eos>"), "test": ("b", "<eos>")})
        >>> data.sizes()
        {'train': 4, 'validation': 2, 'test': 2}
        >>> data.vocabulary()
        ['a', 'b', '<eos>']
    """

    name: str
    splits: dict[str, tuple[str, ...]]

    def vocabulary(self) -> list[str]:
        """The distinct tokens of the train split, most frequent first.

        Ties keep the order in which the tokens first appear, so the list never changes.
        """
        return [token for token, _ in Counter(self.splits["train"]).most_common()]


def load_wikitext2(data_dir: str | Path | None = None) -> LanguageModelData:
    r"""Load WikiText-2 (v1, tokenised) from a folder, or download it.

    Tokens are those of PyTorch's word_language_model example: every line of a file,
    blank ones included, is split on whitespace and followed by ``<eos>``. The real files
    give 2,088,628 / 217,646 / 245,569 tokens and a train vocabulary of 33,278.

    Args:
        data_dir: A folder with ``wiki.train.tokens``, ``wiki.valid.tokens`` and
            ``wiki.test.tokens`` (UTF-8). Without it, the zip at `WIKITEXT2_URL` is
            downloaded into the Keras cache and read from there.

    Returns:
        The train, validation and test tokens, named ``wikitext2``.

    Raises:
        KerasformerError: A folder without one of the three files, a file that is not
            UTF-8, or no ``data_dir`` and no network.

    Examples:
        >>> from pathlib import Path
        >>> folder = Path("wikitext-tiny"); folder.mkdir(exist_ok=True)
        >>> for split in ("train", "valid", "test"):
        ...     text = " \n = Valkyria Chronicles III = \n"  # as the real files begin
        ...     _ = (folder / f"wiki.{split}.tokens").write_text(text)
        >>> data = load_wikitext2(folder)
        >>> data.splits["train"]
        ('<eos>', '=', 'Valkyria', 'Chronicles', 'III', '=', '<eos>')
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
