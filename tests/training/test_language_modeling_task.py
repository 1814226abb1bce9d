import math

import numpy as np
import pytest

from kerasformer.backend import keras
from kerasformer.models.language_model import build_transformer_language_model
from kerasformer.training.tasks.language_modeling import strided_perplexity


def log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


@pytest.mark.parametrize("tokens, window", [(37, 8), (9, 8), (20, 5)])
def test_strided_perplexity_is_each_token_read_after_its_own_context(tokens, window):
    """Token t is predicted once, from the window that first holds it: the one starting at
    the first multiple of half a window at or after t - window (the stream's start at most)."""
    keras.utils.set_random_seed(0)
    model = build_transformer_language_model(
        13, maxlen=window, embed_dim=8, num_heads=2, ff_dim=8, dropout=0.0
    )  # fmt: skip
    ids = np.random.default_rng(tokens).integers(1, 13, tokens).astype(np.int32)
    stride = window // 2
    losses = []
    for target in range(1, tokens):
        start = max(0, math.ceil((target - window) / stride) * stride)
        context = ids[start:target][None]
        logits = np.asarray(model(context, training=False))[0, -1]
        losses.append(-log_softmax(logits)[ids[target]])
    expected = math.exp(np.mean(losses))
    assert strided_perplexity(model, ids, window, batch_size=3) == pytest.approx(expected, rel=1e-4)
