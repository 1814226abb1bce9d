import inspect
import json

import numpy as np
import pytest

from kerasformer.errors import KerasformerError
from kerasformer.layers import TokenAndPositionEmbedding, TransformerBlock
from kerasformer.layers.backend import keras, ops
from tests.helpers.numpy_reference import (
    t5_relative_bias,
    transformer_block,
    transformer_encoder_block,
)
from tests.helpers.weights import attention_weights, numpy, randomise
from tests.layers.harness import run_layer_test


def block_weights(block: TransformerBlock) -> dict:
    return {
        **attention_weights(block.attention),
        "ln1": (numpy(block.attention_norm.gamma), numpy(block.attention_norm.beta)),
        "ln2": (numpy(block.ff_norm.gamma), numpy(block.ff_norm.beta)),
        "ff1_kernel": numpy(block.ff_hidden.kernel), "ff1_bias": numpy(block.ff_hidden.bias),
        "ff2_kernel": numpy(block.ff_output.kernel), "ff2_bias": numpy(block.ff_output.bias),
    }  # fmt: skip


MASK = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]], dtype=bool)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("key_dim", [None, 12])
def test_block_matches_numpy_reference_with_padding_mask(norm_first, key_dim):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 6, 8)).astype("float32")
    block = TransformerBlock(8, num_heads=2, ff_dim=16, key_dim=key_dim, norm_first=norm_first)
    block.build(x.shape)
    randomise(block, seed=2)

    out, scores = block(x, mask=MASK, return_attention_scores=True)
    expected, expected_scores = transformer_block(x, MASK, block_weights(block), norm_first, 1e-6)

    out, scores = numpy(out), numpy(scores)
    for b in range(3):  # outputs and weights at padded query positions are never used
        real = MASK[b]
        np.testing.assert_allclose(out[b][real], expected[b][real], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(
            scores[b][:, real], expected_scores[b][:, real], rtol=1e-4, atol=1e-5
        )


@pytest.mark.parametrize("position", ["rotary", "relative"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_block_with_rotary_or_relative_positions_matches_numpy_reference(norm_first, position):
    x = np.random.default_rng(3).normal(size=(3, 6, 8)).astype("float32")
    block = TransformerBlock(8, num_heads=2, ff_dim=16, norm_first=norm_first, position=position)
    block.build(x.shape)
    randomise(block, seed=4)

    out, scores = block(x, mask=MASK, return_attention_scores=True)
    w = block_weights(block)
    w = {**w, "self": w, "ln_self": w["ln1"], "ln_ff": w["ln2"]}
    if position == "rotary":
        options = {"rotary_wavelength": 10_000.0}
    else:
        table = numpy(block.attention.relative_position_bias.table)
        options = {"score_bias": t5_relative_bias(table, 6, 6, bidirectional=True)}
    expected, expected_scores = transformer_encoder_block(x, MASK, w, norm_first, 1e-6, **options)

    out = numpy(out)
    for b in range(3):
        np.testing.assert_allclose(out[b][MASK[b]], expected[b][MASK[b]], rtol=1e-4, atol=1e-4)
    # All weights: none on padded keys, and all-zero rows for padded queries.
    np.testing.assert_allclose(numpy(scores), expected_scores, rtol=1e-4, atol=1e-5)


def test_attention_weights_are_distributions_over_real_tokens_only():
    block = TransformerBlock(8, num_heads=2, ff_dim=8)
    x = np.random.default_rng(5).normal(size=(2, 5, 8)).astype("float32")
    mask = np.array([[True, True, True, False, False], [True] * 5])
    _, scores = block(x, mask=mask, return_attention_scores=True)
    scores = numpy(scores)
    assert scores.shape == (2, 2, 5, 5)
    np.testing.assert_allclose(scores[0, :, :3].sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(scores[1].sum(-1), 1.0, rtol=1e-5)
    assert np.all(scores[0, :, :, 3:] == 0.0)
    assert np.all(scores[0, :, 3:] == 0.0), "a padded query attends to nothing"
    assert np.all(scores[1] > 0.0)


POSITION_OPTIONS = [
    dict(),
    dict(position="rotary"),
    dict(position="relative"),
    dict(attention_span=4),
    dict(position="relative", attention_span=4),
]
POSITION_IDS = ["none", "rotary", "relative", "span", "relative_span"]


@pytest.mark.parametrize(
    "norm_first, options",
    [
        (False, dict()),
        (True, dict()),
        (False, dict(position="rotary")),
        (True, dict(position="relative")),
        (False, dict(attention_span=4)),
        (True, dict(position="relative", attention_span=4)),
    ],
    ids=["post_ln", "pre_ln", "rotary", "relative_pre_ln", "span", "relative_span_pre_ln"],
)
def test_appending_padding_leaves_real_positions_unchanged(norm_first, options):
    # Rotary and relative attention encode positions themselves: no position embedding.
    embedding_position = "learned" if options.get("position", "none") == "none" else "none"
    embedding = TokenAndPositionEmbedding(32, 50, 8, position=embedding_position)
    block = TransformerBlock(8, num_heads=2, ff_dim=16, norm_first=norm_first, **options)
    inputs = keras.Input(shape=(None,), dtype="int32")
    model = keras.Model(inputs, block(embedding(inputs)))

    ids = np.array([[4, 9, 17, 3, 0, 0], [11, 2, 0, 0, 0, 0]])
    padded = np.pad(ids, ((0, 0), (0, 20)))
    short = numpy(model(ids, training=False))
    long = numpy(model(padded, training=False))
    real = ids != 0
    np.testing.assert_allclose(short[real], long[:, :6][real], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("options", POSITION_OPTIONS, ids=POSITION_IDS)
def test_without_mask_padding_would_change_outputs(options):
    """The masked test above can fail: the same inputs with the mask dropped differ."""
    embedding = TokenAndPositionEmbedding(vocab_size=50, maxlen=32, embed_dim=8, mask_zero=False)
    block = TransformerBlock(8, num_heads=2, ff_dim=16, **options)
    ids = np.array([[4, 9, 17, 3]])
    padded = np.pad(ids, ((0, 0), (0, 6)))
    short = numpy(block(embedding(ids)))
    long = numpy(block(embedding(padded)))[:, :4]
    assert np.abs(short - long).max() > 1e-3


def test_mask_passes_through_unchanged():
    embedding = TokenAndPositionEmbedding(vocab_size=50, maxlen=16, embed_dim=8)
    block = TransformerBlock(8, num_heads=2, ff_dim=16)
    ids = ops.convert_to_tensor(np.array([[5, 6, 0, 0]]))
    x = embedding(ids)
    assert numpy(block.compute_mask(x, embedding.compute_mask(ids))).tolist() == [
        [True, True, False, False]
    ]


def test_dropout_acts_only_in_training():
    block = TransformerBlock(8, num_heads=2, ff_dim=16, dropout=0.5)
    x = np.random.default_rng(6).normal(size=(2, 4, 8)).astype("float32")
    inference = [numpy(block(x, training=False)) for _ in range(2)]
    np.testing.assert_array_equal(*inference)
    assert not np.allclose(numpy(block(x, training=True)), inference[0])


def test_key_dim_defaults_to_embed_dim_over_heads_and_seed_width_is_reachable():
    default = TransformerBlock(32, num_heads=2, ff_dim=32)
    seed_width = TransformerBlock(32, num_heads=2, ff_dim=32, key_dim=32)
    for block in (default, seed_width):
        block.build((None, None, 32))
    assert tuple(default.attention.query_dense.kernel.shape) == (32, 2, 16)
    assert tuple(seed_width.attention.query_dense.kernel.shape) == (32, 2, 32)
    # The seed's block had 10,656 parameters (seed 001's model summary).
    assert seed_width.count_params() == 10_656


@pytest.mark.parametrize(
    "options, weights",
    [
        (dict(position="rotary"), 16),  # rotation has no weights
        (dict(position="relative"), 17),  # + the (buckets, heads) table
        (dict(attention_span=8), 17),  # + one span per head
        (dict(position="relative", attention_span=8, norm_first=True), 18),
    ],
    ids=["rotary", "relative", "span", "relative_span_pre_ln"],
)
@pytest.mark.slow
def test_harness_on_blocks_with_positions_in_attention(options, weights, tmp_path):
    x = np.random.default_rng(7).normal(size=(2, 5, 8)).astype("float32")
    mask = np.array([[True] * 5, [True, True, True, False, False]])
    run_layer_test(
        TransformerBlock,
        dict(embed_dim=8, num_heads=2, ff_dim=16, **options),
        dict(inputs=x, mask=mask),
        (2, 5, 8),
        expected_output_mask=mask,
        expected_num_trainable_weights=weights,
        tmp_path=tmp_path,
    )


@pytest.mark.slow
def test_harness_on_default_block_returning_attention_scores(tmp_path):
    x = np.random.default_rng(8).normal(size=(2, 5, 8)).astype("float32")
    run_layer_test(
        TransformerBlock,
        dict(embed_dim=8, num_heads=2, ff_dim=16),
        x,
        [(2, 5, 8), (2, 2, 5, 5)],
        call_kwargs={"return_attention_scores": True},
        expected_num_trainable_weights=16,
        tmp_path=tmp_path,
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(embed_dim=10, num_heads=3, ff_dim=8), "^embed_dim=10 is not divisible"),
        (dict(embed_dim=0, num_heads=1, ff_dim=8), "^`embed_dim` must be"),
        (dict(embed_dim=8, num_heads=2, ff_dim=-1), "^`ff_dim` must be"),
        (dict(embed_dim=8, num_heads=np.float32(2), ff_dim=8), "^`num_heads` must be"),
        (dict(embed_dim=8, num_heads=2, ff_dim=8, dropout=1.5), "^`dropout` must be"),
        (dict(embed_dim=8, num_heads=2, ff_dim=8, dropout=float("nan")), "^`dropout` must be"),
        (dict(embed_dim=8, num_heads=2, ff_dim=8, key_dim=0), "^`key_dim` must be"),
        (dict(embed_dim=8, num_heads=2, ff_dim=8, layer_norm_epsilon=0), "^`layer_norm_epsilon`"),
        (dict(embed_dim=8, num_heads=2, ff_dim=8, layer_norm_epsilon="1e-6"), "^`layer_norm_eps"),
        (dict(embed_dim=8, num_heads=2, ff_dim=8, norm_first="false"), "^`norm_first` must be"),
        (dict(embed_dim=8, num_heads=2, ff_dim=8, position="learned"), "^`position` must be one"),
        (dict(embed_dim=8, num_heads=2, ff_dim=8, attention_span=0), "^`attention_span` must be"),
        (dict(embed_dim=8, num_heads=2, ff_dim=8, attention_span=2.5), "^`attention_span` must"),
    ],
)
def test_invalid_arguments_are_a_one_line_kerasformer_error(kwargs, message):
    with pytest.raises(KerasformerError, match=message) as caught:
        TransformerBlock(**kwargs)
    assert isinstance(caught.value, ValueError)  # what Keras users catch
    assert "\n" not in str(caught.value)


def test_numpy_sizes_and_rates_are_accepted_and_stored_as_python_numbers():
    block = TransformerBlock(
        np.int64(8), num_heads=np.int32(2), ff_dim=np.int64(16), dropout=np.float32(0.25),
        attention_dropout=np.float64(0.5), layer_norm_epsilon=np.float32(1e-3),
        norm_first=np.bool_(True), attention_span=np.int64(6),
    )  # fmt: skip
    config = block.get_config()
    expected = dict(
        embed_dim=8, num_heads=2, ff_dim=16, key_dim=4, dropout=0.25, attention_dropout=0.5,
        layer_norm_epsilon=float(np.float32(1e-3)), norm_first=True, attention_span=6,
    )  # fmt: skip
    assert {key: config[key] for key in expected} == expected
    assert {key: type(config[key]) for key in expected} == {
        key: type(value) for key, value in expected.items()
    }
    json.dumps(config)  # a NumPy scalar anywhere in it would raise TypeError
    assert tuple(block(np.zeros((1, 3, 8), "float32")).shape) == (1, 3, 8)


def test_rate_is_the_tutorials_name_for_dropout():
    """``TransformerBlock(embed_dim, num_heads, ff_dim, rate=0.1)``, as the Keras tutorial
    defines it: ``rate`` sets the dropout, saved under its own name; both given must agree."""
    assert TransformerBlock(8, 2, 8, rate=0.3).get_config()["dropout"] == 0.3
    assert TransformerBlock(8, 2, 8).get_config()["dropout"] == 0.1
    assert TransformerBlock(8, 2, 8, dropout=0.2, rate=0.2).dropout == 0.2
    with pytest.raises(KerasformerError, match="`rate` is another name for `dropout`"):
        TransformerBlock(8, 2, 8, dropout=0.2, rate=0.3)
    with pytest.raises(KerasformerError, match="^`dropout` must"):
        TransformerBlock(8, 2, 8, rate=1.5)


def test_input_width_must_match_embed_dim():
    with pytest.raises(ValueError, match="last dimension 6"):
        TransformerBlock(8, num_heads=2, ff_dim=8)(np.zeros((1, 3, 6), "float32"))


def test_config_has_every_constructor_argument_and_round_trips():
    block = TransformerBlock(
        16, 4, 24, dropout=0.2, key_dim=8, norm_first=True, activation="gelu",
        attention_dropout=0.05, layer_norm_epsilon=1e-5, position="relative",
        attention_span=12, name="blk",
    )  # fmt: skip
    config = block.get_config()
    parameters = set(inspect.signature(TransformerBlock.__init__).parameters) - {"self", "kwargs"}
    assert parameters <= set(config)
    assert config["position"] == "relative" and config["attention_span"] == 12
    clone = TransformerBlock.from_config(config)
    assert clone.get_config() == config
    assert keras.saving.get_registered_name(TransformerBlock) == "kerasformer>TransformerBlock"
