import json
import shutil

import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.convert.convert_bert import default_bert_checkpoint_dir
from kerasformer.errors import KerasformerError
from kerasformer.export import convert_bert
from tests.helpers.bert import tiny_bert_vocabulary, write_tiny_bert_checkpoint
from tests.helpers.numpy_bert import NumpyBert
from tests.helpers.processes import run_commands, run_kerasformer

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


def assert_attention_matches_numpy_bert(checkpoint_dir, hub_bert, texts, tolerance=1e-5):
    """The encoder's ``attention_probabilities`` are the NumPy BERT's softmax weights on
    real tokens, and exactly 0 on padding."""
    inputs, _ = hub_outputs(hub_bert, texts)
    ids, mask, types = (inputs[k] for k in ("input_word_ids", "input_mask", "input_type_ids"))
    *_, expected = NumpyBert(checkpoint_dir)(ids, mask, types, return_attention=True)
    encoder = tf.saved_model.load(str(hub_bert.encoder))
    found = encoder.attention_probabilities(
        tf.constant(ids), tf.constant(mask), tf.constant(types)
    ).numpy()
    assert found.dtype == np.float32 and found.shape == expected.shape
    for row, real in enumerate(mask.astype(bool)):
        queries = found[:, row][:, :, real]
        np.testing.assert_allclose(queries[..., real], expected[:, row][:, :, real][..., real],
                                   atol=tolerance)  # fmt: skip
        assert np.all(queries[..., ~real] == 0)


@pytest.fixture(scope="module")
def minilm(minilm_hub):
    return minilm_hub


def test_minilm_preprocess_gives_the_seeds_ids(minilm):
    inputs, _ = hub_outputs(minilm, ["I love transformers"])
    assert inputs["input_word_ids"][0, :6].tolist() == [101, 1045, 2293, 19081, 102, 0]
    assert inputs["input_word_ids"].shape == (1, 128)
    assert inputs["input_mask"][0, :6].tolist() == [1, 1, 1, 1, 1, 0]


def test_minilm_matches_an_independent_numpy_bert(minilm):
    assert_matches_numpy_bert(default_bert_checkpoint_dir(), minilm, SENTENCES)


def test_minilm_attention_probabilities_match_numpy_bert(minilm):
    assert_attention_matches_numpy_bert(default_bert_checkpoint_dir(), minilm, SENTENCES)


def test_tiny_attention_probabilities_match_numpy_bert(tiny_bert_checkpoint, tiny_hub_bert):
    texts = ["team goal", "the bank said shares rose after profits"]
    assert_attention_matches_numpy_bert(tiny_bert_checkpoint, tiny_hub_bert, texts)


@pytest.mark.slow
def test_bfloat16_attention_probabilities_are_float32_close_to_numpy_bert(
    tiny_bert_checkpoint, bfloat16_hub_bert
):
    texts = ["team goal", "the bank said shares rose after profits"]
    assert_attention_matches_numpy_bert(tiny_bert_checkpoint, bfloat16_hub_bert, texts, 0.03)


@pytest.mark.slow
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


# Fine-tunes a TF-Hub encoder under XLA on three batches of other ids, then a model that
# slices a table by the input's length inside a SavedModel function, as the Model
# Garden's position embedding does; each compile logs a line (TF_CPP_VMODULE).
COUNT_XLA_COMPILES = """
import sys, tempfile
import tensorflow as tf
import tensorflow_hub as hub

def compiles(layer, inputs, outputs=lambda y: y):
    @tf.function(jit_compile=True)
    def step(batch):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(outputs(layer(batch, training=True)) ** 2)
        return tape.gradient(loss, layer.trainable_variables)
    print("COUNT FROM HERE", file=sys.stderr, flush=True)
    for first_id in (5, 6, 7):
        step(inputs(first_id))

def bert_inputs(first_id):
    ids = tf.fill((2, 6), first_id)
    return dict(input_word_ids=ids, input_mask=tf.ones_like(ids), input_type_ids=tf.zeros_like(ids))

class Sliced(tf.Module):
    def __init__(self):
        self.table = tf.Variable(tf.ones((8, 4)))
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
    def __call__(self, ids):
        return self.table[: tf.shape(ids)[1]] * tf.cast(ids[..., None], tf.float32)

compiles(hub.KerasLayer(sys.argv[1], trainable=True), bert_inputs, lambda y: y["pooled_output"])
path = tempfile.mkdtemp()
tf.saved_model.save(Sliced(), path)
compiles(hub.KerasLayer(path, trainable=True), lambda first_id: tf.fill((2, 6), first_id))
"""


@pytest.mark.slow
def test_xla_compiles_a_training_step_through_the_encoder_once(tiny_hub_bert):
    """Gathered position rows: a step through the encoder compiles once for a shape,
    where a slice by the input's length compiled again for every batch and weight."""
    import subprocess
    import sys

    from tests.helpers.processes import environment

    result = subprocess.run(
        [sys.executable, "-c", COUNT_XLA_COMPILES, str(tiny_hub_bert.encoder)],
        capture_output=True, text=True, timeout=300,
        env={**environment("0"), "TF_CPP_VMODULE": "device_compiler=1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    _, encoder_log, sliced_log = result.stderr.split("COUNT FROM HERE")
    compiled = "Compilation of XLA executable"
    assert encoder_log.count(compiled) == 1
    assert sliced_log.count(compiled) == 3  # the count sees what it is to see


def test_sequence_length_is_configurable(tiny_hub_bert):
    inputs, outputs = hub_outputs(tiny_hub_bert, ["team goal"])
    assert inputs["input_word_ids"].shape == (1, 32)
    assert outputs["sequence_output"].shape == (1, 32, 16)


@pytest.fixture(scope="module")
def bfloat16_hub_bert(tiny_bert_checkpoint, tmp_path_factory):
    return convert_bert(
        tiny_bert_checkpoint,
        tmp_path_factory.mktemp("hub_bf16") / "tiny",
        seq_length=32,
        compute_dtype="bfloat16",
    )


@pytest.mark.slow
def test_a_bfloat16_encoder_computes_in_bfloat16_close_to_numpy_bert(
    tiny_bert_checkpoint, tiny_hub_bert, bfloat16_hub_bert
):
    texts = ["team goal", "the bank said shares rose after profits"]
    inputs, outputs = hub_outputs(bfloat16_hub_bert, texts)
    _, float32_outputs = hub_outputs(tiny_hub_bert, texts)
    assert outputs["pooled_output"].dtype == tf.bfloat16
    ids, mask, types = (inputs[k] for k in ("input_word_ids", "input_mask", "input_type_ids"))
    sequence, pooled, _ = NumpyBert(tiny_bert_checkpoint)(ids, mask, types)
    real = mask.astype(bool)
    converted = tf.cast(outputs["sequence_output"], tf.float32).numpy()[real]
    error = np.abs(converted - sequence[real]).max()
    # bfloat16 keeps 8 significant bits: errors of a few parts in a thousand of the scale,
    # where float32 stays below a part in a million.
    float32_error = np.abs(float32_outputs["sequence_output"].numpy()[real] - sequence[real]).max()
    assert float32_error < 1e-5 * np.abs(sequence).max() < error < 0.03 * np.abs(sequence).max()
    pooled_error = np.abs(tf.cast(outputs["pooled_output"], tf.float32).numpy() - pooled).max()
    assert pooled_error < 0.03


@pytest.mark.slow
def test_a_bfloat16_encoder_keeps_float32_weights_and_fine_tunes(bfloat16_hub_bert):
    import tensorflow_hub as hub

    from kerasformer.models import build_bert_classifier

    encoder = hub.KerasLayer(str(bfloat16_hub_bert.encoder), trainable=True)
    assert {v.dtype for v in encoder.trainable_variables} == {tf.float32}
    model = build_bert_classifier(
        4, bfloat16_hub_bert.preprocess, bfloat16_hub_bert.encoder, trainable=True
    )
    texts = tf.constant(["team goal season", "bank shares profit"])
    with tf.GradientTape() as tape:
        probabilities = model(texts, training=True)
        loss = -tf.reduce_sum(tf.math.log(probabilities[:, 0]))
    assert probabilities.dtype == tf.float32
    np.testing.assert_allclose(probabilities.numpy().sum(axis=1), 1.0, rtol=1e-5)
    gradients = tape.gradient(loss, model.trainable_variables)
    assert all(g is not None and g.dtype == tf.float32 for g in gradients)


def test_an_unknown_compute_dtype_is_a_clear_error(tiny_bert_checkpoint, tmp_path):
    with pytest.raises(KerasformerError, match="compute_dtype must be one of float32, bfloat16"):
        convert_bert(tiny_bert_checkpoint, tmp_path / "out", compute_dtype="float16")


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


# Each case: (config.json overrides, {file: edit of its bytes}, extra CLI arguments,
# fragments the one error line must hold). The tiny checkpoint has 2 layers, hidden size
# 16, 2 heads and 64 positions; {vocab} is its vocabulary size (tiny_bert_vocabulary).
# Every number expected below is one of those or one written here.
def drop_last_lines(count):
    return lambda data: b"".join(data.splitlines(keepends=True)[:-count])


def add_lines(count):
    return lambda data: data + b"".join(b"extra%d\n" % i for i in range(count))


BAD_CHECKPOINTS = {
    "config_has_fewer_layers_than_the_tensors": (
        {"num_hidden_layers": 1}, {}, [],
        ["config.json: num_hidden_layers is 1 but model.safetensors holds 2 encoder layers",
         "set num_hidden_layers to 2"],
    ),
    "config_has_more_layers_than_the_tensors": (
        {"num_hidden_layers": 3}, {}, [],
        ["config.json: num_hidden_layers is 3 but model.safetensors holds 2 encoder layers",
         "set num_hidden_layers to 2"],
    ),
    "vocab_txt_is_10_lines_short": (
        {}, {"vocab.txt": drop_last_lines(10)}, [],
        ["vocab.txt has {short} tokens (lines) but the checkpoint's word embeddings have "
         "{vocab} rows", "use the vocab.txt that came with these weights"],
    ),
    "vocab_txt_is_5_lines_long": (
        {}, {"vocab.txt": add_lines(5)}, [],
        ["vocab.txt has {long} tokens (lines) but the checkpoint's word embeddings have "
         "{vocab} rows"],
    ),
    "vocab_txt_lacks_cls": (
        {}, {"vocab.txt": lambda data: data.replace(b"[CLS]", b"[XLS]")}, [],
        ["vocab.txt lacks the special tokens [CLS]"],
    ),
    "vocab_size_differs_from_the_embeddings": (
        {"vocab_size": 1000}, {}, [],
        ["config.json: vocab_size is 1000 but model.safetensors has {vocab} rows in "
         "embeddings.word_embeddings.weight", "set vocab_size to {vocab}"],
    ),
    "hidden_size_differs_from_the_embeddings": (
        {"hidden_size": 32}, {}, [],
        ["config.json: hidden_size is 32 but model.safetensors has 16 columns in "
         "embeddings.word_embeddings.weight", "set hidden_size to 16"],
    ),
    "max_positions_differ_from_the_position_table": (
        {"max_position_embeddings": 512}, {}, [],
        ["config.json: max_position_embeddings is 512 but model.safetensors has 64 rows",
         "set max_position_embeddings to 64"],
    ),
    "zero_heads": (
        {"num_attention_heads": 0}, {}, [],
        ["config.json: num_attention_heads must be a whole number >= 1, got 0"],
    ),
    "heads_that_do_not_divide_hidden": (
        {"num_attention_heads": 3}, {}, [],
        ["hidden_size 16 is not divisible by num_attention_heads 3",
         "set num_attention_heads to a divisor of 16"],
    ),
    "negative_layers": (
        {"num_hidden_layers": -2}, {}, [],
        ["config.json: num_hidden_layers must be a whole number >= 1, got -2"],
    ),
    "boolean_hidden_size": (
        {"hidden_size": True}, {}, [],
        ["config.json: hidden_size must be a whole number >= 1, got true"],
    ),
    "float_layer_count": (
        {"num_hidden_layers": 2.0}, {}, [],
        ["config.json: num_hidden_layers must be a whole number >= 1, got 2.0"],
    ),
    "dropout_above_one": (
        {"hidden_dropout_prob": 1.5}, {}, [],
        ["config.json: hidden_dropout_prob must be a number in [0, 1), got 1.5"],
    ),
    "config_json_is_a_list": (
        {}, {"config.json": lambda data: b"[" + data + b"]"}, [],
        ["config.json holds a JSON list, not an object of settings",
         "replace it with the checkpoint's own config.json"],
    ),
    "tokenizer_config_is_not_json": (
        {}, {"tokenizer_config.json": lambda data: b"do_lower_case = True\n"}, [],
        ["tokenizer_config.json is not valid JSON", "or use the tokenizer_config.json"],
    ),
    "do_lower_case_is_a_string": (
        {}, {"tokenizer_config.json": lambda data: b'{"do_lower_case": "false"}'}, [],
        ['tokenizer_config.json: do_lower_case must be true or false, got "false"'],
    ),
    "latin_1_byte_in_config_json": (
        {}, {"config.json": lambda data: data.replace(b'"bert"', b'"bert", "x": "caf\xe9"')},
        [], ["config.json is not UTF-8 text (byte 0xe9 at offset", "save it as UTF-8"],
    ),
    "latin_1_byte_in_vocab_txt": (
        {}, {"vocab.txt": lambda data: data.replace(b"[MASK]", b"caf\xe9")}, [],
        ["vocab.txt is not UTF-8 text (byte 0xe9 at offset",
         "use the vocab.txt that came with these weights"],
    ),
    "latin_1_byte_in_tokenizer_config": (
        {}, {"tokenizer_config.json": lambda data: b'{"do_lower_case": true, "x": "caf\xe9"}'},
        [], ["tokenizer_config.json is not UTF-8 text (byte 0xe9 at offset"],
    ),
    "seq_length_beyond_the_position_table": (
        {}, {}, ["--seq-length", "128"],
        ["--seq-length 128 exceeds the checkpoint's max_position_embeddings 64",
         "pass --seq-length 64 or less"],
    ),
}  # fmt: skip


def break_checkpoint(directory, overrides, edits):
    write_tiny_bert_checkpoint(directory, config_overrides=overrides)
    for name, edit in edits.items():
        (directory / name).write_bytes(edit((directory / name).read_bytes()))
    return directory


@pytest.fixture(scope="module")
def cli_errors(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad_bert")
    argvs = [
        ["convert-bert", break_checkpoint(root / name, overrides, edits),
         "--out", root / name / "hub", "--seq-length", "16", *extra]
        for name, (overrides, edits, extra, _) in BAD_CHECKPOINTS.items()
    ]  # fmt: skip
    # One interpreter for every case (TensorFlow starts once); the converter is imported
    # first, so TensorFlow's import-time noise stays out of the cases' stderr.
    results = run_commands(*argvs, imports=("kerasformer.convert.convert_bert",), timeout=900)
    return dict(zip(BAD_CHECKPOINTS, results, strict=True))


@pytest.mark.parametrize("case", BAD_CHECKPOINTS)
def test_cli_refuses_a_bad_checkpoint_in_one_line(cli_errors, case):
    vocab = len(tiny_bert_vocabulary())
    code, stderr = cli_errors[case]["code"], cli_errors[case]["stderr"]
    assert code == 2, stderr
    assert stderr.startswith("kerasformer: error: ") and stderr.count("\n") == 1, stderr
    for fragment in BAD_CHECKPOINTS[case][3]:
        assert fragment.format(vocab=vocab, short=vocab - 10, long=vocab + 5) in stderr


def test_command_line_refuses_a_config_that_drops_layers(tmp_path):
    checkpoint = write_tiny_bert_checkpoint(
        tmp_path / "ckpt", config_overrides={"num_hidden_layers": 1}
    )
    finished = run_kerasformer(
        "convert-bert", str(checkpoint), "--out", str(tmp_path / "hub"), "--seq-length", "16"
    )
    assert finished.returncode == 2
    assert finished.stderr == (
        f"kerasformer: error: {checkpoint / 'config.json'}: num_hidden_layers is 1 but "
        "model.safetensors holds 2 encoder layers (encoder.layer.0 to encoder.layer.1); set "
        "num_hidden_layers to 2 or use the config.json that came with these weights.\n"
    )
    assert not (tmp_path / "hub").exists()
