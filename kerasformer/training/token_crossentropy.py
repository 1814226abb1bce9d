"""Cross-entropy of a token's logits against its id, with optional label smoothing.

Label smoothing (Szegedy et al. 2016; 0.1 in Vaswani et al. 2017) trains against
``(1 - ε)`` on the true token and ``ε / V`` on each of the ``V`` tokens, which is
``(1 - ε) · -log p(y) + ε · mean_v(-log p(v))``. Computed from the log-probabilities
directly: Keras's own ``label_smoothing`` takes one-hot targets, a ``(batch, length, V)``
tensor that a subword vocabulary makes large. Padding is left out as with any Keras
loss, by the mask the logits carry.
"""

from __future__ import annotations

from kerasformer.backend import keras, serializable, tf
from kerasformer.errors import KerasformerError
from kerasformer.validation import is_real_number


def require_label_smoothing(label_smoothing: float) -> None:
    if not is_real_number(label_smoothing) or not 0 <= label_smoothing < 1:
        raise KerasformerError(
            f"label_smoothing must be in [0, 1), got {label_smoothing!r}; 0 trains without it."
        )


def token_crossentropy(label_smoothing: float = 0.0) -> keras.losses.Loss:
    """Keras's sparse cross-entropy from logits, or its label-smoothed form."""
    require_label_smoothing(label_smoothing)
    if label_smoothing == 0:
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return SmoothedSparseCrossentropy(label_smoothing)


@serializable
class SmoothedSparseCrossentropy(keras.losses.Loss):
    """Label-smoothed cross-entropy of logits against integer ids.

    Args:
        label_smoothing: ε, the weight moved from the true id to a uniform spread
            over the vocabulary, in ``[0, 1)``.

    Call arguments:
        y_true: integer ids, ``[...]``.
        y_pred: logits, ``[..., vocab]``.
    """

    def __init__(self, label_smoothing: float = 0.1, name="smoothed_crossentropy", **kwargs):
        super().__init__(name=name, **kwargs)
        require_label_smoothing(label_smoothing)
        self.label_smoothing = float(label_smoothing)

    def call(self, y_true, y_pred):
        log_probabilities = tf.nn.log_softmax(tf.cast(y_pred, tf.float32))
        ids = tf.cast(y_true, tf.int32)
        true_token = -tf.gather(log_probabilities, ids, batch_dims=ids.shape.rank)
        every_token = -tf.reduce_mean(log_probabilities, axis=-1)
        return (1.0 - self.label_smoothing) * true_token + self.label_smoothing * every_token

    def get_config(self) -> dict:
        return {**super().get_config(), "label_smoothing": self.label_smoothing}
