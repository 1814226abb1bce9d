"""DistillationLoss and LabelAccuracy against NumPy and the known gradient of Hinton et al."""

import numpy as np
import pytest

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.training.distillation_loss import (
    DistillationLoss,
    LabelAccuracy,
    distillation_targets,
)
from tests.helpers.numpy_reference import softmax


def numpy_distillation_loss(labels, teacher_logits, student_logits, temperature, weight):
    """Hinton et al.'s loss per example, written from the formula."""
    teacher_soft = softmax(teacher_logits / temperature)
    student_soft = softmax(student_logits / temperature)
    kl = np.sum(teacher_soft * (np.log(teacher_soft) - np.log(student_soft)), axis=-1)
    student = softmax(student_logits)
    hard = np.array(
        [-np.log(student[i, label]) if label >= 0 else 0.0 for i, label in enumerate(labels)]
    )
    return weight * temperature**2 * kl + (1 - weight) * hard


@pytest.fixture
def batch():
    rng = np.random.default_rng(0)
    labels = np.array([0, 2, -1, 1, -1, 3])
    teacher_logits = rng.normal(0, 3, (6, 4))
    student_logits = rng.normal(0, 2, (6, 4))
    return labels, teacher_logits, student_logits


@pytest.mark.parametrize("temperature", [1.0, 2.0, 5.0])
@pytest.mark.parametrize("weight", [0.0, 0.3, 1.0])
def test_loss_matches_the_formula(batch, temperature, weight):
    labels, teacher_logits, student_logits = batch
    targets = distillation_targets(labels, softmax(teacher_logits))
    loss = DistillationLoss(temperature, weight, reduction="none")
    got = loss(tf.constant(targets), tf.constant(softmax(student_logits), tf.float32)).numpy()
    want = numpy_distillation_loss(labels, teacher_logits, student_logits, temperature, weight)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


def test_with_labels_only_it_is_keras_cross_entropy(batch):
    labels, teacher_logits, student_logits = batch
    labelled = labels >= 0
    targets = distillation_targets(labels, softmax(teacher_logits))[labelled]
    student = softmax(student_logits)[labelled].astype(np.float32)
    ours = DistillationLoss(3.0, 0.0)(tf.constant(targets), tf.constant(student))
    keras_loss = keras.losses.SparseCategoricalCrossentropy()(labels[labelled], student)
    np.testing.assert_allclose(ours.numpy(), keras_loss.numpy(), rtol=1e-5)


@pytest.mark.parametrize("temperature", [1.0, 4.0])
def test_soft_gradient_is_t_times_the_softened_difference(batch, temperature):
    """d/dz of T^2 KL(teacher_T || student_T) is T (softmax(z/T) - teacher_T) (Hinton et al.)."""
    labels, teacher_logits, student_logits = batch
    targets = tf.constant(distillation_targets(labels, softmax(teacher_logits)))
    logits = tf.Variable(student_logits.astype(np.float32))
    loss = DistillationLoss(temperature, 1.0, reduction="sum")
    with tf.GradientTape() as tape:
        value = loss(targets, tf.nn.softmax(logits))
    gradient = tape.gradient(value, logits).numpy()
    want = temperature * (
        softmax(student_logits / temperature) - softmax(teacher_logits / temperature)
    )
    np.testing.assert_allclose(gradient, want, atol=2e-5)


def test_label_accuracy_counts_labelled_texts_only():
    metric = LabelAccuracy()
    targets = distillation_targets(np.array([0, 1, -1, -1]), np.full((4, 2), 0.5))
    predictions = np.array([[0.9, 0.1], [0.8, 0.2], [0.9, 0.1], [0.1, 0.9]], np.float32)
    metric.update_state(tf.constant(targets), tf.constant(predictions))
    assert metric.result().numpy() == pytest.approx(0.5)  # 1 right of 2 labelled


def test_the_loss_round_trips_through_its_config():
    loss = DistillationLoss(3.0, 0.25)
    again = DistillationLoss.from_config(loss.get_config())
    assert (again.temperature, again.teacher_weight) == (3.0, 0.25)
    assert keras.losses.get(keras.losses.serialize(loss)).temperature == 3.0


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(temperature=0.0), "temperature must be a positive finite number"),
        (dict(temperature=float("inf")), "temperature must be a positive finite number"),
        (dict(teacher_weight=1.5), "teacher_weight must be a number from 0 to 1"),
        (dict(teacher_weight=True), "teacher_weight must be a number from 0 to 1"),
    ],
)
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(KerasformerError, match=message):
        DistillationLoss(**settings)
