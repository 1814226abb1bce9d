"""A translator measured as users meet it: BLEU and chrF of its translations of a file's
source sentences, through the export's own signature where it has one.
"""

from __future__ import annotations

from pathlib import Path

from kerasformer.datasets.sentence_pairs import SentencePairs
from kerasformer.errors import KerasformerError
from kerasformer.training.translation_metrics import cased_and_lowercased_scores


def translator_metrics(export_dir: str | Path, part: SentencePairs, beam_width: int = 1) -> dict:
    """`scored_translations` of the translator at ``export_dir`` on ``part`` (greedy, or
    a beam of ``beam_width``), read through the export's signature where it has one
    (`serving_translator`).

    Example:

    >>> translator_metrics("saved_models/spa_eng-transformer", pairs)["bleu"]
    27.1...
    """
    from kerasformer.loading.exported_translator import serving_translator

    return scored_translations(serving_translator(export_dir, beam_width), part, beam_width)


def scored_translations(translator, part: SentencePairs, beam_width: int = 1) -> dict:
    """sacrebleu's BLEU and chrF, cased and lower-cased, with their signatures, of
    ``translator``'s translations of ``part`` (anything with ``maxlen``,
    ``source_lengths(texts)`` and ``translate(texts, beam_width)``). A source sentence it
    cannot read (no word, or more than its window) is skipped and counted, as
    ``kerasformer translate`` reports it.
    """
    lengths = translator.source_lengths(list(part.sources))
    readable = [i for i, length in enumerate(lengths) if 0 < length <= translator.maxlen]
    if not readable:
        raise KerasformerError(
            f"none of the {len(part)} source sentences fits the translator (no word it "
            "reads, or longer than its window); give sentences of the language it translates."
        )
    hypotheses = translator.translate([part.sources[i] for i in readable], beam_width)
    references = [part.targets[i] for i in readable]
    return {
        **cased_and_lowercased_scores(hypotheses, references),
        "sentences_skipped": len(part) - len(readable),
        "beam_width": beam_width,
    }
