import json
import shutil

import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.export import convert_bert
from kerasformer.export.convert_bert import default_bert_checkpoint_dir
from tests.conftest import write_tiny_bert_checkpoint
from tests.numpy_bert import NumpyBert

SENTENCES = [
    "I love transformers",
    "Time flies like an arrow; fruit flies like a banana.",
    "Shares in the bank rose sharply after profits beat forecasts for the third quarter.",
]


def hub_outputs(hub_bert, texts):
    import tensorflow_hub as hub
    import tensorflow_text  # noqa: F401  (registers the tokenizer ops)

    inputs = hub.KerasLayer(str(hub_bert.preprocess))(tf.constant(texts))
    outputs = hub.KerasLayer(str(hub_bert.encoder))(inputs)
    return {k: v.numpy() for k, v in inputs.items()}, outputs


def assert_matches_numpy_bert(checkpoint_dir, hub_bert, texts, tolerance=1e-4):
    inputs, outputs = hub_outputs(hub_bert, texts)
    ids, mask, types = (inputs[k] for k in ("input_word_ids", "input_mask", "input_type_ids"))
    sequence, pooled, layers = NumpyBert(checkpoint_dir)(ids, mask, types)
    real = mask.astype(bool)
    np.testing.assert_allclose(
        outputs["sequence_output"].numpy()[real], sequence[real], atol=tolerance
    )
    np.testing.assert_allclose(outputs["pooled_output"].numpy(), pooled, atol=tolerance)
    np.testing.assert_allclose(outputs["default"].numpy(), pooled, atol=tolerance)
    assert len(outputs["encoder_outputs"]) == len(layers)
    for converted, reference in zip(outputs["encoder_outputs"], layers, strict=True):
        np.testing.assert_allclose(converted.numpy()[real], reference[real], atol=tolerance)


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    return convert_bert(None, tmp_path_factory.mktemp("minilm") / "hub")


def test_minilm_preprocess_gives_the_seeds_ids(minilm):
    inputs, _ = hub_outputs(minilm, ["I love transformers"])
    assert inputs["input_word_ids"][0, :6].tolist() == [101, 1045, 2293, 19081, 102, 0]
    assert inputs["input_word_ids"].shape == (1, 128)
    assert inputs["input_mask"][0, :6].tolist() == [1, 1, 1, 1, 1, 0]


def test_minilm_matches_an_independent_numpy_bert(minilm):
    assert_matches_numpy_bert(default_bert_checkpoint_dir(), minilm, SENTENCES)


def test_tiny_random_bert_matches_numpy_bert_too(tiny_bert_checkpoint, tiny_hub_bert):
    assert_matches_numpy_bert(tiny_bert_checkpoint, tiny_hub_bert, ["team goal", "the bank said"])


def test_encoder_is_fine_tunable_through_hub(tiny_hub_bert):
    import tensorflow_hub as hub
    import tensorflow_text  # noqa: F401

    preprocess = hub.KerasLayer(str(tiny_hub_bert.preprocess))
    encoder = hub.KerasLayer(str(tiny_hub_bert.encoder), trainable=True)
    inputs = preprocess(tf.constant(["team goal season"]))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(encoder(inputs)["pooled_output"] ** 2)
    gradients = tape.gradient(loss, encoder.trainable_variables)
    assert len(encoder.trainable_variables) > 20
    assert all(g is not None for g in gradients)
    assert hub.KerasLayer(str(tiny_hub_bert.encoder), trainable=False).trainable_variables == []


def test_sequence_length_is_configurable(tiny_hub_bert):
    inputs, outputs = hub_outputs(tiny_hub_bert, ["team goal"])
    assert inputs["input_word_ids"].shape == (1, 32)
    assert outputs["sequence_output"].shape == (1, 32, 16)


def copy_checkpoint(source, target):
    shutil.copytree(source, target)
    return target


def test_missing_file_is_a_clear_error(tiny_bert_checkpoint, tmp_path):
    broken = copy_checkpoint(tiny_bert_checkpoint, tmp_path / "ckpt")
    (broken / "vocab.txt").unlink()
    with pytest.raises(KerasformerError, match="has no vocab.txt"):
        convert_bert(broken, tmp_path / "out")


def test_non_bert_config_is_a_clear_error(tiny_bert_checkpoint, tmp_path):
    broken = copy_checkpoint(tiny_bert_checkpoint, tmp_path / "ckpt")
    config = json.loads((broken / "config.json").read_text())
    (broken / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    with pytest.raises(KerasformerError, match="describes a 'roberta' model, not 'bert'"):
        convert_bert(broken, tmp_path / "out")


def test_shapes_that_do_not_match_the_config_are_a_clear_error(tiny_bert_checkpoint, tmp_path):
    broken = copy_checkpoint(tiny_bert_checkpoint, tmp_path / "ckpt")
    config = json.loads((broken / "config.json").read_text())
    (broken / "config.json").write_text(json.dumps({**config, "intermediate_size": 48}))
    with pytest.raises(
        KerasformerError,
        match=r"intermediate.dense.weight has shape \(32, 16\) but config.json implies \(48, 16\)",
    ):
        convert_bert(broken, tmp_path / "out")


def test_unsupported_activation_and_existing_output_are_clear_errors(tmp_path):
    checkpoint = write_tiny_bert_checkpoint(
        tmp_path / "ckpt", config_overrides={"hidden_act": "silu"}
    )
    with pytest.raises(KerasformerError, match="hidden_act 'silu' is not supported"):
        convert_bert(checkpoint, tmp_path / "out")
    (tmp_path / "out").mkdir()
    with pytest.raises(KerasformerError, match="already exists; pass --overwrite"):
        convert_bert(checkpoint, tmp_path / "out")
