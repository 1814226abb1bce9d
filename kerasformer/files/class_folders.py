"""Texts filed by class: a folder with one sub-folder of ``.txt`` files per class.

The layout of ``keras.utils.text_dataset_from_directory``: the sub-folder names, sorted,
are the class names, and every ``.txt`` file below one is an example of that class.
"""

from __future__ import annotations

from pathlib import Path

from tqdm.auto import tqdm

from kerasformer.errors import KerasformerError
from kerasformer.files.text_files import read_utf8_text


def read_class_folders(root: str | Path) -> dict[str, list[tuple[Path, str]]]:
    """Each class name with its ``(path, text)`` examples, in sorted order.

    Hidden folders and files (``.git``, ``.ipynb_checkpoints``) are no classes; a
    folder with fewer than two classes is refused, as is a file that is not UTF-8.

    Example:

    >>> read_class_folders("reviews")  # reviews/negative/1.txt, reviews/positive/2.txt
    {'negative': [(PosixPath('reviews/negative/1.txt'), '...')], 'positive': [...]}
    """
    root = Path(root)
    if not root.is_dir():
        raise KerasformerError(
            f"{root} is not a folder; give a folder with one sub-folder of .txt files per class."
        )
    classes = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if len(classes) < 2:
        found = f"only the class folder {classes[0].name!r}" if classes else "no class folders"
        raise KerasformerError(
            f"{root} has {found}; give one sub-folder of .txt files per class, at least two "
            "(e.g. reviews/negative/*.txt and reviews/positive/*.txt)."
        )
    files = [
        (folder.name, path)
        for folder in classes
        for path in sorted(folder.rglob("*.txt"))
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts)
    ]
    examples: dict[str, list[tuple[Path, str]]] = {folder.name: [] for folder in classes}
    for name, path in tqdm(files, desc=f"Reading {root}", unit=" files", leave=False, disable=None):
        examples[name].append((path, read_utf8_text(path)))
    empty = [name for name, found in examples.items() if not found]
    if empty:
        raise KerasformerError(
            f"{root / empty[0]} has no .txt files, so class {empty[0]!r} has no examples; "
            "put its texts there, or remove the folder."
        )
    return examples
