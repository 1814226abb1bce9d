"""Knowledge distillation's loss: the teacher's softened probabilities mixed with true labels.

Hinton, Vinyals and Dean (2015), "Distilling the Knowledge in a Neural Network": the
student matches the teacher's class probabilities softened by a temperature ``T``
(``softmax(logits / T)``), and, with the remaining weight, the true labels. The soft term
is scaled by ``T**2`` so its gradients keep their size as ``T`` changes.

Targets pack both into one row per example, ``[label, teacher probabilities...]``, so they
travel through the same ``tf.data`` pipelines as plain labels; a text without a label
(unlabelled data) has label -1 and learns from the teacher alone.
"""

from __future__ import annotations

import numpy as np

from kerasformer.backend import keras, serializable, tf
from kerasformer.training.tasks.distillation_settings import (  # noqa: F401
    require_teacher_weight,
    require_temperature,
)

NO_LABEL = -1
# log(0) would be -inf; probabilities this small carry no information at any temperature.
SMALLEST_PROBABILITY = 1e-12


def distillation_targets(labels: np.ndarray, teacher_probabilities: np.ndarray) -> np.ndarray:
    """``[label, p_1, ..., p_C]`` rows (float32), label -1 where a text has none."""
    labels = np.asarray(labels, np.float32).reshape(-1, 1)
    teacher_probabilities = np.asarray(teacher_probabilities, np.float32)
    if len(labels) != len(teacher_probabilities):
        raise ValueError(f"{len(labels)} labels but {len(teacher_probabilities)} teacher rows.")
    return np.concatenate([labels, teacher_probabilities], axis=1)


def softened_log_probabilities(probabilities: tf.Tensor, temperature: float) -> tf.Tensor:
    """``log softmax(logits / T)`` from ``softmax(logits)``: logits are log p up to a constant."""
    logits = tf.math.log(tf.maximum(probabilities, SMALLEST_PROBABILITY))
    return tf.nn.log_softmax(logits / temperature, axis=-1)


@serializable
class DistillationLoss(keras.losses.Loss):
    """``w T² KL(teacher_T ‖ student_T) + (1 - w) CE(label, student)`` per example.

    Args:
        temperature: ``T`` > 0; 1 keeps the probabilities as they are, higher values
            soften them so that the teacher's view of the wrong classes counts more.
        teacher_weight: ``w`` in [0, 1]; 1 learns from the teacher alone, 0 from labels.

    Call arguments:
        y_true: ``[batch, 1 + classes]`` rows from `distillation_targets`.
        y_pred: ``[batch, classes]`` student probabilities.

    Example:

    >>> model.compile("adam", loss=DistillationLoss(temperature=2.0, teacher_weight=0.5))
    """

    def __init__(
        self, temperature: float = 2.0, teacher_weight: float = 0.5, name="distillation", **kw
    ):
        super().__init__(name=name, **kw)
        require_temperature(temperature)
        require_teacher_weight(teacher_weight)
        self.temperature = float(temperature)
        self.teacher_weight = float(teacher_weight)

    def call(self, y_true, y_pred):
        y_pred = tf.cast(y_pred, tf.float32)
        labels = tf.cast(y_true[:, 0], tf.int32)
        teacher = softened_log_probabilities(y_true[:, 1:], self.temperature)
        student = softened_log_probabilities(y_pred, self.temperature)
        soft = tf.reduce_sum(tf.exp(teacher) * (teacher - student), axis=-1)
        has_label = labels >= 0
        label_log_probability = tf.gather(
            softened_log_probabilities(y_pred, 1.0), tf.maximum(labels, 0), batch_dims=1
        )
        hard = tf.where(has_label, -label_log_probability, 0.0)
        return self.teacher_weight * self.temperature**2 * soft + (1.0 - self.teacher_weight) * hard

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "temperature": self.temperature,
            "teacher_weight": self.teacher_weight,
        }


@serializable
class LabelAccuracy(keras.metrics.MeanMetricWrapper):
    """Accuracy against the label column of distillation targets, over labelled texts only."""

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(label_accuracy, name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        labelled = tf.cast(y_true[:, 0] >= 0, self.dtype)
        if sample_weight is not None:
            labelled *= tf.cast(tf.reshape(sample_weight, [-1]), self.dtype)
        return super().update_state(y_true, y_pred, sample_weight=labelled)


def label_accuracy(y_true, y_pred):
    predicted = tf.argmax(y_pred, axis=-1, output_type=tf.int32)
    return tf.cast(tf.equal(predicted, tf.cast(y_true[:, 0], tf.int32)), tf.float32)
