"""An independent NumPy implementation of the transformer pieces, for checking the layers.

Written from the equations (Vaswani et al. 2017; pre-LN as in Xiong et al. 2020), not
from the layers' code: only the weights are taken from the layers under test.
"""

from __future__ import annotations

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def multi_head_attention(x: np.ndarray, key_mask: np.ndarray | None, w: dict) -> tuple:
    """Self-attention over ``x`` (batch, length, dim); returns (output, weights).

    ``w`` holds per-head projections: wq/wk/wv (dim, heads, key_dim), bq/bk/bv
    (heads, key_dim), wo (heads, key_dim, dim), bo (dim). Keys where ``key_mask`` is
    False get zero weight.
    """
    batch, length, _ = x.shape
    heads, key_dim = w["bq"].shape
    outputs = np.zeros((batch, length, w["bo"].shape[0]))
    weights = np.zeros((batch, heads, length, length))
    for b in range(batch):
        for h in range(heads):
            q = x[b] @ w["wq"][:, h, :] + w["bq"][h]
            k = x[b] @ w["wk"][:, h, :] + w["bk"][h]
            v = x[b] @ w["wv"][:, h, :] + w["bv"][h]
            scores = q @ k.T / np.sqrt(key_dim)
            if key_mask is not None:
                scores = np.where(key_mask[b][None, :], scores, -np.inf)
            weights[b, h] = softmax(scores)
            outputs[b] += (weights[b, h] @ v) @ w["wo"][h]
        outputs[b] += w["bo"]
    return outputs, weights


def transformer_block(x, key_mask, w: dict, norm_first: bool, eps: float) -> tuple:
    """One encoder block without dropout; ``w`` adds ln1/ln2 (gamma, beta) and ff1/ff2."""

    def feed_forward(h):
        hidden = np.maximum(h @ w["ff1_kernel"] + w["ff1_bias"], 0.0)
        return hidden @ w["ff2_kernel"] + w["ff2_bias"]

    if norm_first:
        attended, weights = multi_head_attention(layer_norm(x, *w["ln1"], eps), key_mask, w)
        x = x + attended
        return x + feed_forward(layer_norm(x, *w["ln2"], eps)), weights
    attended, weights = multi_head_attention(x, key_mask, w)
    x = layer_norm(x + attended, *w["ln1"], eps)
    return layer_norm(x + feed_forward(x), *w["ln2"], eps), weights


def sinusoidal_position_encoding(
    length: int, dim: int, start_index: int = 0, max_wavelength: float = 10_000.0
) -> np.ndarray:
    """``(length, dim)`` encodings of positions ``start_index ...`` (Vaswani et al. 2017, §3.5):
    PE(p, 2i) = sin(p / w^(2i/d)) and PE(p, 2i+1) = cos(p / w^(2i/d))."""
    encoding = np.zeros((length, dim))
    for step in range(length):
        position = start_index + step
        for i in range(dim // 2):
            angle = position / max_wavelength ** (2 * i / dim)
            encoding[step, 2 * i] = np.sin(angle)
            encoding[step, 2 * i + 1] = np.cos(angle)
    return encoding


def rotary_embedding(x: np.ndarray, position: int, max_wavelength: float = 10_000.0) -> np.ndarray:
    """One feature vector ``x`` (dim,) rotated for ``position`` (RoPE, Su et al. 2021, eq. 34),
    pairs (i, i + d/2) ("rotate half", GPT-NeoX): each pair is multiplied by the 2x2
    rotation matrix of angle theta_i = position / w^(2i/d)."""
    dim = x.shape[-1]
    half = dim // 2
    rotated = np.zeros(dim)
    for i in range(half):
        theta = position / max_wavelength ** (2 * i / dim)
        rotation = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
        rotated[i], rotated[i + half] = rotation @ np.array([x[i], x[i + half]])
    return rotated


def t5_relative_position_bucket(
    relative_position: int, bidirectional: bool = True, num_buckets: int = 32,
    max_distance: int = 128,
) -> int:  # fmt: skip
    """T5's bucket of ``relative_position = key_position - query_position`` (Raffel et al.
    2020, §2.1; mesh-tensorflow's ``_relative_position_bucket``, HF's T5Attention).

    When bidirectional, half the buckets are for keys after the query. Of the (remaining)
    buckets, half hold the exact distances 0 .. max_exact - 1; larger distances get
    ``max_exact + floor(log(n / max_exact) / log(max_distance / max_exact) * (buckets -
    max_exact))``, capped at the last bucket. The log term is computed in float32, as
    in both references, so the floor lands the same way on exact bucket edges.
    """
    bucket = 0
    n = -relative_position  # positive: the key is before the query
    if bidirectional:
        num_buckets //= 2
        if n < 0:
            bucket += num_buckets
        n = abs(n)
    else:
        n = max(n, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return bucket + n
    log_ratio = np.log(np.float32(n) / np.float32(max_exact)) / np.float32(
        np.log(max_distance / max_exact)
    )
    large = max_exact + int(np.float32(log_ratio) * np.float32(num_buckets - max_exact))
    return bucket + min(large, num_buckets - 1)


def adaptive_span_mask(
    query_length: int, key_length: int, spans: np.ndarray, ramp: float, query_start: int = 0
) -> np.ndarray:
    """``(heads, query, key)`` soft masks m_z(x) = min(max((R + z - x) / R, 0), 1) of
    Sukhbaatar et al. 2019, eq. 3, with x = |query position - key position|."""
    mask = np.zeros((len(spans), query_length, key_length))
    for h, z in enumerate(spans):
        for i in range(query_length):
            for j in range(key_length):
                distance = abs(query_start + i - j)
                mask[h, i, j] = min(max((ramp + z - distance) / ramp, 0.0), 1.0)
    return mask


def adaptive_span_attention(weights: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Soft-masked attention weights, each row renormalised (Sukhbaatar et al. 2019, eq. 4):
    a_ij = m(x_ij) w_ij / sum_k m(x_ik) w_ik; ``weights`` (batch, heads, q, k)."""
    masked = weights * mask[None]
    return masked / masked.sum(axis=-1, keepdims=True)


def masked_attention(query, key, value, mask=None, score_bias=None) -> tuple:
    """softmax(QKᵀ/√d + bias)V over the last two axes (Vaswani et al. 2017, eq. 1).

    ``mask`` broadcasts to the scores ``(..., query, key)``, True where a query may attend
    to a key: masked keys get weight 0, and a query that may attend to no key at all gets
    all-zero weights (so a zero output). Returns (outputs, weights).
    """
    scores = query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1])
    if score_bias is not None:
        scores = scores + score_bias
    mask = np.broadcast_to(True if mask is None else mask, scores.shape)
    masked_scores = np.where(mask, scores, -np.inf)
    row_max = np.max(masked_scores, axis=-1, keepdims=True)
    exponentials = np.exp(masked_scores - np.where(np.isfinite(row_max), row_max, 0.0))
    totals = exponentials.sum(axis=-1, keepdims=True)
    weights = np.divide(exponentials, totals, out=np.zeros_like(exponentials), where=totals > 0)
    return weights @ value, weights


def t5_relative_bias(
    table: np.ndarray, query_length: int, key_length: int, query_start: int = 0,
    bidirectional: bool = True, max_distance: int = 128,
) -> np.ndarray:  # fmt: skip
    """``(heads, query, key)``: T5's bias table[bucket(j - i), h] for a query at position
    ``query_start + i`` and a key at position ``j`` (Raffel et al. 2020, §2.1)."""
    num_buckets, heads = table.shape
    bias = np.zeros((heads, query_length, key_length))
    for i in range(query_length):
        for j in range(key_length):
            bucket = t5_relative_position_bucket(
                j - (query_start + i), bidirectional, num_buckets, max_distance
            )
            bias[:, i, j] = table[bucket]
    return bias


def multi_head_cross_attention(
    query, key, value, w: dict, mask=None, score_bias=None, rotary_wavelength=None,
    query_start: int = 0,
) -> tuple:  # fmt: skip
    """Multi-head attention (Vaswani et al. 2017, §3.2.2) of ``query`` (b, q, dq) over
    ``key`` (b, k, dk) and ``value`` (b, k, dv): head_h = Attention(Q W_q^h + b_q^h,
    K W_k^h + b_k^h, V W_v^h + b_v^h), output = Concat(head_1 .. head_H) W_o + b_o.

    ``w``: wq (dq, H, key_dim), wk (dk, H, key_dim), wv (dv, H, value_dim), wo (H,
    value_dim, out) and biases bq, bk, bv (H, dim), bo (out), each None when absent;
    with ``wg`` (dq, H, value_dim) and ``bg``, each head's output is gated by
    sigmoid(Q W_g^h + b_g^h) (Gated Attention, Qiu et al. 2025).
    ``mask`` (b, q, k), True = attend; ``score_bias`` (H, q, k) is added to each head's
    scores (T5); with ``rotary_wavelength`` queries at positions ``query_start + i`` and
    keys at positions ``j`` are rotated by RoPE first. Returns outputs (b, q, out) and
    weights (b, H, q, k).
    """
    heads = w["wq"].shape[1]

    def project(x, kernel, bias):
        projected = np.einsum("btd,dk->btk", x, kernel)
        return projected if bias is None else projected + bias

    def rotate(x, start):  # (b, t, dim) at positions start, start + 1, ...
        rotated = np.zeros_like(x)
        for b in range(x.shape[0]):
            for t in range(x.shape[1]):
                rotated[b, t] = rotary_embedding(x[b, t], start + t, rotary_wavelength)
        return rotated

    head_outputs, weights = [], []
    for h in range(heads):
        q = project(query, w["wq"][:, h], None if w["bq"] is None else w["bq"][h])
        k = project(key, w["wk"][:, h], None if w["bk"] is None else w["bk"][h])
        v = project(value, w["wv"][:, h], None if w["bv"] is None else w["bv"][h])
        if rotary_wavelength is not None:
            q, k = rotate(q, query_start), rotate(k, 0)
        attended, head_weights = masked_attention(
            q, k, v, None if mask is None else mask,
            None if score_bias is None else score_bias[h][None],
        )  # fmt: skip
        if w.get("wg") is not None:
            gate = project(query, w["wg"][:, h], None if w["bg"] is None else w["bg"][h])
            attended = attended / (1.0 + np.exp(-gate))
        head_outputs.append(attended)
        weights.append(head_weights)
    concatenated = np.concatenate(head_outputs, axis=-1)  # (b, q, H * value_dim)
    outputs = concatenated @ w["wo"].reshape(-1, w["wo"].shape[-1])
    if w["bo"] is not None:
        outputs = outputs + w["bo"]
    return outputs, np.stack(weights, axis=1)


def bahdanau_attention(query, key, value, w1, w2, v, query_mask=None, value_mask=None):
    """Additive attention of Bahdanau et al. (2015), eq. 5-6 and appendix A.1.2:
    e_ij = vᵀ tanh(W₁ s_i + W₂ h_j), alpha_ij = softmax_j(e_ij), c_i = sum_j alpha_ij v_j.

    ``query`` (b, q, dq) holds the states s_i, ``key`` (b, k, dk) the annotations h_j
    scored, ``value`` (b, k, dv) those averaged. Padded values (``value_mask`` False) get
    alpha = 0; the context at a padded query (``query_mask`` False) is 0. Returns
    (contexts, alignment weights).
    """
    projected_query = query @ w1  # (b, q, units)
    projected_key = key @ w2  # (b, k, units)
    scores = np.tanh(projected_query[:, :, None, :] + projected_key[:, None, :, :]) @ v
    if value_mask is not None:
        scores = np.where(value_mask[:, None, :], scores, -np.inf)
    alignment = softmax(scores, axis=-1)
    contexts = alignment @ value
    if query_mask is not None:
        contexts = contexts * query_mask[:, :, None]
    return contexts, alignment


def transformer_decoder_block(
    x, memory, w: dict, norm_first: bool, eps: float, mask=None, memory_mask=None,
    rotary_wavelength=None, self_score_bias=None,
) -> tuple:  # fmt: skip
    """One transformer decoder block without dropout (Vaswani et al. 2017, §3.1).

    Causal self-attention over ``x`` (b, t, d): position i attends to the real positions
    j <= i (``mask`` (b, t), True = real); then, if ``memory`` (b, s, dm) is given,
    attention of every real position over the real memory tokens (``memory_mask``); then
    the feed-forward network max(0, xW1 + b1)W2 + b2. Each sub-layer has a residual
    connection and layer normalisation, after the sum (post-LN) or on the sub-layer input
    (``norm_first``, pre-LN; Xiong et al. 2020). ``w``: ``self`` and ``cross`` weights as in
    `multi_head_cross_attention`, ``ln_self``/``ln_cross``/``ln_ff`` (gamma, beta) and
    ``ff1_kernel``/``ff1_bias``/``ff2_kernel``/``ff2_bias``. ``rotary_wavelength`` and
    ``self_score_bias`` (heads, t, t) give the self-attention RoPE or T5 positions.
    Returns (outputs, self-attention weights, cross-attention weights or None).
    """
    batch, length, _ = x.shape
    mask = np.ones((batch, length), bool) if mask is None else np.asarray(mask, bool)
    causal = np.tril(np.ones((length, length), bool))[None]
    self_mask = causal & mask[:, :, None] & mask[:, None, :]

    def sublayer(h, function, norm):
        if norm_first:
            output, extra = function(layer_norm(h, *norm, eps))
            return h + output, extra
        output, extra = function(h)
        return layer_norm(h + output, *norm, eps), extra

    def attend_to_self(h):
        return multi_head_cross_attention(
            h, h, h, w["self"], self_mask, self_score_bias, rotary_wavelength
        )

    x, self_weights = sublayer(x, attend_to_self, w["ln_self"])
    cross_weights = None
    if memory is not None:
        if memory_mask is None:
            memory_mask = np.ones(memory.shape[:2], bool)
        cross_mask = mask[:, :, None] & np.asarray(memory_mask, bool)[:, None, :]

        def attend_to_memory(h):
            return multi_head_cross_attention(h, memory, memory, w["cross"], cross_mask)

        x, cross_weights = sublayer(x, attend_to_memory, w["ln_cross"])

    def feed_forward(h):
        hidden = np.maximum(h @ w["ff1_kernel"] + w["ff1_bias"], 0.0)
        return hidden @ w["ff2_kernel"] + w["ff2_bias"], None

    x, _ = sublayer(x, feed_forward, w["ln_ff"])
    return x, self_weights, cross_weights


def transformer_encoder_block(
    x, mask, w: dict, norm_first: bool, eps: float, rotary_wavelength=None, score_bias=None
) -> tuple:  # fmt: skip
    """One encoder block without dropout (Vaswani et al. 2017, §3.1), with positions.

    Self-attention of the real positions of ``x`` (b, t, d) over its real positions
    (``mask`` (b, t), True = real; a padded query gets all-zero weights), then the
    feed-forward network, each with a residual connection and post- or pre-LN (Xiong et
    al. 2020). ``w`` as in `transformer_decoder_block` (``self``, ``ln_self``, ``ln_ff``,
    ff1/ff2); ``rotary_wavelength`` applies RoPE and ``score_bias`` (heads, t, t) adds T5
    biases in the attention. Returns (outputs, attention weights).
    """
    mask = np.ones(x.shape[:2], bool) if mask is None else np.asarray(mask, bool)
    attention_mask = mask[:, :, None] & mask[:, None, :]

    def attend(h):
        return multi_head_cross_attention(
            h, h, h, w["self"], attention_mask, score_bias, rotary_wavelength
        )

    def feed_forward(h):
        hidden = np.maximum(h @ w["ff1_kernel"] + w["ff1_bias"], 0.0)
        return hidden @ w["ff2_kernel"] + w["ff2_bias"]

    if norm_first:
        attended, weights = attend(layer_norm(x, *w["ln_self"], eps))
        x = x + attended
        return x + feed_forward(layer_norm(x, *w["ln_ff"], eps)), weights
    attended, weights = attend(x)
    x = layer_norm(x + attended, *w["ln_self"], eps)
    return layer_norm(x + feed_forward(x), *w["ln_ff"], eps), weights


def log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """log softmax(x) = x - log sum_j exp(x_j), computed with the maximum subtracted."""
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def masked_token_cross_entropy(logits: np.ndarray, labels: np.ndarray, mask: np.ndarray) -> float:
    """Mean negative log-likelihood -log softmax(logits)[label] over the positions where
    ``mask`` is True only (padding left out of the average); logits (..., vocab)."""
    log_probs = log_softmax(logits)
    picked = np.take_along_axis(log_probs, labels[..., None], axis=-1)[..., 0]
    return float(-picked[mask].mean())


def masked_token_accuracy(logits: np.ndarray, labels: np.ndarray, mask: np.ndarray) -> float:
    """Fraction of the positions where ``mask`` is True whose argmax is the label."""
    return float((np.argmax(logits, axis=-1) == labels)[mask].mean())


def greedy_sequence(next_token_log_probs, end_id: int, max_length: int) -> list[int]:
    """Greedy decoding: y_i = argmax_y log p(y | y_<i), up to and including ``end_id``, at
    most ``max_length`` tokens; ``next_token_log_probs(prefix)`` scores the whole vocabulary."""
    sequence: list[int] = []
    while len(sequence) < max_length and (not sequence or sequence[-1] != end_id):
        sequence.append(int(np.argmax(next_token_log_probs(sequence))))
    return sequence


def best_finished_sequence(
    next_token_log_probs, tokens, end_id: int, max_length: int, length_penalty: float = 0.0
) -> tuple:  # fmt: skip
    """Exhaustive search for the best sequence that ends with ``end_id`` within
    ``max_length`` tokens, the objective of beam search: the log-probability
    sum_i log p(y_i | y_<i) divided by GNMT's length penalty ((5 + |y|) / 6) ** alpha
    (Wu et al. 2016, eq. 14; alpha = ``length_penalty``, 0 for none; |y| counts the end
    token), over every sequence of ``tokens`` whose only ``end_id`` is its last.
    ``next_token_log_probs(prefix)`` scores the whole vocabulary. Returns (sequence, score).
    """
    best: tuple = ([], -np.inf)
    prefixes = [([], 0.0)]
    while prefixes:
        prefix, log_prob = prefixes.pop()
        log_probs = next_token_log_probs(prefix)
        for token in tokens:
            sequence, total = prefix + [token], log_prob + float(log_probs[token])
            if token == end_id:
                score = total / ((5 + len(sequence)) / 6) ** length_penalty
                best = max(best, (sequence, score), key=lambda candidate: candidate[1])
            elif len(sequence) < max_length:
                prefixes.append((sequence, total))
    return best
