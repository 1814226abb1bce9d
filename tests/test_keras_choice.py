"""The two layer namespaces: `kerasformer.layers` (Keras 3 unless ``KERASFORMER_KERAS=2``)
and `kerasformer.tf_keras.layers` (tf-keras), side by side in one process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import keras
import pytest
import tf_keras

import kerasformer.layers
import kerasformer.tf_keras.layers
from kerasformer import backend
from kerasformer.errors import KerasformerError
from kerasformer.validation import LayerError
from tests.helpers.data import topic_rows, write_topic_csv

TINY = ["--epochs", "1", "--batch-size", "16", "--vocab-size", "200", "--maxlen", "16",
        "--embed-dim", "8", "--num-heads", "1", "--ff-dim", "8"]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "expected"),
    [("2", 2), ("tf_keras", 2), ("3", 3), ("keras", 3), (" 3 ", 3), ("KERAS", 3)],
)
def test_the_variable_names_the_keras(value, expected):
    assert backend.chosen_keras_version({"KERASFORMER_KERAS": value}) == expected


@pytest.mark.parametrize("value", ["4", "jax", "keras3x"])
def test_an_unknown_value_is_a_one_line_error_naming_the_choices(value):
    with pytest.raises(KerasformerError, match="set it to 2 .tf-keras. or 3 .Keras 3.") as error:
        backend.chosen_keras_version({"KERASFORMER_KERAS": value})
    assert "\n" not in str(error.value)


def test_without_the_variable_the_layers_are_keras3_layers():
    assert backend.chosen_keras_version({}) == 3
    assert kerasformer.layers.backend.KERAS_VERSION == 3
    assert kerasformer.layers.backend.backend_name() == keras.backend.backend()


@pytest.mark.parametrize("name", kerasformer.layers.__all__)
def test_each_public_name_is_a_keras3_class_here_and_a_tf_keras_class_there(name):
    keras3, keras2 = getattr(kerasformer.layers, name), getattr(kerasformer.tf_keras.layers, name)
    assert keras3 is not keras2 and keras3.__name__ == keras2.__name__
    if isinstance(keras3, type):
        assert issubclass(keras3, keras.layers.Layer)
        assert issubclass(keras2, tf_keras.layers.Layer)
        assert not issubclass(keras3, tf_keras.layers.Layer)
        # Each Keras finds its own class by the registered name a saved model holds.
        registered = f"kerasformer>{name}"
        assert keras.saving.get_registered_object(registered) is keras3
        assert tf_keras.saving.get_registered_object(registered) is keras2


def test_the_two_namespaces_share_one_error_class():
    for layers in (kerasformer.layers, kerasformer.tf_keras.layers):
        with pytest.raises(LayerError, match="`num_heads` must be a positive integer"):
            layers.TransformerBlock(8, 0, 8)


def test_a_tf_keras_layer_given_a_keras3_input_names_the_keras3_namespace():
    layer = kerasformer.tf_keras.layers.TokenAndPositionEmbedding(4, 10, 2)
    with pytest.raises(LayerError, match="import it from kerasformer.layers") as error:
        layer(keras.Input((4,), dtype="int32"))
    assert "\n" not in str(error.value)


def test_a_keras3_layer_given_a_tf_keras_input_names_the_tf_keras_namespace():
    layer = kerasformer.layers.TokenAndPositionEmbedding(4, 10, 2)
    with pytest.raises(LayerError, match="import it from kerasformer.tf_keras.layers") as error:
        layer(tf_keras.Input((4,), dtype="int32"))
    assert "\n" not in str(error.value)


def test_both_kerases_build_models_in_one_process():
    keras3_model = keras.Sequential(
        [keras.Input((6,), dtype="int32"), kerasformer.layers.TokenAndPositionEmbedding(6, 50, 8)]
    )
    tf_keras_model = tf_keras.Sequential(
        [
            tf_keras.Input((6,), dtype="int32"),
            kerasformer.tf_keras.layers.TokenAndPositionEmbedding(6, 50, 8),
        ]
    )
    assert keras3_model.output_shape == tf_keras_model.output_shape == (None, 6, 8)


def run(code: str, *arguments: str, **env: str) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key != "KERASFORMER_KERAS"}
    return subprocess.run(
        [sys.executable, "-c", code, *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        env={**environment, "TF_CPP_MIN_LOG_LEVEL": "2", **env},
    )


@pytest.mark.slow
def test_keras_2_makes_the_namespace_the_tf_keras_one_module_for_module():
    result = run(
        "import tf_keras, kerasformer\n"
        "import kerasformer.layers as layers, kerasformer.tf_keras.layers as tf_keras_layers\n"
        "from kerasformer.layers.transformer_block import TransformerBlock\n"
        "from kerasformer.layers.backend import KERAS_VERSION\n"
        "model = tf_keras.Sequential([tf_keras.Input((6,), dtype='int32'),\n"
        "    layers.TokenAndPositionEmbedding(6, 50, 8), layers.TransformerBlock(8, 2, 8)])\n"
        "print(KERAS_VERSION, layers is tf_keras_layers is kerasformer.layers,\n"
        "      TransformerBlock is tf_keras_layers.TransformerBlock, model.output_shape)",
        KERASFORMER_KERAS="2",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["2", "True", "True", "(None,", "6,", "8)"]


@pytest.mark.slow
def test_keras_3_set_as_before_still_gives_keras3_layers():
    result = run(
        "import keras\n"
        "from kerasformer.layers import TokenAndPositionEmbedding, TransformerBlock\n"
        "model = keras.Sequential([keras.Input((6,), dtype='int32'),\n"
        "    TokenAndPositionEmbedding(6, 50, 8), TransformerBlock(8, 2, 8)])\n"
        "print(keras.backend.backend(), model(keras.ops.ones((1, 6))).shape)",
        KERASFORMER_KERAS="3",
        KERAS_BACKEND="jax",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["jax", "(1,", "6,", "8)"]


@pytest.mark.slow
def test_the_command_trains_and_predicts_whatever_the_variable_says(tmp_path):
    # It used to refuse KERASFORMER_KERAS=3; it always uses the tf-keras namespace now.
    write_topic_csv(tmp_path / "tickets.csv", topic_rows(copies=8))
    export_dir = tmp_path / "tickets"
    commands = [
        ["train", "--train-file", str(tmp_path / "tickets.csv"), "--text-column", "body",
         "--label-column", "topic", "--export-dir", str(export_dir), *TINY],
        ["predict", str(export_dir), "A record lap", "--json"],
    ]  # fmt: skip
    for command in commands:
        result = run(
            "import sys\nfrom kerasformer.cli.main import main\nsys.exit(main(sys.argv[1:]))",
            *command,
            KERASFORMER_KERAS="3",
            KERAS_BACKEND="jax",
        )
        assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.splitlines()[0])["class"] in ("sport", "travel")
