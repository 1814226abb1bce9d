"""The residual sub-layer wiring shared by the encoder and decoder blocks."""

from __future__ import annotations


def residual(x, sublayer, norm, dropout, norm_first: bool, training=None):
    """``x + dropout(sublayer(x))``, normalised before the sub-layer (pre-LN) or after the sum.

    ``sublayer`` maps the (possibly normalised) input to the sub-layer's output and may
    return ``(output, extra)`` (attention scores, a cache): ``extra`` is returned beside
    the result, so callers need not thread it through the wiring.
    """
    result = sublayer(norm(x) if norm_first else x)
    output, extra = result if isinstance(result, tuple) else (result, None)
    x = x + dropout(output, training=training)
    return (x if norm_first else norm(x)), extra
