import json
import re

import numpy as np
import pytest

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.export import ExportedClassifier, export_classifier
from kerasformer.models import adapt_vectorizer, build_transformer_classifier
from tests.helpers.processes import (
    WITHOUT_KERASFORMER,
    run_python_json,
    run_saved_model_cli,
)

TEXTS = ["Shares fell as the bank warned on profits", "The striker scored twice in the final"]

LOAD_WITHOUT_KERASFORMER = (
    WITHOUT_KERASFORMER
    + """
import json
import tensorflow as tf

loaded = tf.saved_model.load(sys.argv[1])
out = loaded.signatures["serving_default"](inputs=tf.constant(json.loads(sys.argv[2])))
names = loaded.signatures["class_names"]()["class_names"].numpy()
print(json.dumps({
    "probabilities": out["probabilities"].numpy().tolist(),
    "predicted_class": [c.decode() for c in out["predicted_class"].numpy()],
    "class_names": [c.decode() for c in names],
}))
"""
)


def test_export_serves_raw_strings_without_kerasformer(trained_bbc):
    served = run_python_json(
        LOAD_WITHOUT_KERASFORMER, str(trained_bbc.export_dir), json.dumps(TEXTS)
    )
    expected = trained_bbc.model.predict(tf.constant(TEXTS), verbose=0)
    np.testing.assert_allclose(served["probabilities"], expected, rtol=1e-5, atol=1e-6)
    assert served["class_names"] == list(trained_bbc.data.class_names)
    assert served["predicted_class"] == [served["class_names"][i] for i in expected.argmax(1)]


def test_saved_model_cli_prints_one_probability_per_class(trained_bbc):
    result = run_saved_model_cli(
        trained_bbc.export_dir, 'inputs=["The government announced a new election date"]'
    )
    assert result.returncode == 0, result.stderr[-2000:]
    block = result.stdout.split("Result for output key probabilities:")[1]
    numbers = [float(x) for x in re.findall(r"\d+\.\d+(?:e-?\d+)?", block)]
    assert len(numbers) == 5
    assert abs(sum(numbers) - 1) < 1e-5


def test_exported_classifier_matches_keras_model_in_batches(trained_bbc):
    classifier = ExportedClassifier(trained_bbc.export_dir)
    texts = list(trained_bbc.data.splits["test"].texts[:50])
    expected = trained_bbc.model.predict(tf.constant(texts), verbose=0)
    np.testing.assert_allclose(
        classifier.predict_proba(texts, batch_size=16), expected, rtol=1e-5, atol=1e-6
    )
    assert classifier.class_names == trained_bbc.data.class_names


def test_keras_file_beside_the_saved_model_loads_and_agrees(trained_bbc):
    model = keras.models.load_model(trained_bbc.export_dir / "model.keras")
    np.testing.assert_allclose(
        model.predict(tf.constant(TEXTS), verbose=0),
        trained_bbc.model.predict(tf.constant(TEXTS), verbose=0),
        rtol=1e-6,
    )


@pytest.fixture
def small_model():
    model = build_transformer_classifier(3, vocab_size=50, maxlen=8)
    adapt_vectorizer(model, ["red apple", "blue sky", "green grass"])
    return model


def test_failed_export_leaves_the_earlier_one_intact(small_model, tmp_path, monkeypatch):
    export_dir = export_classifier(small_model, ["r", "b", "g"], tmp_path / "export")
    before = sorted(p.name for p in export_dir.iterdir())

    def broken_save(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(type(small_model), "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        export_classifier(small_model, ["r", "b", "g"], export_dir)
    assert sorted(p.name for p in export_dir.iterdir()) == before
    assert [p.name for p in tmp_path.iterdir()] == ["export"]  # no staging left behind


def test_the_saved_model_leaves_the_optimizer_out_and_the_model_keeps_it(small_model, tmp_path):
    """Adam's slots are not saved with the serving signature (they would be two more
    values per weight); the trained model still has its optimizer after the export."""
    small_model.compile("adam", "sparse_categorical_crossentropy")
    small_model.fit(tf.constant(["red apple", "blue sky"]), tf.constant([0, 1]), verbose=0)
    optimizer = small_model.optimizer
    export_dir = export_classifier(small_model, ["r", "b", "g"], tmp_path / "export")
    saved = tf.train.list_variables(str(export_dir / "variables" / "variables"))
    values = sum(int(np.prod(shape)) for name, shape in saved if name.endswith("_VALUE"))
    assert not [name for name, _ in saved if "optimizer" in name.lower()]
    # The vectorizer's vocabulary is a table, not a variable: the weights with a shape.
    weights = sum(int(np.prod(w.shape)) for w in small_model.weights if hasattr(w, "shape"))
    assert weights <= values < weights + 8
    assert small_model.optimizer is optimizer
    small_model.fit(tf.constant(["green grass"]), tf.constant([2]), verbose=0)  # trains on


def test_class_names_must_match_the_outputs(small_model, tmp_path):
    with pytest.raises(ValueError, match="2 class names for a model with 3 outputs"):
        export_classifier(small_model, ["a", "b"], tmp_path / "x")


def test_loading_something_that_is_not_an_export_is_a_clear_error(tmp_path):
    with pytest.raises(KerasformerError, match="is not an exported model"):
        ExportedClassifier(tmp_path)
