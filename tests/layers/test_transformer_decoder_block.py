"""TransformerDecoderBlock against NumPy, its causality, masks, cache, training and harness."""

import numpy as np
import pytest

from kerasformer.layers import TokenAndPositionEmbedding, TransformerDecoderBlock
from kerasformer.layers.backend import keras, ops
from kerasformer.validation import LayerError
from tests.helpers.numpy_reference import t5_relative_bias, transformer_decoder_block
from tests.helpers.weights import decoder_block_weights, numpy, randomise
from tests.layers.harness import run_layer_test

BATCH, LENGTH, SOURCE_LENGTH = 2, 5, 4
EMBED_DIM, NUM_HEADS, FF_DIM, SOURCE_DIM = 8, 2, 16, 6
EPSILON = 1e-6
POSITIONS = ["none", "rotary", "relative"]
TARGET_MASK = np.array([[True] * 5, [True, True, True, False, False]])
SOURCE_MASK = np.array([[True] * 4, [True, True, False, False]])
BLOCK_SIZES = dict(embed_dim=EMBED_DIM, num_heads=NUM_HEADS, ff_dim=FF_DIM)


def sequences(seed=0, length=LENGTH, source_length=SOURCE_LENGTH):
    """Random target vectors (batch, length, EMBED_DIM) and source (batch, s, SOURCE_DIM)."""
    rng = np.random.default_rng(seed)
    target = rng.normal(size=(BATCH, length, EMBED_DIM)).astype("float32")
    source = rng.normal(size=(BATCH, source_length, SOURCE_DIM)).astype("float32")
    return target, source


def randomised_block(with_encoder=True, seed=0, length=LENGTH, **options):
    """A built block whose every weight (biases, gammas, T5 table too) is random."""
    block = TransformerDecoderBlock(EMBED_DIM, NUM_HEADS, FF_DIM, dropout=0.0, **options)
    target, source = sequences(length=length)
    block(target, source if with_encoder else None)
    randomise(block, seed)
    return block


def reference(block, target, source, mask=None, source_mask=None):
    """The NumPy decoder block with ``block``'s weights and position option; relative
    positions are bucketed as in T5's decoder (one way: keys before the query)."""
    position_options = {}
    if block.position == "rotary":
        position_options["rotary_wavelength"] = 10_000.0
    if block.position == "relative":
        table = numpy(block.self_attention.relative_position_bias.table)
        length = target.shape[1]
        position_options["self_score_bias"] = t5_relative_bias(
            table, length, length, bidirectional=False
        )
    return transformer_decoder_block(
        target, source, decoder_block_weights(block, source is not None), block.norm_first, EPSILON,
        mask=mask, memory_mask=source_mask, **position_options,
    )  # fmt: skip


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("with_encoder", [False, True], ids=["decoder_only", "with_encoder"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_block_matches_numpy_reference_with_padding(norm_first, with_encoder, position):
    target, source = sequences(seed=1)
    source = source if with_encoder else None
    block = randomised_block(with_encoder, seed=2, norm_first=norm_first, position=position)
    outputs, self_weights, cross_weights = block(
        target, source, mask=TARGET_MASK, encoder_mask=SOURCE_MASK if with_encoder else None,
        return_attention_scores=True,
    )  # fmt: skip
    expected, expected_self, expected_cross = reference(
        block, target, source, TARGET_MASK, SOURCE_MASK if with_encoder else None
    )
    outputs = numpy(outputs)
    for b in range(BATCH):  # outputs at padded positions are never used
        real = TARGET_MASK[b]
        np.testing.assert_allclose(outputs[b][real], expected[b][real], rtol=1e-4, atol=1e-4)
    # Weights everywhere: causal rows, no weight on padding, all-zero rows at padded queries.
    np.testing.assert_allclose(numpy(self_weights), expected_self, rtol=1e-4, atol=1e-5)
    if with_encoder:
        np.testing.assert_allclose(numpy(cross_weights), expected_cross, rtol=1e-4, atol=1e-5)
    else:
        assert cross_weights is None


def test_relative_positions_of_the_causal_self_attention_use_t5_decoder_buckets():
    """T5's decoder buckets distances one way only (``bidirectional=False``, as
    `RelativePositionBias` documents for causal attention): all 32 buckets for past keys,
    exact up to 15 tokens back. Bidirectional buckets would spend half on future keys,
    which the causal mask always hides, and merge distances 8 and 9 into one bucket."""
    length = 12
    target, _ = sequences(seed=3, length=length)
    block = randomised_block(with_encoder=False, seed=4, length=length, position="relative")
    _, self_weights, _ = block(target, return_attention_scores=True)
    _, expected_self, _ = reference(block, target, None)
    np.testing.assert_allclose(numpy(self_weights), expected_self, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("with_encoder", [False, True], ids=["decoder_only", "with_encoder"])
def test_changing_a_token_changes_no_earlier_output(with_encoder, position):
    target, source = sequences(seed=5)
    source = source if with_encoder else None
    block = randomised_block(with_encoder, seed=6, position=position)
    original = numpy(block(target, source))
    rng = np.random.default_rng(7)
    for j in range(LENGTH):
        changed = target.copy()
        changed[:, j] += rng.normal(size=(BATCH, EMBED_DIM)).astype("float32")
        outputs = numpy(block(changed, source))
        np.testing.assert_allclose(outputs[:, :j], original[:, :j], rtol=1e-6, atol=1e-6)
        # The test can fail: the changed token's output changes, and so do later ones.
        assert np.abs(outputs[:, j] - original[:, j]).max() > 1e-3
        if j + 1 < LENGTH:
            assert np.abs(outputs[:, j + 1 :] - original[:, j + 1 :]).max() > 1e-4


@pytest.mark.parametrize("with_encoder", [False, True], ids=["decoder_only", "with_encoder"])
def test_appending_padding_to_the_target_changes_no_real_output(with_encoder):
    target, source = sequences(seed=8)
    source = source if with_encoder else None
    block = randomised_block(with_encoder, seed=9)
    noise = np.random.default_rng(10).normal(size=(BATCH, 3, EMBED_DIM)).astype("float32")
    padded = np.concatenate([target, noise], axis=1)
    mask = np.pad(TARGET_MASK, ((0, 0), (0, 3)))
    short = numpy(block(target, source, mask=TARGET_MASK))
    long = numpy(block(padded, source, mask=mask))
    np.testing.assert_allclose(long[:, :LENGTH][TARGET_MASK], short[TARGET_MASK], atol=1e-5)


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("with_encoder", [False, True], ids=["decoder_only", "with_encoder"])
def test_padding_before_the_target_is_hidden_by_the_mask(with_encoder, position):
    """Padding in front (batched generation pads on the left) is seen by every later
    query unless masked; rotary and T5 positions depend on distances only, so masked
    padding in front changes nothing either."""
    target, source = sequences(seed=11)
    source = source if with_encoder else None
    block = randomised_block(with_encoder, seed=12, position=position)
    noise = np.random.default_rng(13).normal(size=(BATCH, 2, EMBED_DIM)).astype("float32")
    padded = np.concatenate([noise, target], axis=1)
    mask = np.pad(np.ones((BATCH, LENGTH), bool), ((0, 0), (2, 0)))
    unpadded = numpy(block(target, source))
    masked = numpy(block(padded, source, mask=mask))[:, 2:]
    np.testing.assert_allclose(masked, unpadded, rtol=1e-4, atol=1e-5)
    unmasked = numpy(block(padded, source))[:, 2:]
    assert np.abs(unmasked - unpadded).max() > 1e-3  # the mask is what hides it


def test_appending_padding_to_the_source_changes_no_output():
    target, source = sequences(seed=14)
    block = randomised_block(seed=15)
    noise = np.random.default_rng(16).normal(size=(BATCH, 3, SOURCE_DIM)).astype("float32")
    padded = np.concatenate([source, noise], axis=1)
    padded_mask = np.pad(SOURCE_MASK, ((0, 0), (0, 3)))
    short = numpy(block(target, source, encoder_mask=SOURCE_MASK))
    long = numpy(block(target, padded, encoder_mask=padded_mask))
    np.testing.assert_allclose(long, short, rtol=1e-5, atol=1e-5)
    unmasked = numpy(block(target, padded, encoder_mask=np.ones(padded.shape[:2], bool)))
    assert np.abs(unmasked - short).max() > 1e-3  # the mask is what hides it


def embedded_translation_model(position="none"):
    """Source and target ids, each embedded by ``Embedding(mask_zero=True)``, into the block:
    the masks reach the block only as the embeddings' Keras masks."""
    source_ids = keras.Input(shape=(None,), dtype="int32", name="source_ids")
    target_ids = keras.Input(shape=(None,), dtype="int32", name="target_ids")
    source = keras.layers.Embedding(20, SOURCE_DIM, mask_zero=True)(source_ids)
    target = keras.layers.Embedding(20, EMBED_DIM, mask_zero=True)(target_ids)
    block = TransformerDecoderBlock(EMBED_DIM, NUM_HEADS, FF_DIM, position=position)
    return keras.Model([target_ids, source_ids], block(target, source))


SOURCE_IDS = np.array([[3, 4, 5, 6], [7, 8, 0, 0]])
TARGET_IDS = np.array([[9, 10, 11], [12, 13, 0]])


@pytest.mark.parametrize("position", POSITIONS)
def test_keras_masks_of_embeddings_hide_source_and_target_padding(position):
    model = embedded_translation_model(position)
    outputs = numpy(model([TARGET_IDS, SOURCE_IDS], training=False))
    longer_source = numpy(model([TARGET_IDS, np.pad(SOURCE_IDS, ((0, 0), (0, 3)))]))
    np.testing.assert_allclose(longer_source, outputs, rtol=1e-5, atol=1e-5)
    real = TARGET_IDS != 0
    left_padded_target = np.pad(TARGET_IDS, ((0, 0), (2, 0)))
    shifted = numpy(model([left_padded_target, SOURCE_IDS], training=False))[:, 2:]
    np.testing.assert_allclose(shifted[real], outputs[real], rtol=1e-4, atol=1e-5)


def test_keras_mask_of_eager_source_embeddings_is_honoured():
    embedding = keras.layers.Embedding(20, SOURCE_DIM, mask_zero=True)
    block = randomised_block(seed=17)
    target, _ = sequences(seed=18)
    outputs = numpy(block(target, embedding(ops.convert_to_tensor(SOURCE_IDS))))
    padded = np.pad(SOURCE_IDS, ((0, 0), (0, 3)))
    longer = numpy(block(target, embedding(ops.convert_to_tensor(padded))))
    np.testing.assert_allclose(longer, outputs, rtol=1e-5, atol=1e-5)


def decode_in_steps(block, target, source, source_mask, step, max_length):
    """Outputs of feeding ``target`` ``step`` tokens at a time through the key/value cache."""
    cache = block.empty_cache(batch_size=BATCH, max_length=max_length)
    outputs = []
    for start in range(0, target.shape[1], step):
        output, cache = block(
            target[:, start : start + step], source, encoder_mask=source_mask, cache=cache,
            cache_index=start,
        )  # fmt: skip
        outputs.append(numpy(output))
    assert tuple(cache.shape) == (BATCH, 2, max_length, NUM_HEADS, EMBED_DIM // NUM_HEADS)
    return np.concatenate(outputs, axis=1)


@pytest.mark.parametrize(
    "step, norm_first", [(1, False), (2, True)], ids=["1_token_post_ln", "2_tokens_pre_ln"]
)
@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("with_encoder", [False, True], ids=["decoder_only", "with_encoder"])
def test_cached_decoding_equals_the_full_pass(with_encoder, position, step, norm_first):
    target, source = sequences(seed=19)
    source, source_mask = (source, SOURCE_MASK) if with_encoder else (None, None)
    block = randomised_block(with_encoder, seed=20, norm_first=norm_first, position=position)
    full = numpy(block(target, source, encoder_mask=source_mask))
    stepped = decode_in_steps(block, target, source, source_mask, step, max_length=LENGTH + 3)
    np.testing.assert_allclose(stepped, full, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("position", POSITIONS)
def test_cached_step_gives_no_weight_to_empty_cache_slots(position):
    target, source = sequences(seed=21)
    block = randomised_block(seed=22, position=position)
    _, full_self, full_cross = block(target, source, return_attention_scores=True)
    max_length = LENGTH + 3
    cache = block.empty_cache(batch_size=BATCH, max_length=max_length)
    for start in range(LENGTH):
        _, self_weights, cross_weights, cache = block(
            target[:, start : start + 1], source, cache=cache, cache_index=start,
            return_attention_scores=True,
        )  # fmt: skip
        self_weights = numpy(self_weights)
        assert self_weights.shape == (BATCH, NUM_HEADS, 1, max_length)
        expected = np.zeros((BATCH, NUM_HEADS, 1, max_length))
        expected[..., :LENGTH] = numpy(full_self)[:, :, start : start + 1]
        np.testing.assert_allclose(self_weights, expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(
            numpy(cross_weights), numpy(full_cross)[:, :, start : start + 1], rtol=1e-5,
            atol=1e-6,
        )  # fmt: skip


DIGITS, BOS, COPY_LENGTH = 10, 1, 4  # ids: 0 padding, 1 start of sequence, 2..11 digits


def copy_task(count, seed):
    """Sources of random digits; the target is the source, fed shifted right after BOS."""
    rng = np.random.default_rng(seed)
    sources = rng.integers(2, 2 + DIGITS, size=(count, COPY_LENGTH)).astype("int32")
    target_inputs = np.concatenate([np.full((count, 1), BOS, "int32"), sources[:, :-1]], 1)
    return sources, target_inputs


def copy_model():
    """Source ids with learned positions; target ids with no position embedding, so a
    target token knows its position only from the causal mask (how many tokens it sees)."""
    vocab_size = 2 + DIGITS
    source_ids = keras.Input(shape=(COPY_LENGTH,), dtype="int32")
    target_ids = keras.Input(shape=(COPY_LENGTH,), dtype="int32")
    source = TokenAndPositionEmbedding(COPY_LENGTH, vocab_size, 32)(source_ids)
    target = TokenAndPositionEmbedding(COPY_LENGTH, vocab_size, 32, position="none")(target_ids)
    decoded = TransformerDecoderBlock(32, 2, 64, dropout=0.0)(target, source)
    probabilities = keras.layers.Dense(vocab_size, activation="softmax")(decoded)
    return keras.Model([target_ids, source_ids], probabilities)


def greedy_decode(model, sources, seed):
    """Generate each token from the ones generated before it. Positions not generated yet
    hold random digits: a block that let a query see later tokens would read them."""
    rng = np.random.default_rng(seed)
    target = rng.integers(2, 2 + DIGITS, size=sources.shape).astype("int32")
    target[:, 0] = BOS
    for position in range(COPY_LENGTH):
        probabilities = model.predict([target, sources], batch_size=len(sources), verbose=0)
        predicted = probabilities[:, position].argmax(-1)
        if position + 1 < COPY_LENGTH:
            target[:, position + 1] = predicted
    return probabilities.argmax(-1)


@pytest.mark.slow
def test_block_learns_to_copy_the_source_with_model_fit():
    """The digit at target position i is only in the source, at position i: the block must
    learn cross-attention to it, and can tell which position it is at only through the
    causal mask (without it every target position sees the same tokens; that mutation
    copies about half the digits). Training is teacher-forced (target shifted right); the
    test decodes greedily, which a block leaking later target tokens would get wrong."""
    keras.utils.set_random_seed(0)
    model = copy_model()
    model.compile(keras.optimizers.Adam(3e-3), "sparse_categorical_crossentropy")
    sources, target_inputs = copy_task(1024, seed=0)
    model.fit([target_inputs, sources], sources, batch_size=64, epochs=10, verbose=0)
    test_sources, _ = copy_task(256, seed=1)
    accuracy = (greedy_decode(model, test_sources, seed=2) == test_sources).mean()
    assert accuracy > 0.9, f"copied {accuracy:.0%} of digits; chance is {1 / DIGITS:.0%}"


def test_harness_on_decoder_only_block(tmp_path):
    target, _ = sequences(seed=23)
    run_layer_test(
        TransformerDecoderBlock,
        dict(BLOCK_SIZES, position="rotary"),
        target,
        (BATCH, LENGTH, EMBED_DIM),
        expected_num_trainable_weights=8 + 2 + 4 + 2,
        tmp_path=tmp_path,
    )


def test_harness_on_block_with_encoder_and_masks(tmp_path):
    target, source = sequences(seed=24)
    run_layer_test(
        TransformerDecoderBlock,
        dict(BLOCK_SIZES, norm_first=True, position="relative"),
        dict(inputs=target, encoder_outputs=source, mask=TARGET_MASK, encoder_mask=SOURCE_MASK),
        (BATCH, LENGTH, EMBED_DIM),
        expected_output_mask=TARGET_MASK,
        expected_num_trainable_weights=(8 + 1) + 2 + 8 + 2 + 4 + 2,
        tmp_path=tmp_path,
    )


def test_functional_model_returns_outputs_and_both_attention_weights():
    target, source = sequences(seed=28)
    block = randomised_block(seed=29)
    eager = [numpy(x) for x in block(target, source, return_attention_scores=True)]
    target_input = keras.Input(shape=(LENGTH, EMBED_DIM))
    source_input = keras.Input(shape=(SOURCE_LENGTH, SOURCE_DIM))
    symbolic = block(target_input, source_input, return_attention_scores=True)
    assert [tuple(x.shape) for x in symbolic] == [
        (None, LENGTH, EMBED_DIM),
        (None, NUM_HEADS, LENGTH, LENGTH),
        (None, NUM_HEADS, LENGTH, SOURCE_LENGTH),
    ]
    model = keras.Model([target_input, source_input], list(symbolic))
    for got, expected in zip(model([target, source]), eager, strict=True):
        np.testing.assert_allclose(numpy(got), expected, rtol=1e-5, atol=1e-6)


def test_mixed_float16_block_attends_in_float16():
    """Under a per-layer ``mixed_float16`` policy every sub-layer computes in float16, as
    with the global policy: the attention weights come back float16, like the output."""
    target, source = sequences(seed=30)
    block = TransformerDecoderBlock(EMBED_DIM, NUM_HEADS, FF_DIM, dtype="mixed_float16")
    results = block(target, source, return_attention_scores=True)
    dtypes = [numpy(x).dtype.name for x in results]
    assert dtypes == ["float16", "float16", "float16"], "output, self and cross weights"


def test_dropout_acts_only_in_training():
    target, source = sequences(seed=25)
    block = TransformerDecoderBlock(EMBED_DIM, NUM_HEADS, FF_DIM, dropout=0.5)
    inference = [numpy(block(target, source, training=False)) for _ in range(2)]
    np.testing.assert_array_equal(*inference)
    assert not np.allclose(numpy(block(target, source, training=True)), inference[0])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(embed_dim=0), "^`embed_dim` must be a positive integer, got 0"),
        (dict(num_heads=2.0), "^`num_heads` must be a positive integer"),
        (dict(ff_dim=-1), "^`ff_dim` must be a positive integer"),
        (dict(embed_dim=10, num_heads=3), "^embed_dim=10 is not divisible by num_heads=3"),
        (dict(key_dim=0), "^`key_dim` must be a positive integer"),
        (dict(dropout=1.0), r"^`dropout` must be a number in \[0, 1\)"),
        (dict(attention_dropout=float("nan")), "^`attention_dropout` must be"),
        (dict(norm_first="false"), "^`norm_first` must be True or False"),
        (dict(layer_norm_epsilon=0), "^`layer_norm_epsilon` must be a positive number"),
        (dict(position="sinusoidal"), "^`position` must be one of none, rotary, relative"),
        (dict(position=None), "^`position` must be one of"),
    ],
)
def test_invalid_arguments_are_a_one_line_layer_error(kwargs, message):
    with pytest.raises(LayerError, match=message) as caught:
        TransformerDecoderBlock(**{**BLOCK_SIZES, **kwargs})
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, ValueError)  # what Keras users catch


def test_calling_without_encoder_outputs_after_building_with_them_is_a_layer_error():
    target, source = sequences(seed=26)
    block = TransformerDecoderBlock(EMBED_DIM, NUM_HEADS, FF_DIM)
    block(target, source)
    with pytest.raises(LayerError, match="built with encoder outputs; pass `encoder_outputs`"):
        block(target)


def test_cache_without_cache_index_or_of_the_wrong_shape_is_a_layer_error():
    target, _ = sequences(seed=27)
    block = TransformerDecoderBlock(EMBED_DIM, NUM_HEADS, FF_DIM)
    block(target)
    with pytest.raises(LayerError, match="needs `cache_index`"):
        block(target[:, :1], cache=block.empty_cache(BATCH, LENGTH))
    wrong = np.zeros((BATCH, 2, LENGTH, NUM_HEADS + 1, EMBED_DIM // NUM_HEADS), "float32")
    with pytest.raises(LayerError, match="does not fit this layer"):
        block(target[:, :1], cache=wrong, cache_index=0)


def test_input_width_must_match_embed_dim():
    with pytest.raises(ValueError, match="last dimension 6; the residual connections"):
        TransformerDecoderBlock(EMBED_DIM, NUM_HEADS, FF_DIM)(np.zeros((1, 3, 6), "float32"))
