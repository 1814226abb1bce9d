"""The ``kerasformer`` console script starts on tf-keras alone, and a user's choice wins."""

from __future__ import annotations

import importlib.metadata
import os

import pytest

import kerasformer_command
from tests.helpers.processes import run_python_json

# Modules a command starts without (Keras 3, and what it or kerasformer's scoring and
# plotting would import), each a second of its start on a 2-core CPU. TensorFlow itself
# imports jax where it is installed (for tf.lite), so jax is not among them.
NOT_FOR_COMMANDS = ("keras", "sklearn", "matplotlib", "seqeval")

LOADED_AT_START = """
import json, sys
import kerasformer_command
kerasformer_command.use_tf_keras_only()
import kerasformer.cli.main
import tensorflow as tf
heavy = [name for name in sys.argv[1:] if name in sys.modules]
print(json.dumps({"heavy": heavy, "tf.keras": tf.keras.__name__}))
"""


@pytest.mark.slow
def test_a_command_starts_without_keras_3_scikit_learn_or_matplotlib():
    loaded = run_python_json(LOADED_AT_START, *NOT_FOR_COMMANDS)
    assert loaded["heavy"] == []
    assert loaded["tf.keras"].startswith("tf_keras"), "tf.keras should be tf-keras in a command"


def test_the_variables_are_set_only_where_the_user_left_them_unset(monkeypatch):
    environment = {"KERASFORMER_KERAS": "3"}
    monkeypatch.setattr(os, "environ", environment)
    kerasformer_command.use_tf_keras_only()
    assert environment == {"KERASFORMER_KERAS": "3", "TF_USE_LEGACY_KERAS": "1"}


def test_the_installed_console_script_goes_through_it():
    (script,) = importlib.metadata.entry_points(group="console_scripts", name="kerasformer")
    assert script.value == "kerasformer_command:main"
