"""Adaptive attention span (Sukhbaatar et al. 2019): each head learns how far it looks."""

from __future__ import annotations

from kerasformer.validation import (
    LayerError,
    require_positive_int,
    require_positive_number,
)

from ._base import Layer
from .backend import keras, ops, serializable


@serializable
class AdaptiveAttentionSpan(Layer):
    """Soft-mask attention weights by distance, with a span learned per head.

    Each head h has a span ``z_h`` in ``[0, max_span]``. A key at distance ``x`` from its
    query keeps the weight ``m(x) = clamp((R + z_h - x) / R, 0, 1)`` times its softmax
    weight, and each row is renormalised (Sukhbaatar et al. 2019, seed 004): keys within
    ``z_h`` count fully, keys beyond ``z_h + R`` not at all, with a linear ramp of width
    ``R`` between, so ``z_h`` gets a gradient. ``span_penalty * sum(z)`` (the paper's L1
    penalty) is added as a layer loss, which ``model.fit`` minimises with the task loss:
    heads that need no long context learn short spans.

    Distances count both ways (``|query - key|``); under a causal mask only past keys
    have weight anyway, as in the paper.

    Masking: applied to weights that are already masked; a zero weight stays zero.

    Args:
        num_heads: Number of heads (one span each).
        max_span: The largest span ``S``; spans are learned as a fraction of it.
        ramp: ``R``, the width of the soft edge, in tokens.
        initial_span: Each head's starting span; defaults to ``max_span``.
        span_penalty: Weight of the L1 penalty on the spans (0 for none).
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        attention_weights: ``(batch, num_heads, query_length, key_length)`` softmax weights.
        query_start: Position of the first query (tokens already decoded), default 0.

    Examples:
        >>> import numpy as np
        >>> span = AdaptiveAttentionSpan(num_heads=2, max_span=8, ramp=2, initial_span=1)
        >>> weights = np.full((1, 2, 6, 6), 1 / 6, "float32")
        >>> out = ops.convert_to_numpy(span(weights))
        >>> out[0, 0, 5].astype(float).round(3).tolist()  # keys 3+ tokens away are dropped
        [0.0, 0.0, 0.0, 0.2, 0.4, 0.4]
    """

    _config_arguments = ("num_heads", "max_span", "ramp", "initial_span", "span_penalty")

    def __init__(
        self,
        num_heads: int,
        max_span: int,
        ramp: int = 32,
        initial_span: float | None = None,
        span_penalty: float = 2e-6,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.num_heads = require_positive_int("num_heads", num_heads)
        self.max_span = require_positive_int("max_span", max_span)
        self.ramp = require_positive_int("ramp", ramp)
        initial = self.max_span if initial_span is None else initial_span
        self.initial_span = _require_span(initial, self.max_span)
        if span_penalty != 0:
            span_penalty = require_positive_number("span_penalty", span_penalty)
        self.span_penalty = float(span_penalty)

    def build(self, input_shape=None):
        # Learned as a fraction of max_span (as in the paper's code), so the step size of
        # the optimiser means the same for any max_span.
        self.span_fraction = self.add_weight(
            name="span_fraction",
            shape=(self.num_heads,),
            initializer=keras.initializers.Constant(self.initial_span / self.max_span),
            # Clamped after every optimiser step, as in the paper's code: clipping only in
            # the forward pass would leave a span that reached 0 without a gradient.
            constraint=_UnitInterval(),
            trainable=True,
        )
        self.built = True

    def spans(self):
        """The current spans ``z`` in tokens, ``(num_heads,)``."""
        return ops.clip(ops.cast(self.span_fraction, "float32"), 0.0, 1.0) * self.max_span

    def soft_mask(self, query_length, key_length, query_start=0):
        """``m_z(|query - key|)`` of shape ``(num_heads, query_length, key_length)``."""
        query_positions = ops.arange(query_length)[:, None] + query_start
        key_positions = ops.arange(key_length)[None, :]
        distance = ops.cast(ops.abs(query_positions - key_positions), "float32")
        spans = self.spans()[:, None, None]
        return ops.clip((self.ramp + spans - distance[None]) / self.ramp, 0.0, 1.0)

    def call(self, attention_weights, query_start=0):
        shape = ops.shape(attention_weights)
        mask = self.soft_mask(shape[-2], shape[-1], query_start)
        weights = ops.cast(attention_weights, "float32") * mask[None]
        # The epsilon keeps a row whose keys all fall outside the span at zero, not NaN.
        weights = weights / (ops.sum(weights, axis=-1, keepdims=True) + 1e-8)
        if self.span_penalty:
            self.add_loss(self.span_penalty * ops.sum(self.spans()))
        return ops.cast(weights, attention_weights.dtype)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


class _UnitInterval(keras.constraints.Constraint):
    """Clip a weight into [0, 1]."""

    def __call__(self, w):
        return ops.clip(w, 0.0, 1.0)


def _require_span(value, max_span: int) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= max_span:
        raise LayerError(
            f"`initial_span` must be a number from 0 to max_span={max_span}, got {value!r}."
        )
    return float(value)
