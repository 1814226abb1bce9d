import numpy as np
import pytest

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.training import TrainingConfig, acceleration, train
from tests.helpers.processes import run_python_json

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow


def no_dropout_config(data_dir, **overrides):
    settings = dict(
        dataset="ag_news", data_dir=str(data_dir), epochs=2, batch_size=32, seed=5,
        model_options=dict(vocab_size=500, maxlen=32, dropout=0.0),
    )  # fmt: skip
    return TrainingConfig(**{**settings, **overrides})


MIRRORED_VERSUS_ONE_DEVICE = """
import json, sys
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    cpu, [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
)
from kerasformer.training import TrainingConfig, train
from kerasformer.training.acceleration import make_strategy

assert make_strategy("mirrored").num_replicas_in_sync == 2
results = {}
for strategy in ("default", "mirrored"):
    config = TrainingConfig(
        dataset="ag_news", data_dir=sys.argv[1], epochs=2, batch_size=32, seed=5,
        strategy=strategy, model_options=dict(vocab_size=500, maxlen=32, dropout=0.0),
    )
    result = train(config, export=False, verbose=0)
    results[strategy] = {
        "loss": result.history["loss"],
        "weights": [w.numpy().tolist() for w in result.model.layers[-1].weights],
        "test": result.metrics["test"]["accuracy"],
    }
print(json.dumps(results))
"""


def test_mirrored_over_two_cpus_matches_one_device(tiny_ag_news_dir):
    runs = run_python_json(MIRRORED_VERSUS_ONE_DEVICE, str(tiny_ag_news_dir), timeout=600)
    one, mirrored = runs["default"], runs["mirrored"]
    np.testing.assert_allclose(mirrored["loss"], one["loss"], rtol=1e-4)
    for a, b in zip(mirrored["weights"], one["weights"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)
    assert mirrored["test"] == pytest.approx(one["test"], abs=1 / 80)


def test_xla_trains_the_numeric_core_and_matches_plain_training(tiny_ag_news_dir, tmp_path):
    plain = train(no_dropout_config(tiny_ag_news_dir), export=False, verbose=0)
    compiled = train(
        no_dropout_config(tiny_ag_news_dir, xla=True, export_dir=str(tmp_path / "x")), verbose=0
    )
    np.testing.assert_allclose(compiled.history["loss"], plain.history["loss"], rtol=1e-3)
    # Only the numeric part was compiled: strings are turned into ids outside it.
    assert compiled.fit_model.jit_compile is True and plain.fit_model.jit_compile is False
    assert compiled.fit_model.inputs[0].dtype == tf.int64
    assert compiled.fit_model.trainable_weights[0] is compiled.model.trainable_weights[0]
    assert isinstance(compiled.model.layers[0], keras.layers.TextVectorization)
    probabilities = compiled.model.predict(tf.constant(["team goal season"]), verbose=0)
    np.testing.assert_allclose(probabilities.sum(), 1.0, rtol=1e-5)
    assert (tmp_path / "x" / "saved_model.pb").exists()


def test_xla_with_a_bert_encoder(tiny_hub_bert, tiny_ag_news_dir):
    config = TrainingConfig(
        model="bert", recipe="unfrozen", dataset="ag_news", data_dir=str(tiny_ag_news_dir),
        epochs=1, batch_size=32, xla=True,
        model_options=dict(
            preprocess=str(tiny_hub_bert.preprocess), encoder=str(tiny_hub_bert.encoder)
        ),
    )  # fmt: skip
    result = train(config, export=False, verbose=0)
    assert np.isfinite(result.history["loss"]).all()


def test_mixed_precision_computes_in_bfloat16_on_cpu_with_float32_probabilities(tiny_ag_news_dir):
    before = keras.mixed_precision.global_policy().name
    result = train(
        no_dropout_config(tiny_ag_news_dir, mixed_precision=True), export=False, verbose=0
    )
    assert keras.mixed_precision.global_policy().name == before  # restored
    embedding, block, output = (
        result.model.layers[1],
        result.model.layers[2],
        result.model.layers[-1],
    )
    assert embedding.compute_dtype == "bfloat16" and block.compute_dtype == "bfloat16"
    assert embedding.variable_dtype == "float32"  # weights stay float32
    assert output.compute_dtype == "float32"
    probabilities = result.model(tf.constant(["team goal", "bank shares"]))
    assert probabilities.dtype == tf.float32
    np.testing.assert_allclose(probabilities.numpy().sum(1), 1.0, rtol=1e-5)
    assert np.isfinite(result.history["loss"]).all()
    assert result.history["loss"][-1] < result.history["loss"][0]


def test_float16_is_chosen_only_where_a_gpu_is_visible(monkeypatch):
    monkeypatch.setattr(acceleration, "gpus_visible", lambda: True)
    assert acceleration.mixed_precision_policy_name() == "mixed_float16"
    monkeypatch.setattr(acceleration, "gpus_visible", lambda: False)
    assert acceleration.mixed_precision_policy_name() == "mixed_bfloat16"


def test_multi_worker_needs_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(KerasformerError, match="needs the TF_CONFIG environment variable"):
        acceleration.make_strategy("multi-worker")
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(KerasformerError, match="TF_CONFIG is not valid JSON"):
        acceleration.make_strategy("multi-worker")


def test_one_device_strategy_picks_a_visible_device():
    strategy = acceleration.make_strategy("one-device")
    kind = "GPU" if tf.config.list_logical_devices("GPU") else "CPU"
    assert strategy.extended.worker_devices[0].endswith(f"{kind}:0")
