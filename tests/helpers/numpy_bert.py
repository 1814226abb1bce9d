"""A NumPy BERT forward pass straight from a HuggingFace checkpoint, for checking conversions.

It reads ``model.safetensors`` by HuggingFace's own tensor names and follows the BERT
paper's equations (HF's BertModel semantics: exact erf GELU, LayerNorm eps from the
config, tanh pooler over [CLS]); nothing is shared with kerasformer's converter.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from scipy.special import erf

from tests.helpers.numpy_reference import layer_norm, softmax


class NumpyBert:
    def __init__(self, checkpoint_dir: str | Path):
        checkpoint_dir = Path(checkpoint_dir)
        self.config = json.loads((checkpoint_dir / "config.json").read_text())
        raw = load_file(str(checkpoint_dir / "model.safetensors"))
        self.w = {k.removeprefix("bert."): v.astype(np.float64) for k, v in raw.items()}

    def linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def norm(self, x: np.ndarray, name: str) -> np.ndarray:
        eps = self.config.get("layer_norm_eps", 1e-12)
        return layer_norm(x, self.w[f"{name}.weight"], self.w[f"{name}.bias"], eps)

    def __call__(
        self, ids: np.ndarray, mask: np.ndarray, types: np.ndarray, return_attention=False
    ) -> tuple:
        """Returns (sequence_output, pooled_output, per-layer outputs) for int arrays (B, T),
        and with ``return_attention`` each layer's attention probabilities too, stacked
        ``(layers, B, heads, T, T)``."""
        heads = self.config["num_attention_heads"]
        hidden = self.config["hidden_size"]
        size = hidden // heads
        positions = np.arange(ids.shape[1])
        x = (
            self.w["embeddings.word_embeddings.weight"][ids]
            + self.w["embeddings.position_embeddings.weight"][positions][None]
            + self.w["embeddings.token_type_embeddings.weight"][types]
        )
        x = self.norm(x, "embeddings.LayerNorm")
        additive_mask = np.where(mask[:, None, None, :] > 0, 0.0, -1e9)
        layers, attention = [], []
        for i in range(self.config["num_hidden_layers"]):
            p = f"encoder.layer.{i}."

            def split(t):
                return t.reshape(t.shape[0], t.shape[1], heads, size).transpose(0, 2, 1, 3)

            q = split(self.linear(x, p + "attention.self.query"))
            k = split(self.linear(x, p + "attention.self.key"))
            v = split(self.linear(x, p + "attention.self.value"))
            weights = softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(size) + additive_mask)
            attention.append(weights)
            context = (weights @ v).transpose(0, 2, 1, 3).reshape(x.shape)
            x = self.norm(
                x + self.linear(context, p + "attention.output.dense"),
                p + "attention.output.LayerNorm",
            )
            inner = self.linear(x, p + "intermediate.dense")
            inner = 0.5 * inner * (1.0 + erf(inner / np.sqrt(2.0)))
            x = self.norm(x + self.linear(inner, p + "output.dense"), p + "output.LayerNorm")
            layers.append(x)
        pooled = np.tanh(self.linear(x[:, 0], "pooler.dense"))
        if return_attention:
            return x, pooled, layers, np.stack(attention)
        return x, pooled, layers
