"""Stop a run whose loss or weights stop being finite, before anything is backed up."""

from __future__ import annotations

import math

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError


class NonFiniteLoss(KerasformerError):
    """The training loss or a weight became NaN or infinite; nothing trained from then on
    is usable."""


class StopOnNonFiniteLoss(keras.callbacks.Callback):
    """Stop at the first batch whose loss is not finite, before any backup or export."""

    def __init__(self, phase):
        super().__init__()
        self.phase = phase
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            raise NonFiniteLoss(
                f"the training loss became {float(loss)} in epoch {self.epoch + 1}, batch "
                f"{batch + 1} ({self.phase.name} phase), so nothing was exported; lower the "
                "learning rate (--learning-rate, or --fine-tune-learning-rate for the encoder) "
                "and train again."
            )


class StopOnNonFiniteWeights(keras.callbacks.Callback):
    """Stop at the end of the first epoch that leaves a weight NaN or infinite.

    The loss alone can miss it: oneDNN's fused Dense + ReLU turns NaN activations into
    zeros, so a model whose lower layers are all NaN still gives finite (constant)
    probabilities and a finite loss.
    """

    def __init__(self, phase):
        super().__init__()
        self.phase = phase

    def on_epoch_end(self, epoch, logs=None):
        for weight in self.model.trainable_weights:
            if not bool(tf.reduce_all(tf.math.is_finite(weight))):
                raise NonFiniteLoss(
                    f"the weight {weight.name} became NaN or infinite in epoch {epoch + 1} "
                    f"({self.phase.name} phase) although the loss stayed finite, so nothing "
                    "was exported and that epoch was not backed up; lower the learning rate "
                    "(--learning-rate) and train again."
                )
