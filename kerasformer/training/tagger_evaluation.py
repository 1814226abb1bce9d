"""A tagger export measured as users meet it: entity scores on tokenised sentences and on
the same sentences as raw text.

The token-level scores read the file's own words (`load_tagger`, then `predict_tags`, each
word its first piece's tag); the raw-text scores send each sentence, its words joined by
spaces, to the export's ``serving_default`` (`ExportedTagger`, TensorFlow alone) and
match the entity offsets it returns against the file's (`offset_scores`). The two differ
where the export reads raw text otherwise than the file splits it.
"""

from __future__ import annotations

from pathlib import Path

from kerasformer.datasets.tagged_sentences import TaggedSentences
from kerasformer.training.tagging_metrics import entity_offsets, entity_scores, offset_scores


def tagger_metrics(export_dir: str | Path, part: TaggedSentences, batch_size: int = 64) -> dict:
    """``{"sentences", "token_level", "raw_text"}``: entity precision, recall and F1,
    overall and per type, of the tagger at ``export_dir`` on ``part``.

    Example:

    >>> part, _ = read_tagged_file("valid.txt")
    >>> tagger_metrics("saved_models/conll2003-rnn", part)["raw_text"]["f1"]
    0.8779...
    """
    from kerasformer.loading.exported_tagger import ExportedTagger
    from kerasformer.loading.tagger import load_tagger

    words = [list(sentence) for sentence in part.tokens]
    tags = [list(sentence) for sentence in part.tags]
    texts = [" ".join(sentence) for sentence in words]
    records = ExportedTagger(export_dir).tag(texts, batch_size)
    found = [{(e["start"], e["end"], e["type"]) for e in r["entities"]} for r in records]
    gold = [entity_offsets(w, t) for w, t in zip(words, tags, strict=True)]
    predicted = load_tagger(export_dir).predict_tags(words, batch_size=batch_size)
    return {
        "sentences": len(words),
        "token_level": entity_scores(tags, predicted),
        "raw_text": offset_scores(gold, found),
    }
