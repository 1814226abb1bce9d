import inspect
import json

import numpy as np
import pytest

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.layers import TokenAndPositionEmbedding, TransformerBlock
from tests.numpy_reference import transformer_block


def block_weights(block: TransformerBlock) -> dict:
    attention = {
        w.name.split("attention/")[-1].split(":")[0]: w.numpy() for w in block.attention.weights
    }
    return {
        "wq": attention["query/kernel"], "bq": attention["query/bias"],
        "wk": attention["key/kernel"], "bk": attention["key/bias"],
        "wv": attention["value/kernel"], "bv": attention["value/bias"],
        "wo": attention["attention_output/kernel"], "bo": attention["attention_output/bias"],
        "ln1": (block.attention_norm.gamma.numpy(), block.attention_norm.beta.numpy()),
        "ln2": (block.ff_norm.gamma.numpy(), block.ff_norm.beta.numpy()),
        "ff1_kernel": block.ff_hidden.kernel.numpy(), "ff1_bias": block.ff_hidden.bias.numpy(),
        "ff2_kernel": block.ff_output.kernel.numpy(), "ff2_bias": block.ff_output.bias.numpy(),
    }  # fmt: skip


def randomise(block: TransformerBlock, seed: int) -> None:
    """Give every weight (biases, gammas too) random values, so no term is trivially zero."""
    rng = np.random.default_rng(seed)
    for weight in block.weights:
        weight.assign(rng.normal(0.0, 0.5, weight.shape).astype("float32"))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("key_dim", [None, 12])
def test_block_matches_numpy_reference_with_padding_mask(norm_first, key_dim):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 6, 8)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]], dtype=bool)
    block = TransformerBlock(8, num_heads=2, ff_dim=16, key_dim=key_dim, norm_first=norm_first)
    block.build(x.shape)
    randomise(block, seed=2)

    out, scores = block(tf.constant(x), mask=tf.constant(mask), return_attention_scores=True)
    expected, expected_scores = transformer_block(x, mask, block_weights(block), norm_first, 1e-6)

    for b in range(3):
        real = mask[b]
        np.testing.assert_allclose(out.numpy()[b][real], expected[b][real], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(
            scores.numpy()[b][:, real], expected_scores[b][:, real], rtol=1e-4, atol=1e-5
        )


def test_attention_weights_are_distributions_over_real_tokens_only():
    block = TransformerBlock(8, num_heads=2, ff_dim=8)
    x = tf.random.stateless_normal((2, 5, 8), seed=(1, 2))
    mask = tf.constant([[True, True, True, False, False], [True] * 5])
    _, scores = block(x, mask=mask, return_attention_scores=True)
    scores = scores.numpy()
    assert scores.shape == (2, 2, 5, 5)
    np.testing.assert_allclose(scores.sum(-1), 1.0, rtol=1e-5)
    assert np.all(scores[0, :, :, 3:] == 0.0)
    assert np.all(scores[1] > 0.0)


@pytest.mark.parametrize("norm_first", [False, True])
def test_appending_padding_leaves_real_positions_unchanged(norm_first):
    embedding = TokenAndPositionEmbedding(vocab_size=50, maxlen=32, embed_dim=8)
    block = TransformerBlock(8, num_heads=2, ff_dim=16, norm_first=norm_first)
    inputs = keras.Input(shape=(None,), dtype="int32")
    model = keras.Model(inputs, block(embedding(inputs)))

    ids = np.array([[4, 9, 17, 3, 0, 0], [11, 2, 0, 0, 0, 0]])
    padded = np.pad(ids, ((0, 0), (0, 20)))
    short = model(ids, training=False).numpy()
    long = model(padded, training=False).numpy()
    real = ids != 0
    np.testing.assert_allclose(short[real], long[:, :6][real], rtol=1e-5, atol=1e-6)


def test_without_mask_padding_would_change_outputs():
    """The masked test above can fail: the same inputs with the mask dropped differ."""
    embedding = TokenAndPositionEmbedding(vocab_size=50, maxlen=32, embed_dim=8, mask_zero=False)
    block = TransformerBlock(8, num_heads=2, ff_dim=16)
    ids = tf.constant([[4, 9, 17, 3]])
    padded = tf.pad(ids, [[0, 0], [0, 6]])
    short = block(embedding(ids)).numpy()
    long = block(embedding(padded)).numpy()[:, :4]
    assert np.abs(short - long).max() > 1e-3


def test_mask_passes_through_unchanged():
    embedding = TokenAndPositionEmbedding(vocab_size=50, maxlen=16, embed_dim=8)
    block = TransformerBlock(8, num_heads=2, ff_dim=16)
    ids = tf.constant([[5, 6, 0, 0]])
    x = embedding(ids)
    assert block.compute_mask(x, embedding.compute_mask(ids)).numpy().tolist() == [
        [True, True, False, False]
    ]


def test_dropout_acts_only_in_training():
    block = TransformerBlock(8, num_heads=2, ff_dim=16, dropout=0.5)
    x = tf.random.stateless_normal((2, 4, 8), seed=(3, 4))
    inference = [block(x, training=False).numpy() for _ in range(2)]
    np.testing.assert_array_equal(*inference)
    assert not np.allclose(block(x, training=True).numpy(), inference[0])


def test_key_dim_defaults_to_embed_dim_over_heads_and_seed_width_is_reachable():
    default = TransformerBlock(32, num_heads=2, ff_dim=32)
    seed_width = TransformerBlock(32, num_heads=2, ff_dim=32, key_dim=32)
    for block in (default, seed_width):
        block.build((None, None, 32))
    assert default.attention.weights[0].shape == (32, 2, 16)
    assert seed_width.attention.weights[0].shape == (32, 2, 32)
    # The seed's block had 10,656 parameters (seed 001's model summary).
    assert seed_width.count_params() == 10_656


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
    ],
)
def test_invalid_arguments_are_a_one_line_kerasformer_error(kwargs, message):
    with pytest.raises(KerasformerError, match=message) as caught:
        TransformerBlock(**kwargs)
    assert isinstance(caught.value, ValueError)  # what Keras users catch


def test_numpy_sizes_and_rates_are_accepted_and_stored_as_python_numbers():
    block = TransformerBlock(
        np.int64(8), num_heads=np.int32(2), ff_dim=np.int64(16), dropout=np.float32(0.25),
        attention_dropout=np.float64(0.5), layer_norm_epsilon=np.float32(1e-3),
        norm_first=np.bool_(True),
    )  # fmt: skip
    config = block.get_config()
    expected = dict(
        embed_dim=8, num_heads=2, ff_dim=16, key_dim=4, dropout=0.25, attention_dropout=0.5,
        layer_norm_epsilon=float(np.float32(1e-3)), norm_first=True,
    )  # fmt: skip
    assert {key: config[key] for key in expected} == expected
    assert {key: type(config[key]) for key in expected} == {
        key: type(value) for key, value in expected.items()
    }
    json.dumps(config)  # a NumPy scalar anywhere in it would raise TypeError
    assert block(tf.zeros((1, 3, 8))).shape == (1, 3, 8)


def test_input_width_must_match_embed_dim():
    with pytest.raises(ValueError, match="last dimension 6"):
        TransformerBlock(8, num_heads=2, ff_dim=8)(tf.zeros((1, 3, 6)))


def test_config_has_every_constructor_argument_and_round_trips():
    block = TransformerBlock(
        16, 4, 24, dropout=0.2, key_dim=8, norm_first=True, activation="gelu",
        attention_dropout=0.05, layer_norm_epsilon=1e-5, name="blk",
    )  # fmt: skip
    config = block.get_config()
    parameters = set(inspect.signature(TransformerBlock.__init__).parameters) - {"self", "kwargs"}
    assert parameters <= set(config)
    clone = TransformerBlock.from_config(config)
    assert clone.get_config() == config
    assert keras.saving.get_registered_name(TransformerBlock) == "kerasformer>TransformerBlock"
