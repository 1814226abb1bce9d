"""kerasformer's layers in a Keras 3 project, with no variable set.

Each test runs a user's script in a fresh process whose environment has no
``KERASFORMER_KERAS``: only ``import keras`` and ``from kerasformer.layers import ...``. The
script builds a ``Sequential`` and a functional model, fits them, saves them as ``.keras``;
a second fresh process reloads the files and must give the same outputs. The first process
also builds kerasformer's TF-Hub BERT classifier (tf-keras) beside the Keras 3 models and
classifies raw strings with it. Run on the TensorFlow and the JAX backend.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

REPOSITORY_ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ["tensorflow", "jax"]

BUILD_FIT_SAVE = """
import json, sys
import numpy as np
import keras
from kerasformer.layers import (
    MaskedAveragePooling, TokenAndPositionEmbedding, TransformerBlock, TransformerDecoderBlock,
)

out = sys.argv[1]
keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
ids = rng.integers(1, 50, size=(64, 12)).astype("int32")
ids[:, 9:] = 0                                     # padding, masked by the embedding
labels = (ids[:, 0] % 2).astype("int32")

sequential = keras.Sequential([
    keras.Input((None,), dtype="int32"),
    TokenAndPositionEmbedding(16, 50, 16, position="none"),
    TransformerBlock(16, 2, 32, norm_first=True, position="rotary"),
    MaskedAveragePooling(),
    keras.layers.Dense(2, activation="softmax"),
])
inputs = keras.Input((None,), dtype="int32")
x = TokenAndPositionEmbedding(16, 50, 16)(inputs)
x = TransformerDecoderBlock(16, 2, 32)(x)
functional = keras.Model(inputs, keras.layers.Dense(2, activation="softmax")(
    MaskedAveragePooling()(x)))

report = {"backend": keras.backend.backend(),
          "layer_is_keras3": isinstance(sequential.layers[1], keras.layers.Layer)}
for name, model in (("sequential", sequential), ("functional", functional)):
    model.compile("adam", "sparse_categorical_crossentropy")
    before = [np.array(w) for w in model.trainable_weights]
    history = model.fit(ids, labels, epochs=2, batch_size=16, verbose=0)
    after = [np.array(w) for w in model.trainable_weights]
    report[name] = {
        "losses": history.history["loss"],
        "weights_moved": sum(not np.allclose(b, a) for b, a in zip(before, after)),
        "weights": len(after),
    }
    model.save(f"{out}/{name}.keras")
    np.save(f"{out}/{name}.npy", np.asarray(model.predict(ids, verbose=0)))
np.save(f"{out}/ids.npy", ids)
"""

BERT_BESIDE = """
from kerasformer.models import build_bert_classifier
import tensorflow as tf
bert = build_bert_classifier(3, sys.argv[2], sys.argv[3])
probabilities = bert(tf.constant(["the cup final", "stocks fell"])).numpy()
report["bert"] = {"shape": list(probabilities.shape), "sums": probabilities.sum(-1).tolist(),
                  "tf_keras_model": type(bert).__module__.startswith("tf_keras")}
"""

RELOAD = """
import sys
import numpy as np
import keras
import kerasformer  # registers kerasformer's layers; nothing else is needed to load

out = sys.argv[1]
ids = np.load(f"{out}/ids.npy")
for name in ("sequential", "functional"):
    model = keras.saving.load_model(f"{out}/{name}.keras")
    np.save(f"{out}/{name}_reloaded.npy", np.asarray(model.predict(ids, verbose=0)))
print(keras.backend.backend())
"""


def user_environment(backend: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "KERASFORMER_KERAS"}
    env.update(KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2", JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPOSITORY_ROOT), env.get("PYTHONPATH")]))
    return env


def run_script(script: str, backend: str, *arguments: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *arguments],
        capture_output=True,
        text=True,
        timeout=600,
        env=user_environment(backend),
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stdout


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_keras3_script_fits_saves_and_reloads_with_bert_beside(backend, tiny_hub_bert, tmp_path):
    script = BUILD_FIT_SAVE + BERT_BESIDE + "print(json.dumps(report))\n"
    hub = (str(tiny_hub_bert.preprocess), str(tiny_hub_bert.encoder))
    report = json.loads(run_script(script, backend, str(tmp_path), *hub).splitlines()[-1])

    assert report["backend"] == backend and report["layer_is_keras3"]
    for name in ("sequential", "functional"):
        fitted = report[name]
        assert all(np.isfinite(fitted["losses"]))
        # Every weight takes part: a layer cut off from the loss would keep its values.
        assert fitted["weights_moved"] == fitted["weights"] > 0
    assert report["bert"]["shape"] == [2, 3] and report["bert"]["tf_keras_model"]
    np.testing.assert_allclose(report["bert"]["sums"], 1.0, atol=1e-5)

    assert run_script(RELOAD, backend, str(tmp_path)).split()[-1] == backend
    for name in ("sequential", "functional"):
        saved = np.load(tmp_path / f"{name}.npy")
        reloaded = np.load(tmp_path / f"{name}_reloaded.npy")
        assert saved.shape == (64, 2)
        np.testing.assert_allclose(reloaded, saved, atol=1e-6)
