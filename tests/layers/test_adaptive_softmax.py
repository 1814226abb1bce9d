"""The adaptive softmax of `TokenAndPositionEmbedding(adaptive_cutoffs=...)`.

Checked against a NumPy adaptive softmax written from Grave et al. (2017), and the
cluster-only loss against the full log-probabilities it must equal, values and gradients.
"""

import numpy as np
import pytest

from kerasformer.errors import KerasformerError
from kerasformer.layers import TokenAndPositionEmbedding
from kerasformer.layers.backend import keras, ops
from tests.helpers.numpy_reference import log_softmax
from tests.helpers.weights import numpy
from tests.layers.harness import run_layer_test

VOCAB, WIDTH, CUTOFFS = 23, 6, [5, 12]


def adaptive_layer(seed: int = 0) -> TokenAndPositionEmbedding:
    """A built layer whose every output weight is random, so no term hides behind a zero."""
    layer = TokenAndPositionEmbedding(
        8, VOCAB, WIDTH, reversible=True, adaptive_cutoffs=CUTOFFS
    )  # fmt: skip
    layer.build((None, None))
    rng = np.random.default_rng(seed)
    for weight in layer.weights:
        weight.assign(rng.normal(size=tuple(weight.shape)).astype("float32"))
    return layer


def numpy_log_probabilities(layer, hidden: np.ndarray) -> np.ndarray:
    """log p(word) = log p_head(word) for a head word, else log p_head(its cluster) +
    log p_cluster(word | its cluster), the cluster reading the hidden vector projected."""
    table, bias = numpy(layer.token_embedding.embeddings), numpy(layer.output_bias)
    kernel, cluster_bias = numpy(layer.cluster_kernel), numpy(layer.cluster_bias)
    head_size = CUTOFFS[0]
    head = log_softmax(
        np.concatenate(
            [hidden @ table[:head_size].T + bias[:head_size], hidden @ kernel + cluster_bias], -1
        )
    )
    result = np.empty(hidden.shape[:-1] + (VOCAB,))
    result[..., :head_size] = head[..., :head_size]
    edges = [*CUTOFFS, VOCAB]
    for cluster, (start, end) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
        projected = hidden @ numpy(layer.tail_projections[cluster])
        tail = log_softmax(projected @ table[start:end].T + bias[start:end])
        result[..., start:end] = head[..., head_size + cluster, None] + tail
    return result


def test_log_probabilities_match_numpy_and_sum_to_one():
    layer = adaptive_layer()
    hidden = np.random.default_rng(1).normal(size=(2, 4, WIDTH)).astype("float32")
    got = numpy(layer(ops.convert_to_tensor(hidden), reverse=True))
    expected = numpy_log_probabilities(layer, hidden)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.exp(got).sum(-1), 1.0, rtol=1e-5)


def test_targets_give_minus_log_probability_in_every_cluster():
    layer = adaptive_layer()
    hidden = np.random.default_rng(2).normal(size=(2, 5, WIDTH)).astype("float32")
    # Head words (0 and 4 among them), both tails, each cluster's first and last id.
    targets = np.array([[0, 4, 5, 11, 12], [22, 3, 17, 5, 1]], dtype="int32")
    got = numpy(layer(ops.convert_to_tensor(hidden), reverse=True, targets=targets))
    expected = -np.take_along_axis(numpy_log_probabilities(layer, hidden), targets[..., None], -1)
    assert got.shape == targets.shape
    np.testing.assert_allclose(got, expected[..., 0], rtol=1e-4, atol=1e-4)


def test_a_full_softmax_scores_targets_as_minus_log_softmax():
    layer = TokenAndPositionEmbedding(8, VOCAB, WIDTH, reversible=True)
    layer.build((None, None))
    hidden = np.random.default_rng(3).normal(size=(1, 3, WIDTH)).astype("float32")
    targets = np.array([[2, 20, 9]], dtype="int32")
    got = numpy(layer(ops.convert_to_tensor(hidden), reverse=True, targets=targets))
    logits = hidden @ numpy(layer.token_embedding.embeddings).T + numpy(layer.output_bias)
    expected = -np.take_along_axis(log_softmax(logits), targets[..., None], -1)[..., 0]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def one_sgd_step(model, inputs, targets, loss) -> list[np.ndarray]:
    model.compile(keras.optimizers.SGD(1.0), loss=loss)
    model.train_on_batch(inputs, targets)
    return [numpy(weight) for weight in model.weights]


def test_the_cluster_only_loss_trains_as_the_full_log_probabilities_do():
    """One SGD step on the scored targets moves every weight as one step on the full
    log-probabilities with Keras's cross-entropy does: same loss, same gradients."""
    ids = np.array([[3, 7, 14, 21, 2, 6], [19, 1, 5, 12, 9, 4]], dtype="int32")
    targets = np.roll(ids, -1, axis=1)
    updated = []
    for scored in (True, False):
        layer = adaptive_layer(seed=4)
        token_ids = keras.Input((None,), dtype="int32")
        hidden = layer(token_ids)
        if scored:
            next_ids = keras.Input((None,), dtype="int32")
            model = keras.Model(
                [token_ids, next_ids], layer(hidden, reverse=True, targets=next_ids)
            )
            updated.append(one_sgd_step(model, [ids, targets], targets, lambda _, losses: losses))
        else:
            model = keras.Model(token_ids, layer(hidden, reverse=True))
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            updated.append(one_sgd_step(model, ids, targets, loss))
    start = [numpy(weight) for weight in adaptive_layer(seed=4).weights]
    assert not any(np.allclose(a, b) for a, b in zip(start, updated[0], strict=True))
    for scored, full in zip(*updated, strict=True):
        np.testing.assert_allclose(scored, full, rtol=1e-4, atol=1e-5)


def test_harness(tmp_path):
    ids = np.array([[3, 5, 0, 0, 0], [1, 2, 9, 4, 0]], dtype="int32")
    run_layer_test(
        TokenAndPositionEmbedding,
        dict(vocab_size=10, maxlen=6, embed_dim=4, reversible=True, adaptive_cutoffs=[3, 6]),
        ids,
        (2, 5, 4),
        expected_output_mask=ids != 0,
        # Two tables, the output bias, the cluster kernel and bias, two projections.
        expected_num_trainable_weights=7,
        run_training_check=False,  # the output weights serve reverse calls only
        tmp_path=tmp_path,
    )


def test_an_adaptive_model_saves_and_reloads(tmp_path):
    ids = keras.Input(shape=(None,), dtype="int32")
    layer = TokenAndPositionEmbedding(8, VOCAB, WIDTH, reversible=True, adaptive_cutoffs=CUTOFFS)
    model = keras.Model(ids, layer(layer(ids), reverse=True))
    for weight in layer.weights:
        weight.assign(np.random.default_rng(5).normal(size=tuple(weight.shape)).astype("float32"))
    model.save(tmp_path / "adaptive.keras")
    reloaded = keras.models.load_model(tmp_path / "adaptive.keras")
    batch = np.array([[3, 15, 22, 1]], "int32")
    assert reloaded.layers[-1].get_config()["adaptive_cutoffs"] == tuple(CUTOFFS)
    np.testing.assert_allclose(numpy(reloaded(batch)), numpy(model(batch)), rtol=1e-6)


@pytest.mark.parametrize("cutoffs", [[], [0], [5, 5], [12, 5], [23], [2.5], "5", [True]], ids=repr)
def test_bad_cutoffs_are_a_one_line_error(cutoffs):
    with pytest.raises(KerasformerError, match="^`adaptive_cutoffs` must be ascending") as caught:
        TokenAndPositionEmbedding(8, VOCAB, WIDTH, reversible=True, adaptive_cutoffs=cutoffs)
    assert "\n" not in str(caught.value)


def test_cutoffs_need_a_reversible_layer():
    with pytest.raises(KerasformerError, match="^`adaptive_cutoffs` is an output layer"):
        TokenAndPositionEmbedding(8, VOCAB, WIDTH, adaptive_cutoffs=[5])


def test_targets_need_a_reverse_call():
    layer = adaptive_layer()
    with pytest.raises(KerasformerError, match="^`targets` are scored only by a reverse"):
        layer(np.array([[1, 2]]), targets=np.array([[2, 3]]))
