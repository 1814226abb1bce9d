"""IOB2 decoding against brute force, TensorFlow against NumPy, entities against seqeval."""

import itertools

import numpy as np
import pytest
from seqeval.metrics.sequence_labeling import get_entities

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.models.iob_tags import allowed_transitions, entity_spans, viterbi, viterbi_tf

TAGS = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC")


def best_allowed_by_enumeration(log_probs, start, transitions):
    best, best_score = None, -np.inf
    for sequence in itertools.product(range(log_probs.shape[1]), repeat=len(log_probs)):
        if not start[sequence[0]]:
            continue
        if any(not transitions[a, b] for a, b in itertools.pairwise(sequence)):
            continue
        score = sum(log_probs[i, tag] for i, tag in enumerate(sequence))
        if score > best_score:
            best, best_score = np.array(sequence), score
    return best


def test_an_inside_tag_follows_only_its_own_type():
    start, transitions = allowed_transitions(TAGS)
    assert start.tolist() == [True, True, False, True, False]
    index = TAGS.index
    assert transitions[index("B-PER"), index("I-PER")]
    assert transitions[index("I-PER"), index("I-PER")]
    assert not transitions[index("O"), index("I-PER")]
    assert not transitions[index("B-LOC"), index("I-PER")]
    assert transitions[index("I-LOC"), index("B-PER")] and transitions[index("I-PER"), index("O")]


def test_a_tag_that_is_not_iob_is_refused():
    with pytest.raises(KerasformerError, match="'E-PER' is not an IOB tag"):
        allowed_transitions(("O", "B-PER", "E-PER"))


@pytest.mark.parametrize("seed", range(6))
def test_viterbi_finds_the_best_allowed_sequence(seed):
    rng = np.random.default_rng(seed)
    log_probs = np.log(rng.dirichlet(np.ones(len(TAGS)), size=rng.integers(1, 6)))
    start, transitions = allowed_transitions(TAGS)
    expected = best_allowed_by_enumeration(log_probs, start, transitions)
    np.testing.assert_array_equal(viterbi(log_probs, start, transitions), expected)


def test_the_constraint_changes_an_argmax_that_breaks_iob2():
    # Argmax would say O I-PER: an entity with no beginning.
    probs = np.array([[0.6, 0.3, 0.0, 0.1, 0.0], [0.1, 0.0, 0.8, 0.1, 0.0]]) + 1e-6
    start, transitions = allowed_transitions(TAGS)
    assert [TAGS[i] for i in probs.argmax(-1)] == ["O", "I-PER"]
    assert [TAGS[i] for i in viterbi(np.log(probs), start, transitions)] == ["B-PER", "I-PER"]


def test_the_tensorflow_viterbi_matches_numpy_on_a_padded_batch():
    rng = np.random.default_rng(7)
    lengths = [5, 1, 0, 3, 6]
    log_probs = np.log(rng.dirichlet(np.ones(len(TAGS)), size=(5, 6))).astype("float32")
    start, transitions = allowed_transitions(TAGS)
    got = viterbi_tf(tf.constant(log_probs), tf.constant(lengths), start, transitions).numpy()
    for row, length in enumerate(lengths):
        expected = viterbi(log_probs[row, :length], start, transitions)
        np.testing.assert_array_equal(got[row, :length], expected)
    empty = viterbi_tf(tf.zeros((2, 0, 5)), tf.constant([0, 0]), start, transitions)
    assert tuple(empty.shape) == (2, 0)


@pytest.mark.parametrize("seed", range(5))
def test_entity_spans_read_tags_as_seqeval_does(seed):
    rng = np.random.default_rng(seed)
    tags = [str(t) for t in rng.choice(TAGS, size=12)]  # broken IOB2 included
    ours = [(kind, first, last - 1) for kind, first, last in entity_spans(tags)]
    assert ours == get_entities(tags)
