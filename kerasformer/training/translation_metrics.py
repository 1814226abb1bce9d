"""Corpus BLEU and chrF of translations, from sacrebleu with its default settings."""

from __future__ import annotations

from collections.abc import Sequence

from sacrebleu.metrics import BLEU, CHRF

from kerasformer.errors import KerasformerError


def corpus_scores(
    hypotheses: Sequence[str], references: Sequence[str], lowercase: bool = False
) -> dict:
    """BLEU and chrF of a corpus of translations, one reference per translation.

    Scores are sacrebleu's (``BLEU()`` and ``CHRF()`` with default settings: mixed case,
    the 13a tokeniser for BLEU, character 6-grams and β = 2 for chrF), on sacrebleu's
    0-100 scale; the signatures say exactly how they were computed, for reports.

    Args:
        hypotheses: The model's translations, detokenised text, one per sentence.
        references: The reference translations, in the same order.
        lowercase: Compare lower-cased text (for models that write lower case only);
            the signatures then say ``case:lc``.

    Returns:
        ``{"bleu", "chrf", "bleu_signature", "chrf_signature", "sentences"}`` as plain
        JSON types.

    Example:

    >>> scores = corpus_scores(["el gato se sentó"], ["el gato se sentó"])
    >>> round(scores["bleu"], 2), scores["chrf"]
    (100.0, 100.0)
    """
    hypotheses, references = checked_corpus(hypotheses, references)
    bleu, chrf = BLEU(lowercase=lowercase), CHRF(lowercase=lowercase)
    bleu_score = bleu.corpus_score(hypotheses, [references])
    chrf_score = chrf.corpus_score(hypotheses, [references])
    return {
        "bleu": float(bleu_score.score),
        "chrf": float(chrf_score.score),
        "bleu_signature": str(bleu.get_signature()),
        "chrf_signature": str(chrf.get_signature()),
        "sentences": len(hypotheses),
    }


def cased_and_lowercased_scores(hypotheses: Sequence[str], references: Sequence[str]) -> dict:
    """`corpus_scores` cased (sacrebleu's default, as published figures are), and
    lower-cased beside them (``bleu_lowercase``...): the only fair comparison for a word
    tokenizer, which writes lower case."""
    lowercased = corpus_scores(hypotheses, references, lowercase=True)
    return {
        **corpus_scores(hypotheses, references),
        **{f"{name}_lowercase": lowercased[name] for name in ("bleu", "chrf")},
        **{
            f"{name}_lowercase_signature": lowercased[f"{name}_signature"]
            for name in ("bleu", "chrf")
        },
    }


def checked_corpus(hypotheses, references) -> tuple[list[str], list[str]]:
    for name, texts in (("hypotheses", hypotheses), ("references", references)):
        if isinstance(texts, str):
            raise KerasformerError(f"{name} must be a list of sentences, got one string.")
    hypotheses, references = list(hypotheses), list(references)
    if len(hypotheses) != len(references):
        raise KerasformerError(
            f"{len(hypotheses)} hypotheses for {len(references)} references; pass one "
            "reference per translation, in the same order."
        )
    if not hypotheses:
        raise KerasformerError("no sentences to score; pass at least one translation.")
    if not all(isinstance(text, str) for text in hypotheses + references):
        raise KerasformerError("hypotheses and references must be strings (decoded text).")
    return hypotheses, references
