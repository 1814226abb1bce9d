"""A translator export measured as users meet it: BLEU and chrF of its translations of a
file's source sentences, through the export's own signature where it has one.
"""

from __future__ import annotations

from pathlib import Path

from kerasformer.datasets.sentence_pairs import SentencePairs
from kerasformer.training.translation_metrics import cased_and_lowercased_scores


def translator_metrics(export_dir: str | Path, part: SentencePairs, beam_width: int = 1) -> dict:
    """sacrebleu's BLEU and chrF, cased and lower-cased, of the translator at
    ``export_dir`` on ``part`` (greedy, or a beam of ``beam_width``), with their
    signatures. A source sentence it cannot read (no word, or more than its window) is
    skipped and counted, as ``kerasformer translate`` reports it.

    Example:

    >>> translator_metrics("saved_models/spa_eng-transformer", pairs)["bleu"]
    27.1...
    """
    from kerasformer.errors import KerasformerError
    from kerasformer.loading.exported_translator import serving_translator

    translator = serving_translator(export_dir, beam_width)
    readable = [i for i, source in enumerate(part.sources) if translator.problem(source) is None]
    if not readable:
        raise KerasformerError(
            f"none of the {len(part)} source sentences fits {export_dir} (no word it reads, "
            "or longer than its window); give sentences of the language it translates."
        )
    hypotheses = translator.translate([part.sources[i] for i in readable], beam_width)
    references = [part.targets[i] for i in readable]
    return {
        **cased_and_lowercased_scores(hypotheses, references),
        "sentences_skipped": len(part) - len(readable),
        "beam_width": beam_width,
    }
