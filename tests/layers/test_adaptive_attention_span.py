"""AdaptiveAttentionSpan against Sukhbaatar et al. 2019 ("Adaptive Attention Span in
Transformers"): the soft mask (eq. 3), the renormalised weights (eq. 4), the L1 span
penalty, and spans that training moves."""

import numpy as np
import pytest

from kerasformer.layers import AdaptiveAttentionSpan
from kerasformer.layers.backend import keras, ops
from kerasformer.validation import LayerError
from tests.helpers import numpy_reference
from tests.helpers.arrays import random_attention_weights
from tests.layers.harness import run_layer_test


def span_layer(spans, max_span, ramp, **kwargs):
    """A built layer whose spans are ``spans`` (tokens), set through ``span_fraction``."""
    layer = AdaptiveAttentionSpan(len(spans), max_span, ramp=ramp, **kwargs)
    layer.build((None, len(spans), None, None))
    layer.span_fraction.assign(np.asarray(spans, "float32") / max_span)
    return layer


def distances(query_length, key_length, query_start=0):
    queries = query_start + np.arange(query_length)[:, None]
    return np.abs(queries - np.arange(key_length)[None, :])


@pytest.mark.parametrize("query_length, key_length, query_start", [(7, 7, 0), (3, 10, 6)])
def test_soft_mask_is_the_papers_ramp(query_length, key_length, query_start):
    spans, ramp = [0.0, 1.5, 3.25, 8.0], 2
    layer = span_layer(spans, max_span=8, ramp=ramp)
    got = ops.convert_to_numpy(layer.soft_mask(query_length, key_length, query_start))
    expected = numpy_reference.adaptive_span_mask(query_length, key_length, spans, ramp,
                                                  query_start)  # fmt: skip
    np.testing.assert_allclose(got, expected, atol=1e-6)


@pytest.mark.parametrize("query_length, key_length, query_start", [(6, 6, 0), (2, 9, 7)])
def test_weights_are_masked_and_renormalised(query_length, key_length, query_start):
    spans, ramp = [0.5, 2.0, 5.0], 3
    layer = span_layer(spans, max_span=6, ramp=ramp)
    weights = random_attention_weights(
        (2, 3, query_length, key_length), seed=query_length, dtype="float32"
    )
    got = ops.convert_to_numpy(layer(weights, query_start=query_start))
    mask = numpy_reference.adaptive_span_mask(query_length, key_length, spans, ramp,
                                              query_start)  # fmt: skip
    expected = numpy_reference.adaptive_span_attention(weights, mask)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.sum(axis=-1), 1.0, rtol=1e-5)


def test_keys_beyond_span_plus_ramp_get_nothing_and_the_ramp_is_linear():
    span, ramp, length = 2.0, 3, 9
    layer = span_layer([span], max_span=8, ramp=ramp)
    weights = random_attention_weights((1, 1, length, length), seed=3, dtype="float32")
    got = ops.convert_to_numpy(layer(weights))[0, 0]
    x = distances(length, length)
    assert np.all(got[x >= span + ramp] == 0.0)
    assert np.all(got[x < span + ramp] > 0.0)
    # Relative to the softmax weight, a key keeps 1 inside the span, (R + z - x) / R on the
    # ramp; the row's scale is that of its keys inside the span.
    kept = got / weights[0, 0]
    row_scale = kept[np.arange(length), np.arange(length)][:, None]  # x = 0: inside
    within = x <= span + ramp
    np.testing.assert_allclose(
        (kept / row_scale)[within], np.minimum((ramp + span - x[within]) / ramp, 1.0), rtol=1e-5
    )


def test_span_fraction_outside_zero_one_is_clipped():
    layer = span_layer([0.0, 0.0], max_span=10, ramp=2)
    layer.span_fraction.assign(np.array([-0.5, 1.7], "float32"))
    np.testing.assert_allclose(ops.convert_to_numpy(layer.spans()), [0.0, 10.0])
    mask = ops.convert_to_numpy(layer.soft_mask(1, 14, query_start=0))
    expected = numpy_reference.adaptive_span_mask(1, 14, [0.0, 10.0], 2)
    np.testing.assert_allclose(mask, expected, atol=1e-6)


def test_row_with_every_key_outside_the_span_is_zero_not_nan():
    layer = span_layer([0.0], max_span=4, ramp=1)
    weights = np.full((1, 1, 1, 3), 1 / 3, "float32")
    got = ops.convert_to_numpy(layer(weights, query_start=6))
    np.testing.assert_array_equal(got, np.zeros((1, 1, 1, 3)))


def test_span_penalty_is_a_layer_loss_of_span_penalty_times_total_span():
    layer = span_layer([2.0, 5.0, 8.0], max_span=8, ramp=2, span_penalty=1e-3)
    layer(random_attention_weights((1, 3, 4, 4), seed=4, dtype="float32"))
    losses = [float(ops.convert_to_numpy(loss)) for loss in layer.losses]
    np.testing.assert_allclose(losses, [1e-3 * 15.0], rtol=1e-6)


def test_zero_span_penalty_adds_no_loss():
    layer = span_layer([2.0], max_span=8, ramp=2, span_penalty=0)
    layer(random_attention_weights((1, 1, 4, 4), seed=5, dtype="float32"))
    assert layer.losses == []


def span_model(learning_rate=0.02, **layer_options):
    """A functional model: attention weights (2 heads, 8 x 8) -> AdaptiveAttentionSpan."""
    weights = keras.Input(shape=(2, 8, 8))
    layer = AdaptiveAttentionSpan(num_heads=2, max_span=8, ramp=2, **layer_options)
    model = keras.Model(weights, layer(weights))
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=learning_rate), loss="mse")
    return model, layer


def spans_of(layer):
    return ops.convert_to_numpy(layer.spans())


def test_span_penalty_is_in_the_models_losses_and_in_the_loss_fit_minimises():
    model, layer = span_model(initial_span=3.0, span_penalty=1e-3)
    uniform = np.full((4, 2, 8, 8), 1 / 8, "float32")
    outputs = ops.convert_to_numpy(model(uniform))
    model_losses = [float(ops.convert_to_numpy(loss)) for loss in model.losses]
    np.testing.assert_allclose(model_losses, [1e-3 * 6.0], rtol=1e-6)
    # Targets equal to the outputs: the task loss is 0, what is left is the penalty.
    reported = model.evaluate(uniform, outputs, batch_size=4, verbose=0)
    np.testing.assert_allclose(reported, 1e-3 * 6.0, rtol=1e-5)


UNIFORM = np.full((200, 2, 8, 8), 1 / 8, "float32")  # 200 samples, one fit step each
NEAREST = np.broadcast_to(np.eye(8, dtype="float32"), UNIFORM.shape)


def test_spans_grow_when_the_target_attends_to_far_tokens():
    """Uniform attention over all 8 tokens as target: a span of 1 drops far keys, so the
    task gradient pushes the spans up, past a small penalty."""
    model, layer = span_model(initial_span=1.0, span_penalty=1e-4)
    model.fit(UNIFORM, UNIFORM, batch_size=1, epochs=1, verbose=0)
    assert np.all(spans_of(layer) > 4.0), spans_of(layer)


def test_spans_shrink_under_the_penalty_when_only_the_nearest_token_matters():
    """Target: all attention on the token itself. From the full span every mask value is
    saturated (no task gradient); the L1 penalty pulls the spans in."""
    model, layer = span_model(span_penalty=1e-2)
    assert np.all(spans_of(layer) == 8.0)
    model.fit(UNIFORM, NEAREST, batch_size=1, epochs=1, verbose=0)
    assert np.all(spans_of(layer) < 4.0), spans_of(layer)


def test_without_a_penalty_saturated_spans_do_not_move():
    """The control for the test above: with span_penalty=0 nothing pulls the spans in."""
    model, layer = span_model(span_penalty=0)
    model.fit(UNIFORM[:50], NEAREST[:50], batch_size=1, epochs=1, verbose=0)
    np.testing.assert_array_equal(spans_of(layer), [8.0, 8.0])


@pytest.mark.parametrize(
    "options, message",
    [
        ({"num_heads": 0, "max_span": 4}, "`num_heads` must be a positive integer"),
        ({"num_heads": 2, "max_span": 0}, "`max_span` must be a positive integer"),
        ({"num_heads": 2, "max_span": 4, "ramp": 0}, "`ramp` must be a positive integer"),
        ({"num_heads": 2, "max_span": 4, "initial_span": 5}, "from 0 to max_span=4, got 5"),
        ({"num_heads": 2, "max_span": 4, "initial_span": -1.0}, "from 0 to max_span=4"),
        ({"num_heads": 2, "max_span": 4, "initial_span": True}, "from 0 to max_span=4"),
        ({"num_heads": 2, "max_span": 4, "span_penalty": -1e-3}, "`span_penalty` must be"),
    ],
)
def test_bad_configurations_are_one_line_layer_errors(options, message):
    with pytest.raises(LayerError, match=message) as error:
        AdaptiveAttentionSpan(**options)
    assert "\n" not in str(error.value)


def test_layer_harness(tmp_path):
    run_layer_test(
        AdaptiveAttentionSpan,
        {"num_heads": 2, "max_span": 4, "ramp": 2, "initial_span": 1.0, "span_penalty": 1e-3},
        random_attention_weights((2, 2, 5, 5), seed=6, dtype="float32"),
        (2, 2, 5, 5),
        expected_num_trainable_weights=1,
        tmp_path=tmp_path,
    )


def test_layer_harness_with_query_start(tmp_path):
    run_layer_test(
        AdaptiveAttentionSpan,
        {"num_heads": 1, "max_span": 6, "ramp": 1, "initial_span": 2.5},
        random_attention_weights((2, 1, 2, 6), seed=7, dtype="float32"),
        (2, 1, 2, 6),
        call_kwargs={"query_start": 4},
        tmp_path=tmp_path,
    )
