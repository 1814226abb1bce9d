"""``--tensorboard DIR``: Keras's TensorBoard callback, with the learning rate in every epoch.

Keras logs the learning rate only when it follows a schedule; `LearningRateLog` puts the
optimiser's current rate into each epoch's logs, so a constant rate (Adam's) is drawn
too, and ``history.json`` keeps it.
"""

from __future__ import annotations

from kerasformer.backend import keras, tf

LEARNING_RATE = "learning_rate"


class LearningRateLog(keras.callbacks.Callback):
    """Adds ``learning_rate``, the rate the optimiser used in the epoch's last step, to the
    epoch's logs (for the callbacks after it: TensorBoard, the history)."""

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs[LEARNING_RATE] = current_learning_rate(self.model.optimizer)


def current_learning_rate(optimizer) -> float:
    """The optimiser's rate: a variable's value, or its schedule's at the last step."""
    rate = getattr(optimizer, "_learning_rate", None)
    rate = optimizer.learning_rate if rate is None else rate
    if isinstance(rate, tf.Variable | tf.Tensor):
        return float(rate.numpy())
    if callable(rate):  # a schedule, Keras's or the Model Garden's warm-up
        return float(rate(tf.maximum(optimizer.iterations - 1, 0)))
    return float(rate)


def tensorboard_callbacks(config, chief: bool) -> tuple[keras.callbacks.Callback, ...]:
    """The learning-rate log and TensorBoard writing into ``config.tensorboard``.

    Only the chief of a multi-worker run writes: the others' logs would be copies.
    Scalars are written per epoch, and every ``config.tensorboard_update_freq`` batches
    when it is set; the model's graph is written once.
    """
    if config.tensorboard is None or not chief:
        return ()
    board = keras.callbacks.TensorBoard(
        log_dir=str(config.tensorboard),
        update_freq=config.tensorboard_update_freq or "epoch",
        write_graph=True,
    )
    return LearningRateLog(), board
