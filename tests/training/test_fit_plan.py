"""BERT fit plans: word pieces made once, batches packed to their own length."""

from collections import Counter

import numpy as np
import pytest

from kerasformer.backend import keras, tf
from kerasformer.datasets import LabeledTexts
from kerasformer.datasets.pipeline import length_bucket_boundaries
from kerasformer.errors import KerasformerError
from kerasformer.models.bert_classifier import build_bert_classifier
from kerasformer.models.text_classifier import BERT_BUCKET_WIDTH
from kerasformer.training import TrainingConfig, train
from kerasformer.training.fit_plan import FitPlan
from tests.helpers.bert import write_tiny_bert_checkpoint

WORDS = "team goal season shares profit market bank software chip the said".split()


def varied_texts(count: int, seed: int) -> LabeledTexts:
    """Texts of 0 to 40 words (the tiny preprocess model keeps 30 pieces), labels 0-3."""
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS, rng.integers(0, 41))) for _ in range(count)]
    return LabeledTexts(np.array(texts, dtype=object), rng.integers(0, 4, count))


def reference_examples(preprocess, part: LabeledTexts) -> Counter:
    """(unpadded word ids, label) of every text, as the string-in model's preprocess packs it."""
    packed = preprocess(tf.constant(list(part.texts)))
    rows = zip(packed["input_word_ids"].numpy(), packed["input_mask"].numpy(), strict=True)
    return Counter(
        (tuple(ids[mask == 1]), int(label))
        for (ids, mask), label in zip(rows, part.labels, strict=True)
    )


def batch_examples(batches) -> tuple[Counter, list[tuple[int, int]]]:
    """The unpadded examples of all batches, and each batch's (width, longest text)."""
    examples, shapes = Counter(), []
    for inputs, labels in batches:
        ids, mask = inputs["input_word_ids"].numpy(), inputs["input_mask"].numpy()
        assert np.all(inputs["input_type_ids"].numpy() == 0)
        shapes.append((ids.shape[1], int(mask.sum(axis=1).max())))
        for row, row_mask, label in zip(ids, mask, labels.numpy(), strict=True):
            examples[(tuple(row[row_mask == 1]), int(label))] += 1
    return examples, shapes


@pytest.fixture(scope="module")
def bert_model(tiny_hub_bert):
    return build_bert_classifier(4, tiny_hub_bert.preprocess, tiny_hub_bert.encoder)


@pytest.mark.parametrize(
    "pipeline, xla",
    [("padded", False), ("dynamic", False), ("bucketed", False), ("bucketed", True)],
)
def test_bert_batches_hold_every_text_packed_only_as_far_as_needed(bert_model, pipeline, xla):
    part = varied_texts(150, seed=0)
    plan = FitPlan.for_model(bert_model, pipeline, xla=xla)
    assert plan.full_model is bert_model and plan.fit_model is not bert_model
    preprocess = bert_model.get_layer("preprocess").resolved_object
    examples, shapes = batch_examples(plan.batches(part, 16, shuffle_seed=3))
    assert examples == reference_examples(preprocess, part)
    widths = [width for width, _ in shapes]
    if pipeline == "padded":
        assert set(widths) == {32}
    elif not xla:
        assert all(width == longest for width, longest in shapes)
    else:  # padded to the bucket's limit: a few shapes for the compiler
        limits = {b - 1 + 2 for b in length_bucket_boundaries(30, BERT_BUCKET_WIDTH)}
        assert set(widths) <= limits and len(set(widths)) > 1
        assert all(longest <= width for width, longest in shapes)


def padding_of(batches) -> int:
    """Padded positions over all batches."""
    return sum(int((inputs["input_mask"].numpy() == 0).sum()) for inputs, _ in batches)


def test_bucketing_leaves_much_less_padding_than_batching_in_any_order(bert_model):
    part = varied_texts(300, seed=2)
    dynamic, bucketed = (
        padding_of(FitPlan.for_model(bert_model, pipeline, xla=False).batches(part, 16, 3))
        for pipeline in ("dynamic", "bucketed")
    )
    assert bucketed < dynamic / 2


def test_bert_batches_are_reshuffled_every_epoch(bert_model):
    plan = FitPlan.for_model(bert_model, "dynamic", xla=False)
    batches = plan.batches(varied_texts(64, seed=1), 8, shuffle_seed=5)
    first, second = ([b[0]["input_word_ids"].numpy().tolist() for b in batches] for _ in range(2))
    assert first != second


@pytest.fixture(scope="module")
def dropout_free_hub(tmp_path_factory):
    """The tiny BERT without dropout, so runs on different pipelines can match exactly."""
    from kerasformer.export import convert_bert

    root = tmp_path_factory.mktemp("dropout_free_bert")
    checkpoint = write_tiny_bert_checkpoint(
        root / "hf",
        config_overrides={"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0},
    )
    return convert_bert(checkpoint, root / "hub", seq_length=32)


@pytest.mark.slow
def test_bert_trains_alike_on_strings_and_on_packed_word_pieces(tiny_ag_news_dir, dropout_free_hub):
    """Same examples in the same order, padding masked: only the work on padding differs.

    Slow (about a minute): it fine-tunes the tiny BERT four times, once per input
    pipeline, because the equality it checks is between whole training runs.
    """
    runs = {
        pipeline: train(
            TrainingConfig(
                model="bert", recipe="unfrozen", dataset="ag_news", data_dir=str(tiny_ag_news_dir),
                epochs=2, batch_size=32, seed=7, input_pipeline=pipeline,
                model_options=dict(
                    preprocess=str(dropout_free_hub.preprocess),
                    encoder=str(dropout_free_hub.encoder), dropout=0.0,
                ),
            ),
            export=False,
            verbose=0,
        )
        for pipeline in ("strings", "padded", "dynamic", "bucketed")
    }  # fmt: skip
    strings = runs.pop("strings")
    assert strings.fit_model is strings.model
    for pipeline, run in runs.items():
        np.testing.assert_allclose(
            run.history["loss"], strings.history["loss"], rtol=1e-4, err_msg=pipeline
        )
        np.testing.assert_allclose(
            run.metrics["test"]["accuracy"], strings.metrics["test"]["accuracy"], err_msg=pipeline
        )
    assert runs["bucketed"].history["loss"][-1] < strings.history["loss"][0]


def test_a_vocabulary_that_does_not_pad_with_zero_is_refused(bert_model, monkeypatch):
    from kerasformer.models import bert_packing

    original = bert_packing.BertInputPacker.__init__

    def padding_with_five(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.padding_id = 5

    monkeypatch.setattr(bert_packing.BertInputPacker, "__init__", padding_with_five)
    with pytest.raises(KerasformerError, match="pads with id 5, not 0.*--input-pipeline strings"):
        FitPlan.for_model(bert_model, "bucketed", xla=False)


@pytest.mark.parametrize("pipeline", ["strings", "padded", "dynamic", "bucketed"])
def test_a_text_with_no_token_leaves_training_finite(pipeline):
    """ "-" standardises to no token at all; one such text in a batch once made the pooled
    mean 0/0 and every weight NaN after one step."""
    from kerasformer.models import build_classifier

    texts = np.array(["stocks fell on monday", "team wins cup", "-", "chip maker", ""], object)
    model = build_classifier(
        "transformer", 4, texts, vocab_size=50, maxlen=8, embed_dim=8, num_heads=2, ff_dim=8
    )
    plan = FitPlan.for_model(model, pipeline, xla=False)
    plan.fit_model.compile("adam", plan.loss, plan.metrics)
    plan.fit_model.fit(
        plan.batches(LabeledTexts(texts, np.array([2, 1, 0, 3, 0])), 5, 0), epochs=2, verbose=0
    )
    assert all(np.isfinite(weight.numpy()).all() for weight in model.trainable_weights)
    probabilities = model.predict(texts, verbose=0)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("compiles_once", [True, False])
@pytest.mark.parametrize("trainable", [True, False])
def test_xla_warns_of_a_trainable_hub_encoder_that_compiles_every_step(
    bert_model, trainable, compiles_once, monkeypatch, capsys
):
    from kerasformer.models.bert_classifier import HubLayer
    from kerasformer.training.recipes import Phase

    plan = FitPlan.for_model(bert_model, "bucketed", xla=True)
    assert plan.encoder.xla_compiles_gradient_once  # as convert-bert writes encoders
    if not compiles_once:  # as tfhub.dev's encoders, which say nothing of it
        monkeypatch.setattr(HubLayer, "xla_compiles_gradient_once", False)
    phase = Phase("unfrozen" if trainable else "frozen", 1, trainable, keras.optimizers.Adam)
    plan.compile_for(phase)
    warned = "again at every step" in capsys.readouterr().err
    assert warned is (trainable and not compiles_once)
    assert plan.encoder.trainable is trainable
