import json
import re
from pathlib import Path

import numpy as np
import pytest

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.files.staged_directory import MARKER_FILE
from kerasformer.training import TrainingConfig, train


def test_default_training_on_bbc_news_learns_the_topics(trained_bbc):
    """Chance is 0.2; a model that cannot attend or pool properly stays far below."""
    assert trained_bbc.metrics["validation"]["accuracy"] >= 0.9
    assert trained_bbc.metrics["test"]["accuracy"] >= 0.93
    history = trained_bbc.history
    assert len(history["loss"]) == 10 and history["loss"][-1] < history["loss"][0] / 4


def test_export_has_model_history_and_metrics(trained_bbc):
    export_dir = trained_bbc.export_dir
    for name in ("saved_model.pb", "model.keras", "history.json", "metrics.json"):
        assert (export_dir / name).is_file(), name
    history = json.loads((export_dir / "history.json").read_text())
    assert set(history) == {"loss", "accuracy", "val_loss", "val_accuracy", "phase", "seconds"}
    assert all(seconds > 0 for seconds in history["seconds"])
    assert history["phase"] == ["from-scratch"] * 10
    metrics = json.loads((export_dir / "metrics.json").read_text())
    assert metrics["test"]["accuracy"] == trained_bbc.metrics["test"]["accuracy"]
    assert metrics["config"]["dataset"] == "bbc_news" and metrics["interrupted"] is False


def small_config(data_dir, export_dir=None, **overrides):
    settings = dict(
        dataset="ag_news", data_dir=str(data_dir), epochs=2, batch_size=32, seed=7,
        export_dir=None if export_dir is None else str(export_dir),
        model_options=dict(vocab_size=500, maxlen=32),
    )  # fmt: skip
    return TrainingConfig(**{**settings, **overrides})


@pytest.mark.slow
def test_same_seed_gives_the_same_metrics_and_another_seed_does_not(tiny_ag_news_dir):
    first = train(small_config(tiny_ag_news_dir), export=False, verbose=0)
    again = train(small_config(tiny_ag_news_dir), export=False, verbose=0)
    other = train(small_config(tiny_ag_news_dir, seed=8), export=False, verbose=0)

    def learned(history):  # everything but the wall times
        return {key: values for key, values in history.items() if key != "seconds"}

    assert learned(first.history) == learned(again.history)
    assert first.metrics == again.metrics
    assert first.history["loss"] != other.history["loss"]


@pytest.mark.slow
def test_interrupted_training_keeps_and_exports_what_was_learned(
    tiny_ag_news_dir, tmp_path, monkeypatch
):
    class InterruptAfterFirstEpoch(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            raise KeyboardInterrupt

    original_fit = keras.Model.fit

    def fit_with_interrupt(self, *args, callbacks=None, **kwargs):
        return original_fit(
            self, *args, callbacks=[*callbacks, InterruptAfterFirstEpoch()], **kwargs
        )

    monkeypatch.setattr(keras.Model, "fit", fit_with_interrupt)
    config = small_config(tiny_ag_news_dir, tmp_path / "export", epochs=5)
    result = train(config, verbose=0)
    assert result.interrupted
    assert len(result.history["loss"]) == 1
    assert json.loads((tmp_path / "export" / "metrics.json").read_text())["interrupted"] is True


def test_existing_export_is_refused_before_any_training(tiny_ag_news_dir, tmp_path, monkeypatch):
    export_dir = tmp_path / "export"
    export_dir.mkdir()
    (export_dir / "keep.txt").write_text("earlier work")
    monkeypatch.setattr(keras.Model, "fit", lambda *a, **k: pytest.fail("trained anyway"))
    with pytest.raises(KerasformerError, match="already exists; pass --overwrite"):
        train(small_config(tiny_ag_news_dir, export_dir))
    assert (export_dir / "keep.txt").read_text() == "earlier work"


@pytest.mark.slow
def test_overwrite_replaces_an_existing_export(tiny_ag_news_dir, tmp_path):
    export_dir = tmp_path / "export"
    export_dir.mkdir()
    (export_dir / "old.txt").write_text("old")
    (export_dir / MARKER_FILE).write_text("{}")  # kerasformer wrote it
    train(small_config(tiny_ag_news_dir, export_dir, epochs=1, overwrite=True), verbose=0)
    assert not (export_dir / "old.txt").exists() and (export_dir / "saved_model.pb").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]  # no backups, no staging


def test_a_failed_export_keeps_the_trained_model_and_says_where(
    tiny_ag_news_dir, tmp_path, monkeypatch
):
    import kerasformer.training.tasks.classification as classification
    from kerasformer.export import load_keras_model

    texts = tf.constant(["match team goal", "shares profit market"])
    trained = {}

    def disk_full(model, class_names, directory):
        trained["probabilities"] = model(texts).numpy()
        raise OSError(28, "No space left on device", "saved_model.pb")

    monkeypatch.setattr(classification, "write_classifier", disk_full)
    config = small_config(tiny_ag_news_dir, tmp_path / "export", epochs=1)
    with pytest.raises(KerasformerError) as caught:
        train(config, verbose=0)
    message = str(caught.value)
    assert message.startswith(f"could not export to {tmp_path / 'export'} (No space left")
    kept = re.search(r"the trained model is kept in (\S+model\.keras)", message)
    assert kept, message
    assert not (tmp_path / "export").exists()
    reloaded = load_keras_model(Path(kept.group(1)).parent)
    np.testing.assert_allclose(reloaded(texts).numpy(), trained["probabilities"], atol=1e-6)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(epochs=0), "epochs must be a whole number from 1 to 100,000"),
        (dict(epochs=10**20), "epochs must be a whole number from 1 to 100,000"),
        (dict(batch_size=2.5), "batch_size"),
        (dict(batch_size=10**7), "batch_size must be a whole number from 1 to 1,000,000"),
        (dict(learning_rate=-1.0), "learning_rate must be a positive finite number"),
        (dict(learning_rate=float("inf")), "learning_rate must be a positive finite number"),
        (dict(fine_tune_learning_rate=float("nan")), "fine_tune_learning_rate must be"),
        (dict(model_options=dict(maxlen=10**8)), "maxlen 100,000,000 at embed_dim 32 need"),
        (dict(validation_fraction=1.0), "validation_fraction"),
        (dict(input_pipeline="tokens"), "input pipeline 'tokens' does not fit"),
        (
            dict(model="bert", input_pipeline="tokens", model_options={}),
            "choose one of: strings, padded",
        ),
        # The transformer's options are not BERT's: named before any data is read.
        (
            dict(model="bert"),
            "--model bert of --task classification: unknown options 'maxlen', 'vocab_size'",
        ),
        (dict(xla=True, input_pipeline="dynamic"), "use 'bucketed' or 'padded' with --xla"),
    ],
)
def test_bad_settings_are_clear_errors(overrides, message, tiny_ag_news_dir):
    with pytest.raises(KerasformerError, match=message):
        train(small_config(tiny_ag_news_dir, **overrides), export=False)


def test_validation_split_is_used_for_validation_not_test(tiny_ag_news_dir):
    result = train(small_config(tiny_ag_news_dir, epochs=1), export=False, verbose=0)
    sizes = result.data.sizes()
    assert sizes["test"] == 80 and sizes["validation"] == 24 and sizes["train"] == 216
    val_acc = result.history["val_accuracy"][-1]
    assert np.isclose(val_acc, result.metrics["validation"]["accuracy"], atol=1e-6)


@pytest.mark.slow
def test_token_id_pipelines_train_exactly_like_strings(tiny_ag_news_dir):
    """Same examples, same order, padding masked: only the work on padding differs."""
    runs = {
        pipeline: train(
            small_config(
                tiny_ag_news_dir,
                input_pipeline=pipeline,
                model_options=dict(vocab_size=500, maxlen=32, dropout=0.0),
            ),
            export=False,
            verbose=0,
        )
        for pipeline in ("strings", "padded", "dynamic", "bucketed")
    }
    strings = runs.pop("strings")
    for pipeline, run in runs.items():
        np.testing.assert_allclose(
            run.history["loss"], strings.history["loss"], rtol=1e-5, err_msg=pipeline
        )
        assert run.metrics["test"] == strings.metrics["test"], pipeline
        assert run.fit_model.inputs[0].shape.as_list() == [None, None]
    assert strings.fit_model is strings.model


def test_the_default_pipeline_is_bucketed_token_ids():
    assert TrainingConfig().resolved_input_pipeline() == "bucketed"
    assert TrainingConfig(model="bert").resolved_input_pipeline() == "bucketed"


@pytest.mark.slow
def test_training_on_your_own_splits(tiny_ag_news_dir):
    from kerasformer.datasets import LabeledTexts, TextClassificationData

    def part(texts, labels):
        return LabeledTexts(np.array(texts, dtype=object), np.array(labels))

    data = TextClassificationData(
        "mine",
        ("cats", "dogs"),
        {
            "train": part(["cat purrs", "dog barks"] * 20, [0, 1] * 20),
            "validation": part(["cat sleeps", "dog runs"], [0, 1]),
            "test": part(["purrs", "barks", "cat", "dog"], [0, 1, 0, 1]),
        },
    )
    config = small_config(tiny_ag_news_dir, epochs=30, batch_size=8, learning_rate=1e-2)
    result = train(config, export=False, verbose=0, data=data)
    assert result.data is data and result.metrics["test"]["accuracy"] == 1.0
    assert result.train_seconds >= sum(result.history["seconds"]) > 0


def test_a_nan_weight_under_a_finite_loss_stops_training_before_its_backup():
    """oneDNN's fused Dense + ReLU maps NaN to 0 in graphs: lower layers can be all NaN
    under a finite, constant loss (what an empty text did to the classifier's pooling)."""
    from types import SimpleNamespace

    from kerasformer.training.trainer import NonFiniteLoss, StopOnNonFiniteWeights

    inputs = keras.Input((3,))
    hidden = keras.layers.Dense(4, activation="relu", name="hidden")(inputs)
    model = keras.Model(inputs, keras.layers.Dense(2, name="out")(hidden))
    kernel = model.get_layer("hidden").kernel
    kernel.assign(np.where(np.eye(3, 4) > 0, np.nan, 1.0).astype("float32"))
    check = StopOnNonFiniteWeights(SimpleNamespace(name="unfrozen"))
    check.set_model(model)
    with pytest.raises(NonFiniteLoss, match=r"hidden/kernel.* became NaN or infinite in epoch 3"):
        check.on_epoch_end(2)
    kernel.assign(np.ones((3, 4), "float32"))
    check.on_epoch_end(2)  # finite weights pass
