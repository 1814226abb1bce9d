"""save_signatures: a SavedModel that serves its signatures, without tf-keras's per-layer traces."""

import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.export.saved_model_files import save_signatures


def module_with_a_model() -> tf.Module:
    model = keras.Sequential([keras.layers.Input((3,)), keras.layers.Dense(2)])
    module = tf.Module()
    module.model = model

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def serve(x):
        return {"y": module.model(x, training=False)}

    module.serve = serve
    return module


def test_the_signature_serves_the_models_weights_without_layer_traces(tmp_path):
    module = module_with_a_model()
    save_signatures(module, tmp_path / "saved", {"serving_default": module.serve})
    loaded = tf.saved_model.load(str(tmp_path / "saved"))

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    kernel, bias = (w.numpy() for w in module.model.weights)
    served = loaded.signatures["serving_default"](x=tf.constant(x))["y"].numpy()
    np.testing.assert_allclose(served, x @ kernel + bias, rtol=1e-6)
    assert not hasattr(loaded.model, "keras_api")


def test_plain_saving_keeps_the_layer_traces_this_leaves_out(tmp_path):
    # What the first test tells apart: tf-keras adds them when nothing says otherwise.
    module = module_with_a_model()
    signatures = {"serving_default": module.serve}
    tf.saved_model.save(module, str(tmp_path / "saved"), signatures=signatures)
    assert hasattr(tf.saved_model.load(str(tmp_path / "saved")).model, "keras_api")
