"""Use a tagger export through its SavedModel signature, as TF Serving would."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kerasformer.backend import tf
from kerasformer.files.export_kind import TAGGER
from kerasformer.files.text_files import read_settings
from kerasformer.loading.exported_classifier import INPUT_NAME, utf8_texts
from kerasformer.loading.serving_function import load_checked_serving_function
from kerasformer.loading.tagger import SETTINGS_FILE
from kerasformer.models.iob_tags import tag_type


class ExportedTagger:
    """A tagger export, run by its own ``serving_default`` signature.

    The SavedModel splits words, runs the model, decodes the tags and reads the entities
    with their character offsets, so this needs TensorFlow alone (and TF Text's ops for
    a BERT tagger): no Keras, no TF-Hub, and not the preprocess model a BERT tagger was
    trained with. Its records are `EntityTagger.tag`'s.

    Args:
        export_dir: A directory ``kerasformer train --task ner`` wrote, checked whole
            (every file and saved value) before it is loaded.

    Raises:
        KerasformerError: ``export_dir`` is not a tagger export, or one of its files is
            missing or damaged.

    Examples:
        >>> tagger = ExportedTagger("saved_models/conll2003-rnn")
        >>> "PER" in tagger.entity_types()  # the types its tags name, sorted
        True
        >>> record = tagger.tag(["Mary lives in Berlin."])[0]
        >>> record["words"], len(record["tags"])
        (['Mary', 'lives', 'in', 'Berlin', '.'], 5)
        >>> record["entities"]  # each: text, type, start, end (character offsets), score
        [...]
    """

    def __init__(self, export_dir: str | Path):
        self.export_dir, self._serve = load_checked_serving_function(export_dir, TAGGER)
        settings = read_settings(self.export_dir, SETTINGS_FILE, "tagger", "ner")
        self.tag_names = tuple(settings["tag_names"])

    def entity_types(self) -> tuple[str, ...]:
        """The entity types its tags name (``PER`` of ``B-PER``), sorted."""
        return tuple(sorted({tag_type(tag) for tag in self.tag_names} - {None}))

    def tag(self, texts: Sequence[str], batch_size: int = 64) -> list[dict]:
        """Words, tags and entities (with character offsets and scores) of raw texts."""
        encoded = utf8_texts(texts, "tagging")
        records = []
        for first in range(0, len(encoded), batch_size):
            batch = tf.constant(encoded[first : first + batch_size], tf.string)
            served = {
                key: value.numpy() for key, value in self._serve(**{INPUT_NAME: batch}).items()
            }
            records += [text_record(served, row) for row in range(len(batch))]
        return records


def text_record(served: dict, row: int) -> dict:
    """One text's record from the signature's padded outputs (words and tags are never
    empty strings, so ``""`` is padding)."""
    entities = [
        {
            "text": served["entity_texts"][row][i].decode("utf-8"),
            "type": served["entity_types"][row][i].decode("utf-8"),
            "start": int(served["entity_starts"][row][i]),
            "end": int(served["entity_ends"][row][i]),
            "score": float(served["entity_scores"][row][i]),
        }
        for i in range(int(served["entity_counts"][row]))
    ]
    return {
        "words": [word.decode("utf-8") for word in served["words"][row] if word],
        "tags": [tag.decode("utf-8") for tag in served["tags"][row] if tag],
        "entities": entities,
    }
