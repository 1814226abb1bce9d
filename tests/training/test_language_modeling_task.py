import math

import numpy as np
import pytest

from kerasformer.backend import keras
from kerasformer.datasets.wikitext import LanguageModelData
from kerasformer.models.language_model import (
    build_transformer_language_model,
    next_token_loss_model,
)
from kerasformer.training import TrainingConfig, train
from kerasformer.training.language_model_metrics import strided_perplexity
from tests.helpers.numpy_reference import log_softmax

SPLITS = ("train", "validation", "test")


OUTPUTS = {
    "full softmax": {},
    "adaptive, losses from the cluster-only model": dict(
        tie_embeddings=True, adaptive_cutoffs=[5, 9]
    ),
}


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("tokens, window", [(37, 8), (9, 8), (20, 5)])
def test_strided_perplexity_is_each_token_read_after_its_own_context(tokens, window, output):
    """Token t is predicted once, from the window that first holds it: the one starting at
    the first multiple of half a window at or after t - window (the stream's start at most).
    The adaptive model's perplexity reads its cluster-only losses; the reference reads
    every word's log-probability."""
    keras.utils.set_random_seed(0)
    model = build_transformer_language_model(
        13, maxlen=window, embed_dim=8, num_heads=2, ff_dim=8, dropout=0.0, **OUTPUTS[output]
    )  # fmt: skip
    loss_model = next_token_loss_model(model) if OUTPUTS[output] else None
    ids = np.random.default_rng(tokens).integers(1, 13, tokens).astype(np.int32)
    stride = window // 2
    losses = []
    for target in range(1, tokens):
        start = max(0, math.ceil((target - window) / stride) * stride)
        context = ids[start:target][None]
        logits = np.asarray(model(context, training=False))[0, -1]
        losses.append(-log_softmax(logits)[ids[target]])
    expected = math.exp(np.mean(losses))
    perplexity = strided_perplexity(model, ids, window, 3, loss_model)
    assert perplexity == pytest.approx(expected, rel=1e-4)


def zipf_tokens(count: int, words: int, seed: int) -> tuple[str, ...]:
    ranks = np.arange(1, words + 1)
    chosen = np.random.default_rng(seed).choice(words, count, p=(1 / ranks) / (1 / ranks).sum())
    return tuple(f"w{index}" if index else "<eos>" for index in chosen)


@pytest.mark.slow
def test_an_adaptive_softmax_trains_on_its_cluster_only_loss_and_evaluates_the_same():
    """The validation loss that fit reports (each target scored in its own cluster) is the
    one evaluation computes from every word's log-probability, on the trained weights."""
    data = LanguageModelData(
        "zipf", {split: zipf_tokens(600, 60, seed) for seed, split in enumerate(SPLITS)}
    )
    config = TrainingConfig(
        task="language-model", dataset="wikitext2", epochs=1, batch_size=4, seed=0,
        model_options=dict(
            maxlen=16, embed_dim=8, num_heads=2, ff_dim=16, tie_embeddings=True,
            adaptive_cutoffs=[6, 20],
        ),
    )  # fmt: skip
    result = train(config, export=False, verbose=0, data=data)
    assert result.fit_model is not result.model.model  # the loss model was fitted
    assert result.model.model.output_shape[-1] == len(data.vocabulary()) + 2
    validation = result.metrics["validation"]
    assert result.history["val_loss"][-1] == pytest.approx(validation["loss"], rel=1e-5)
    assert validation["perplexity"] == pytest.approx(math.exp(validation["loss"]))
