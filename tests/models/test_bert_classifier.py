import json

import numpy as np
import pytest

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.export import ExportedClassifier, export_classifier
from kerasformer.models import build_bert_classifier
from kerasformer.models.bert_classifier import ONLINE_ENCODER, ONLINE_PREPROCESS, HubLayer
from tests.helpers.processes import run_python_json


def test_functional_model_in_the_seeds_shape(tiny_hub_bert):
    import tensorflow_hub as hub

    model = build_bert_classifier(4, tiny_hub_bert.preprocess, tiny_hub_bert.encoder)
    assert isinstance(model, keras.Model) and not isinstance(model, keras.Sequential)
    kinds = [type(layer) for layer in model.layers]
    assert issubclass(HubLayer, hub.KerasLayer)
    assert kinds == [
        keras.layers.InputLayer,
        HubLayer,
        HubLayer,
        keras.layers.Dropout,
        keras.layers.Dense,
    ]
    assert model.layers[3].rate == 0.1
    probabilities = model(tf.constant(["team goal", "bank shares profit"])).numpy()
    assert probabilities.shape == (2, 4)
    np.testing.assert_allclose(probabilities.sum(1), 1.0, rtol=1e-5)


@pytest.mark.slow
def test_frozen_encoder_leaves_only_the_head_trainable(tiny_hub_bert):
    frozen = build_bert_classifier(4, tiny_hub_bert.preprocess, tiny_hub_bert.encoder)
    assert [w.shape for w in frozen.trainable_weights] == [(16, 4), (4,)]
    unfrozen = build_bert_classifier(
        4, tiny_hub_bert.preprocess, tiny_hub_bert.encoder, trainable=True
    )
    assert len(unfrozen.trainable_weights) > 20


def test_unreachable_url_fails_fast_and_says_how_to_make_local_handles(offline):
    with pytest.raises(KerasformerError) as caught:
        build_bert_classifier(4, ONLINE_PREPROCESS, ONLINE_ENCODER)
    message = str(caught.value)
    assert "tfhub.dev is unreachable" in message and "kerasformer convert-bert" in message
    assert "\n" not in message


def test_missing_local_handle_is_a_clear_error(tmp_path, tiny_hub_bert):
    with pytest.raises(KerasformerError, match="--encoder .* is not a SavedModel directory"):
        build_bert_classifier(4, tiny_hub_bert.preprocess, tmp_path)


LOAD_KERAS_FILE = """
import json, sys
import kerasformer  # registers HubLayer, the layer that wraps TF-Hub models
import tensorflow as tf
import tf_keras

model = tf_keras.models.load_model(sys.argv[1])
print(json.dumps(model.predict(tf.constant(json.loads(sys.argv[2])), verbose=0).tolist()))
"""


@pytest.mark.slow
def test_exported_model_keras_loads_with_plain_tf_keras(tiny_hub_bert, tmp_path):
    model = build_bert_classifier(4, tiny_hub_bert.preprocess, tiny_hub_bert.encoder)
    export_dir = export_classifier(model, ["a", "b", "c", "d"], tmp_path / "bert")
    texts = ["team goal striker", "bank shares profit"]
    probabilities = run_python_json(
        LOAD_KERAS_FILE, str(export_dir / "model.keras"), json.dumps(texts)
    )
    served = ExportedClassifier(export_dir).predict_proba(texts)
    np.testing.assert_allclose(probabilities, served, rtol=1e-5, atol=1e-6)
