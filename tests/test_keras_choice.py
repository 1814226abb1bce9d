"""How a process picks the Keras of kerasformer's layers, and what each choice gives."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kerasformer.errors import KerasformerError
from kerasformer.layers import TokenAndPositionEmbedding, backend


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


def test_without_the_variable_tf_keras_is_chosen_when_installed():
    # tf_keras is installed here (the BERT family needs it): today's behaviour stays.
    assert backend.chosen_keras_version({}) == 2
    assert backend.KERAS_VERSION == 2 and backend.backend_name() == "tf_keras"


def test_a_tf_keras_layer_given_a_keras3_input_says_how_to_switch():
    import keras  # Keras 3

    layer = TokenAndPositionEmbedding(vocab_size=10, maxlen=4, embed_dim=2)
    with pytest.raises(ValueError, match="KERASFORMER_KERAS=3 before importing kerasformer"):
        layer(keras.Input((4,), dtype="int32"))


def run(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **env},
    )


def test_with_keras3_chosen_the_layers_go_into_a_keras3_sequential_model():
    result = run(
        "import keras, kerasformer\n"
        "from kerasformer.layers import TokenAndPositionEmbedding, TransformerBlock\n"
        "model = keras.Sequential([keras.Input((6,), dtype='int32'),\n"
        "    TokenAndPositionEmbedding(50, 6, 8), TransformerBlock(8, 2, 8)])\n"
        "print(kerasformer.layers.backend.backend_name(), model(keras.ops.ones((1, 6))).shape)",
        KERASFORMER_KERAS="3",
        KERAS_BACKEND="jax",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["jax", "(1,", "6,", "8)"]


def test_the_command_refuses_keras3_layers_in_one_line():
    result = run(
        "import sys\nfrom kerasformer.cli.main import main\nsys.exit(main(['train', '--help']))",
        KERASFORMER_KERAS="3",
    )
    # --help is answered by the parser, before the check; a real command is refused.
    assert result.returncode == 0
    result = run(
        "import sys\nfrom kerasformer.cli.main import main\n"
        "sys.exit(main(['predict', '/nonexistent', 'a text']))",
        KERASFORMER_KERAS="3",
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "kerasformer: error: KERASFORMER_KERAS=3 makes kerasformer's layers Keras 3 layers, "
        "but the kerasformer command trains and exports with tf-keras; unset "
        "KERASFORMER_KERAS to run it."
    )
