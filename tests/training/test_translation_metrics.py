import math
from collections import Counter

import pytest

from kerasformer.errors import KerasformerError
from kerasformer.training.translation_metrics import corpus_scores

# Lower-case words without punctuation: sacrebleu's 13a tokeniser leaves them as they are.
REFERENCES = [
    "el gato negro se sentó en la alfombra roja",
    "hoy hace mucho frío en la ciudad",
    "mi hermano lee un libro sobre la historia de españa",
]
SHORT_HYPOTHESES = [  # fewer words than the references: the brevity penalty applies
    "el gato negro se sentó en la alfombra",
    "hoy hace frío en la ciudad",
    "mi hermano lee un libro de historia",
]
LONG_HYPOTHESES = [  # more words than the references: no brevity penalty
    "el gato negro se sentó en la alfombra roja de la casa",
    "hoy hace mucho frío en toda la ciudad",
    "mi hermano menor lee un libro sobre la historia de españa",
]


def ngrams(words: list[str], n: int) -> Counter:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def corpus_bleu4(hypotheses: list[str], references: list[str]) -> float:
    """Corpus BLEU-4 of Papineni et al. (2002), one reference per sentence, in [0, 1].

    p_n = sum of clipped n-gram matches / sum of hypothesis n-grams over the corpus;
    BLEU = BP * exp(mean_n log p_n) with BP = exp(1 - r / c) when c < r, else 1.
    """
    matches, totals = [0] * 4, [0] * 4
    hypothesis_length = reference_length = 0
    for hypothesis, reference in zip(hypotheses, references, strict=True):
        hyp_words, ref_words = hypothesis.split(), reference.split()
        hypothesis_length += len(hyp_words)
        reference_length += len(ref_words)
        for n in range(1, 5):
            hyp_counts, ref_counts = ngrams(hyp_words, n), ngrams(ref_words, n)
            matches[n - 1] += sum(min(c, ref_counts[g]) for g, c in hyp_counts.items())
            totals[n - 1] += sum(hyp_counts.values())
    log_precision = sum(math.log(m / t) for m, t in zip(matches, totals, strict=True)) / 4
    if hypothesis_length < reference_length:
        brevity_penalty = math.exp(1 - reference_length / hypothesis_length)
    else:
        brevity_penalty = 1.0
    return brevity_penalty * math.exp(log_precision)


def char_ngrams(text: str, n: int) -> Counter:
    chars = "".join(text.split())
    return Counter(chars[i : i + n] for i in range(len(chars) - n + 1))


def chrf(hypothesis: str, reference: str, beta: float = 2.0, order: int = 6) -> float:
    """chrF of Popović (2015), in [0, 1]: spaces removed, character n-grams n = 1..order.

    chrP and chrR are the precision and recall averaged over n; chrF = (1 + β²) chrP chrR /
    (β² chrP + chrR). Assumes both texts have at least ``order`` characters.
    """
    precisions, recalls = [], []
    for n in range(1, order + 1):
        hyp_counts, ref_counts = char_ngrams(hypothesis, n), char_ngrams(reference, n)
        common = sum((hyp_counts & ref_counts).values())
        precisions.append(common / sum(hyp_counts.values()))
        recalls.append(common / sum(ref_counts.values()))
    precision, recall = sum(precisions) / order, sum(recalls) / order
    return (1 + beta**2) * precision * recall / (beta**2 * precision + recall)


@pytest.mark.parametrize("hypotheses", [SHORT_HYPOTHESES, LONG_HYPOTHESES])
def test_bleu_is_corpus_bleu4_of_papineni_et_al(hypotheses):
    expected = corpus_bleu4(hypotheses, REFERENCES)
    assert 0.1 < expected < 0.95  # every n-gram order matches somewhere: no smoothing
    scores = corpus_scores(hypotheses, REFERENCES)
    assert scores["bleu"] / 100 == pytest.approx(expected, rel=1e-6)
    assert scores["sentences"] == 3


def test_translations_cut_short_score_their_brevity_penalty():
    # Each hypothesis is its reference less the last two words, so every n-gram precision
    # is 1 and BLEU is the brevity penalty alone: exp(1 - 26 / 20) for 26 and 20 words.
    hypotheses = [" ".join(reference.split()[:-2]) for reference in REFERENCES]
    expected = math.exp(1 - 26 / 20)
    assert corpus_bleu4(hypotheses, REFERENCES) == pytest.approx(expected, rel=1e-12)
    assert corpus_scores(hypotheses, REFERENCES)["bleu"] / 100 == pytest.approx(expected, rel=1e-6)


def test_chrf_of_a_tiny_case_worked_by_hand():
    # "ungato" against "elgatogris": matches over hypothesis/reference n-grams are
    # 4/6, 3/5, 2/4, 1/3, 0/2, 0/1 and 4/10, 3/9, 2/8, 1/7, 0/6, 0/5 for n = 1..6, so
    # chrP = 7/20, chrR = 473/2520 and chrF = 5 chrP chrR / (4 chrP + chrR) = 16555/80020.
    expected = 16555 / 80020
    assert chrf("un gato", "el gato gris") == pytest.approx(expected, rel=1e-12)
    assert corpus_scores(["un gato"], ["el gato gris"])["chrf"] / 100 == pytest.approx(
        expected, rel=1e-9
    )


def test_chrf_weighs_recall_more_than_precision():
    # Swapping hypothesis and reference swaps chrP and chrR; with β = 2 the longer,
    # higher-recall hypothesis scores more.
    longer = corpus_scores(["el gato gris"], ["un gato"])["chrf"] / 100
    shorter = corpus_scores(["un gato"], ["el gato gris"])["chrf"] / 100
    assert longer == pytest.approx(chrf("el gato gris", "un gato"), rel=1e-9)
    assert longer > shorter


def test_identical_translations_score_one_hundred():
    scores = corpus_scores(REFERENCES, REFERENCES)
    assert scores["bleu"] == pytest.approx(100.0)
    assert scores["chrf"] == pytest.approx(100.0)


def test_the_signatures_say_how_the_scores_were_computed():
    scores = corpus_scores(SHORT_HYPOTHESES, REFERENCES)
    assert isinstance(scores["bleu_signature"], str)
    assert "nrefs:1|" in scores["bleu_signature"]
    assert "case:mixed|" in scores["bleu_signature"]
    assert "tok:13a" in scores["bleu_signature"]
    assert "nrefs:1|" in scores["chrf_signature"]
    assert "nc:6" in scores["chrf_signature"] and "nw:0" in scores["chrf_signature"]


def test_mismatched_lengths_are_a_clear_error():
    with pytest.raises(KerasformerError, match="2 hypotheses for 3 references"):
        corpus_scores(SHORT_HYPOTHESES[:2], REFERENCES)


def test_no_sentences_is_a_clear_error():
    with pytest.raises(KerasformerError, match="no sentences"):
        corpus_scores([], [])


def test_a_single_string_instead_of_a_list_is_a_clear_error():
    with pytest.raises(KerasformerError, match="hypotheses must be a list of sentences"):
        corpus_scores("el gato", "el gato")
