"""Read a tagger export back: the `EntityTagger` that `write_tagger` wrote."""

from __future__ import annotations

from pathlib import Path

from kerasformer.files.export_files import require_handle_present, require_intact_export
from kerasformer.files.export_kind import TAGGER
from kerasformer.files.text_files import read_settings
from kerasformer.loading.keras_model import load_keras_model

SETTINGS_FILE = "tagger.json"


def load_tagger(directory: str | Path):
    """The `EntityTagger` that `write_tagger` exported to ``directory``: a `SequenceTagger`
    from scratch, or a `BertTagger`, whose preprocess model must still be where it was.

    Args:
        directory: A directory ``kerasformer train --task ner`` wrote, checked whole
            before it is loaded.

    Returns:
        The tagger, with its Keras model, tag names and decoding.

    Raises:
        KerasformerError: ``directory`` is not a tagger export, one of its files is
            missing or damaged, or a BERT tagger's preprocess model is no longer there.

    Examples:
        >>> tagger = load_tagger("saved_models/conll2003-rnn")
        >>> type(tagger).__name__, tagger.tag_names[0]
        ('SequenceTagger', 'O')
        >>> tagger.predict_tags([["Mary", "lives", "in", "Berlin", "."]])
        [[...]]
    """
    directory = require_intact_export(directory, TAGGER)
    settings = read_settings(directory, SETTINGS_FILE, "tagger", "ner")
    settings.pop("model", None)
    if settings.pop("kind", "words") == "bert":
        from kerasformer.models.bert_tagger import BertTagger
        from kerasformer.models.question_answerer import load_preprocess

        preprocess = settings.pop("preprocess")
        require_handle_present(directory, "preprocess", preprocess)
        return BertTagger(load_keras_model(directory), load_preprocess(preprocess),
                          preprocess_handle=preprocess, **settings)  # fmt: skip
    from kerasformer.models.sequence_tagger import SequenceTagger

    return SequenceTagger(load_keras_model(directory), **settings)
