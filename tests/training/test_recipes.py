import json
import re

import numpy as np
import pytest

from kerasformer.backend import keras
from kerasformer.errors import KerasformerError
from kerasformer.training import TrainingConfig, train
from kerasformer.training.recipes import recipe_phases
from tests.helpers.processes import WITHOUT_KERASFORMER, run_python, run_python_json

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow


def phases(recipe, epochs=3, steps=10):
    return recipe_phases(
        recipe, epochs=epochs, steps_per_epoch=steps, learning_rate=1e-3,
        fine_tune_learning_rate=3e-5, warmup_fraction=0.1, frozen_epochs=1,
    )  # fmt: skip


def test_unfrozen_uses_adamw_with_linear_warmup_then_linear_decay():
    (phase,) = phases("unfrozen", epochs=3, steps=10)
    assert phase.encoder_trainable is True and phase.epochs == 3
    optimizer = phase.make_optimizer()
    assert "AdamWeightDecay" in type(optimizer).__name__
    schedule = optimizer.learning_rate
    total, warmup = 30, 3
    for step in range(total):
        expected = 3e-5 * step / warmup if step < warmup else 3e-5 * (1 - step / total)
        assert float(schedule(step)) == pytest.approx(expected, rel=1e-5, abs=1e-12)


def test_each_recipe_has_its_phases():
    assert [(p.name, p.epochs, p.encoder_trainable) for p in phases("frozen")] == [
        ("frozen", 3, False)
    ]
    assert [(p.name, p.epochs, p.encoder_trainable) for p in phases("frozen-then-unfrozen")] == [
        ("frozen", 1, False),
        ("unfrozen", 3, True),
    ]
    assert isinstance(phases("frozen")[0].make_optimizer(), keras.optimizers.Adam)


def bert_config(hub_bert, data_dir, recipe, export_dir=None, **overrides):
    settings = dict(
        model="bert", recipe=recipe, dataset="ag_news", data_dir=str(data_dir), epochs=1,
        batch_size=32, seed=3, export_dir=None if export_dir is None else str(export_dir),
        model_options=dict(preprocess=str(hub_bert.preprocess), encoder=str(hub_bert.encoder)),
    )  # fmt: skip
    return TrainingConfig(**{**settings, **overrides})


class WeightRecorder:
    """Records encoder and head weights before and after every fit call."""

    def __init__(self, monkeypatch):
        self.calls = []
        original_fit = keras.Model.fit

        def fit(model, *args, **kwargs):
            before = self.snapshot(model)
            result = original_fit(model, *args, **kwargs)
            self.calls.append((before, self.snapshot(model)))
            return result

        monkeypatch.setattr(keras.Model, "fit", fit)

    @staticmethod
    def snapshot(model):
        return {
            "encoder": [w.numpy().copy() for w in model.get_layer("encoder").weights],
            "head": [w.numpy().copy() for w in model.get_layer("probabilities").weights],
        }


def changed(before, after):
    return any(not np.array_equal(a, b) for a, b in zip(before, after, strict=True))


def test_frozen_trains_the_head_only(monkeypatch, tiny_hub_bert, tiny_ag_news_dir):
    recorder = WeightRecorder(monkeypatch)
    train(bert_config(tiny_hub_bert, tiny_ag_news_dir, "frozen"), export=False, verbose=0)
    ((before, after),) = recorder.calls
    assert changed(before["head"], after["head"]) and not changed(
        before["encoder"], after["encoder"]
    )


def test_frozen_then_unfrozen_fine_tunes_from_the_first_phases_weights(
    monkeypatch, tiny_hub_bert, tiny_ag_news_dir
):
    recorder = WeightRecorder(monkeypatch)
    result = train(
        bert_config(tiny_hub_bert, tiny_ag_news_dir, "frozen-then-unfrozen", epochs=2),
        export=False, verbose=0,
    )  # fmt: skip
    (first_before, first_after), (second_before, second_after) = recorder.calls
    assert not changed(first_before["encoder"], first_after["encoder"])
    for part in ("encoder", "head"):
        assert not changed(first_after[part], second_before[part])
    assert changed(second_before["encoder"], second_after["encoder"])
    assert result.history["phase"] == ["frozen", "unfrozen", "unfrozen"]
    assert len(result.history["loss"]) == 3


def test_recipe_must_fit_the_model(tiny_ag_news_dir, tiny_hub_bert):
    with pytest.raises(
        KerasformerError, match="recipe 'frozen' does not apply to --model transformer"
    ):
        train(
            TrainingConfig(recipe="frozen", data_dir=str(tiny_ag_news_dir), dataset="ag_news"),
            export=False,
        )
    with pytest.raises(
        KerasformerError, match="recipe 'from-scratch' does not apply to --model bert"
    ):
        train(bert_config(tiny_hub_bert, tiny_ag_news_dir, "from-scratch"), export=False)


SERVE_WITH_TENSORFLOW_TEXT = (
    WITHOUT_KERASFORMER
    + """
import json
import tensorflow as tf
import tensorflow_text  # the preprocess model's tokenizer ops
serve = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
out = serve(inputs=tf.constant(json.loads(sys.argv[2])))
print(json.dumps(out["probabilities"].numpy().tolist()))
"""
)


def test_unfrozen_export_serves_raw_strings_without_kerasformer(
    tiny_hub_bert, tiny_ag_news_dir, tmp_path
):
    result = train(
        bert_config(tiny_hub_bert, tiny_ag_news_dir, "unfrozen", tmp_path / "bert"), verbose=0
    )
    # More texts than one packed chunk, of every length up to past the 32 positions.
    words = "team goal bank shares the said software zzzz".split()
    texts = [" ".join(words[i % 8] for i in range(n)) for n in range(0, 45)]
    served = run_python_json(SERVE_WITH_TENSORFLOW_TEXT, str(result.export_dir), json.dumps(texts))
    probabilities = np.array(served)
    expected = result.model.predict(np.array(texts), verbose=0)  # every text padded to 32
    np.testing.assert_allclose(probabilities, expected, rtol=1e-5, atol=1e-6)

    cli = run_python(
        "import sys, tensorflow_text\n"
        "from tensorflow.python.tools.saved_model_cli import main\n"
        "sys.argv[0] = 'saved_model_cli'\nsys.exit(main())",
        "run", "--dir", str(result.export_dir), "--tag_set", "serve",
        "--signature_def", "serving_default", "--input_exprs", 'inputs=["team goal"]',
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr[-2000:]
    assert "Result for output key probabilities" in cli.stdout


def scratch_optimizer(**settings):
    (phase,) = recipe_phases(
        "from-scratch", epochs=2, steps_per_epoch=10, learning_rate=1e-3,
        fine_tune_learning_rate=3e-5, warmup_fraction=0.1, frozen_epochs=1, **settings,
    )  # fmt: skip
    return phase.make_optimizer()


def test_cosine_schedule_warms_up_linearly_then_decays_on_a_cosine_to_zero():
    schedule = scratch_optimizer(lr_schedule="cosine")._learning_rate
    total, warmup = 20, 2
    for step in range(total + 3):
        if step < warmup:
            expected = 1e-3 * step / warmup
        else:
            progress = min(step - warmup, total - warmup) / (total - warmup)
            expected = 1e-3 * 0.5 * (1 + np.cos(np.pi * progress))
        assert float(schedule(step)) == pytest.approx(expected, rel=1e-4, abs=1e-9)


def test_inverse_sqrt_schedule_is_the_transformer_papers_with_its_peak_at_the_warmup():
    schedule = scratch_optimizer(lr_schedule="inverse_sqrt")._learning_rate
    warmup = 2
    # Vaswani et al.: d ** -0.5 * min(step ** -0.5, step * warmup ** -1.5), scaled so
    # that its peak (at step == warmup) is the learning rate.
    scale = 1e-3 / warmup**-0.5
    for step in range(1, 40):
        expected = scale * min(step**-0.5, step * warmup**-1.5)
        assert float(schedule(step)) == pytest.approx(expected, rel=1e-5)
    assert float(schedule(0)) == 0.0


def test_weight_decay_shrinks_kernels_but_not_biases_or_normalisation():
    optimizer = scratch_optimizer(weight_decay=0.1, clip_norm=1.0)
    assert optimizer.global_clipnorm == 1.0
    dense = keras.layers.Dense(3)
    norm = keras.layers.LayerNormalization()
    dense.build((None, 4)), norm.build((None, 3))
    variables = dense.trainable_weights + norm.trainable_weights
    rng = np.random.default_rng(0)
    for variable in variables:  # biases and offsets start at 0, which decay leaves alone
        variable.assign(rng.normal(1.0, 0.5, variable.shape).astype("float32"))
    before = [variable.numpy().copy() for variable in variables]
    # Zero gradients: Adam moves nothing, so any change is the decay alone.
    optimizer.apply_gradients([(np.zeros(v.shape, "float32"), v) for v in variables])
    kernel, *others = variables
    np.testing.assert_allclose(kernel.numpy(), before[0] * (1 - 1e-3 * 0.1), rtol=1e-6)
    for variable, old in zip(others, before[1:], strict=True):
        np.testing.assert_array_equal(variable.numpy(), old)


def test_a_run_too_short_to_warm_up_starts_at_its_peak():
    for steps, fraction in ((1, 0.5), (10, 0.0)):
        (phase,) = recipe_phases(
            "from-scratch", epochs=1, steps_per_epoch=steps, learning_rate=1e-3,
            fine_tune_learning_rate=3e-5, warmup_fraction=fraction, frozen_epochs=1,
            lr_schedule="cosine",
        )  # fmt: skip
        schedule = phase.make_optimizer()._learning_rate
        assert float(schedule(0)) == pytest.approx(1e-3, rel=1e-6)


def test_without_weight_decay_from_scratch_is_plain_adam():
    optimizer = scratch_optimizer()
    assert type(optimizer).__name__ == "Adam" and optimizer.global_clipnorm is None
    assert float(optimizer.learning_rate) == pytest.approx(1e-3)


@pytest.mark.parametrize(
    "setting, message",
    [
        (dict(weight_decay=-0.1), "weight_decay must be in [0, 1)"),
        (dict(clip_norm=0.0), "clip_norm must be a positive finite number"),
        (dict(lr_schedule="linear"), "lr_schedule must be one of constant, cosine, inverse_sqrt"),
    ],
)
def test_bad_optimizer_settings_are_one_line_errors(setting, message, tmp_path):
    config = TrainingConfig(epochs=1, export_dir=str(tmp_path / "out"), **setting)
    with pytest.raises(KerasformerError, match=re.escape(message)):
        config.validate()
