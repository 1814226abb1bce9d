"""The Keras tutorial's own code, with its two layer classes swapped for kerasformer's.

"Text classification with Transformer" (keras.io; `../shared/seeds/001_*.txt` follows
it) defines ``TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)`` and
``TransformerBlock(embed_dim, num_heads, ff_dim, rate=0.1)``, and projects built on it
call them so. Each test runs the tutorial's model-building, compiling and fitting code
word for word in a fresh process, the class definitions replaced by one import (and its
IMDB download by synthetic reviews: no network here), then saves, reloads and compares.
Run under Keras 3 on the TensorFlow and the JAX backend, and under tf-keras.

The same process then gives the sizes the other way round, ``(vocab_size, maxlen,
embed_dim)``: the first out-of-range id must stop that model with kerasformer's message,
on every backend.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Starts a fresh TensorFlow (or JAX) process per case: out of the quick tier.
pytestmark = pytest.mark.slow

REPOSITORY_ROOT = Path(__file__).resolve().parents[1]
# (label, KERAS_BACKEND, the tutorial's imports, kerasformer's import in place of its classes)
KERASES = {
    "keras3-tensorflow": (
        "tensorflow", "import keras\nfrom keras import layers\n",
        "from kerasformer.layers import TokenAndPositionEmbedding, TransformerBlock\n",
    ),
    "keras3-jax": (
        "jax", "import keras\nfrom keras import layers\n",
        "from kerasformer.layers import TokenAndPositionEmbedding, TransformerBlock\n",
    ),
    "tf-keras": (
        "tensorflow", "import tf_keras as keras\nfrom tf_keras import layers\n",
        "from kerasformer.tf_keras.layers import TokenAndPositionEmbedding, TransformerBlock\n",
    ),
}  # fmt: skip

# In place of `keras.datasets.imdb.load_data(num_words=vocab_size)`: reviews of word ids
# below vocab_size whose label is told by which half of the vocabulary they draw from.
SYNTHETIC_IMDB = """
import numpy as np
rng = np.random.default_rng(0)
def reviews(count):
    labels = rng.integers(0, 2, count)
    texts = [list(rng.integers(1 + label * vocab_size // 2, (1 + label) * vocab_size // 2,
                               rng.integers(20, 260))) for label in labels]
    return texts, labels
(x_train, y_train), (x_val, y_val) = reviews(256), reviews(64)
"""

# The tutorial, from its sizes to `model.fit`, as it is written (epochs and data aside).
TUTORIAL = """
vocab_size = 20000  # Only consider the top 20k words
maxlen = 200  # Only consider the first 200 words of each movie review
{data}
print(len(x_train), "Training sequences")
print(len(x_val), "Validation sequences")
x_train = keras.utils.pad_sequences(x_train, maxlen=maxlen)
x_val = keras.utils.pad_sequences(x_val, maxlen=maxlen)

embed_dim = 32  # Embedding size for each token
num_heads = 2  # Number of attention heads
ff_dim = 32  # Hidden layer size in feed forward network inside transformer

inputs = layers.Input(shape=(maxlen,))
embedding_layer = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)
x = embedding_layer(inputs)
transformer_block = TransformerBlock(embed_dim, num_heads, ff_dim)
x = transformer_block(x)
x = layers.GlobalAveragePooling1D()(x)
x = layers.Dropout(0.1)(x)
x = layers.Dense(20, activation="relu")(x)
x = layers.Dropout(0.1)(x)
outputs = layers.Dense(2, activation="softmax")(x)

model = keras.Model(inputs=inputs, outputs=outputs)

model.compile(
    optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"]
)
history = model.fit(
    x_train, y_train, batch_size=32, epochs=3, validation_data=(x_val, y_val)
)
"""

SAVE_AND_RELOAD = """
import json, sys
predicted = model.predict(x_val, verbose=0)
model.save(sys.argv[1])
reloaded = keras.models.load_model(sys.argv[1])
report = {
    "val_accuracy": history.history["val_accuracy"],
    "finite": bool(np.isfinite(predicted).all()),
    "reloaded_gap": float(np.abs(reloaded.predict(x_val, verbose=0) - predicted).max()),
    "rate": transformer_block.get_config()["dropout"],
}
"""

# The sizes the other way round, in the same process (a fresh one per case costs seconds).
SWAPPED = """
vocab_size, maxlen, embed_dim = 200, 64, 8
ids = np.random.default_rng(0).integers(1, vocab_size, (32, maxlen))
inputs = layers.Input(shape=(maxlen,))
x = TokenAndPositionEmbedding(vocab_size, maxlen, embed_dim)(inputs)  # the other order
x = layers.GlobalAveragePooling1D()(TransformerBlock(embed_dim, 2, 8, rate=0.2)(x))
swapped = keras.Model(inputs, layers.Dense(2, activation="softmax")(x))
swapped.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
try:
    swapped.fit(ids, ids[:, 0] % 2, batch_size=8, epochs=1, verbose=0)
    report["swapped_error"] = None
except Exception as error:  # each backend wraps the layer's message in its own error
    report["swapped_error"] = str(error)
print(json.dumps(report))
"""


def run_in_fresh_process(kerases: str, script: str, *arguments: str):
    backend, imports, ours = KERASES[kerases]
    env = {key: value for key, value in os.environ.items() if key != "KERASFORMER_KERAS"}
    env.update(KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2", JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPOSITORY_ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-c", imports + ours + textwrap.dedent(script), *arguments],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip


@pytest.mark.parametrize("kerases", list(KERASES))
def test_the_tutorials_code_trains_saves_and_reloads_and_swapped_sizes_stop(kerases, tmp_path):
    script = TUTORIAL.format(data=SYNTHETIC_IMDB) + SAVE_AND_RELOAD + SWAPPED
    done = run_in_fresh_process(kerases, script, str(tmp_path / "tutorial.keras"))
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["finite"] and report["reloaded_gap"] < 1e-5
    assert report["rate"] == 0.1  # the tutorial's default dropout, saved by its name
    # The two halves of the vocabulary tell the classes: a model reading its ids as the
    # tutorial means them learns it (swapped sizes trained to chance, 0.55, on JAX).
    assert report["val_accuracy"][-1] > 0.9, report
    error = report["swapped_error"] or ""
    assert "got a token id outside 0 to 63 (vocab_size=64)" in error, error[-4000:]
    assert "TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)" in error
