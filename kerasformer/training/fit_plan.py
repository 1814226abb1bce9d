"""What ``model.fit`` trains, on which batches, with which loss and metrics."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from kerasformer.backend import keras, tf
from kerasformer.datasets import LabeledTexts
from kerasformer.datasets.pipeline import (
    TOKEN_ID_PIPELINES,
    text_batches,
    token_id_batches,
    token_id_examples,
)
from kerasformer.errors import KerasformerError
from kerasformer.models.text_classifier import TextClassifier
from kerasformer.training.acceleration import split_off_string_preprocessing

# bench/bert_xla_steps.py: MiniLM fine-tuned under XLA, as tfhub.dev's BERTs are saved,
# compiles its whole step again at every step (traced once), 19.6 s a step against 1.3 s
# without XLA on a 2-core CPU; encoders from `kerasformer convert-bert` compile once.
XLA_RECOMPILES_TRAINABLE_ENCODER = (
    "kerasformer: warning: --xla compiles a training step through this trainable TF-Hub "
    "encoder again at every step (TensorFlow 2.20), 10-20x slower than without it; drop "
    "--xla, keep the encoder frozen (--recipe frozen), or convert the checkpoint with "
    "`kerasformer convert-bert`, whose encoders compile once."
)


@dataclass
class FitPlan:
    """What ``model.fit`` trains, and on which batches.

    Either the string-in model itself, or a model on token ids (or, under XLA, on the
    preprocessed tensors) that shares every weight with it. The string-in model is
    what gets evaluated and exported either way.
    """

    full_model: keras.Model
    fit_model: keras.Model
    jit_compile: bool
    make_batches: Callable[[LabeledTexts, int, int | None], tf.data.Dataset]
    loss: object = "sparse_categorical_crossentropy"
    metrics: list | dict = field(default_factory=lambda: ["accuracy"])
    # Metrics weighted by the batches' third element (padding weighs 0), e.g. tagging's.
    weighted_metrics: list = field(default_factory=list)
    # Run at each epoch's end before its numbers are logged, e.g. to add task metrics.
    callbacks: list = field(default_factory=list)
    # The pretrained encoder whose ``trainable`` recipes switch; None for other models.
    encoder: keras.layers.Layer | None = None

    @classmethod
    def for_model(cls, model, pipeline: str, xla: bool) -> FitPlan:
        """The plan for a classifier (a `TextClassifier`, or a bare Keras classifier)."""
        if pipeline in TOKEN_ID_PIPELINES:
            return cls.on_token_ids(model, pipeline, xla)
        classifier = TextClassifier.of(model)
        model, encoder = classifier.model, classifier.encoder
        if not xla:
            return cls(model, model, False, text_batches, encoder=encoder)
        preprocessing, core = split_off_string_preprocessing(model)

        def preprocessed_batches(part, batch_size, shuffle_seed):
            return (
                text_batches(part, batch_size, shuffle_seed)
                .map(lambda texts, labels: (preprocessing(texts), labels), tf.data.AUTOTUNE)
                .prefetch(tf.data.AUTOTUNE)
            )

        return cls(model, core, True, preprocessed_batches, encoder=encoder)

    @classmethod
    def on_token_ids(cls, model, pipeline: str, xla: bool) -> FitPlan:
        """A classifier trained on token ids made once, batched as ``pipeline`` says.

        What ids the classifier reads, and how a padded batch of them is packed for its
        model, is the classifier's to say (see `TextClassifier.token_reader`).
        """
        classifier = TextClassifier.of(model)
        reader = classifier.token_reader()

        def id_batches(part, batch_size, shuffle_seed):
            examples = token_id_examples(part, reader.tokenize)
            batches = token_id_batches(
                examples, batch_size, pipeline, reader.max_length, shuffle_seed,
                fixed_shapes=xla, bucket_width=reader.bucket_width,
            )  # fmt: skip
            if reader.pack is None:
                return batches
            return batches.map(
                lambda ids, labels: (reader.pack(ids), labels), tf.data.AUTOTUNE
            ).prefetch(tf.data.AUTOTUNE)

        return cls(classifier.model, reader.model, xla, id_batches, encoder=classifier.encoder)

    def epoch_batches(self, splits, batch_size: int, shuffle_seed: int | None):
        """Shuffled training batches, validation batches, and training batches per epoch."""
        train_batches = self.batches(splits["train"], batch_size, shuffle_seed)
        validation_batches = self.batches(splits["validation"], batch_size)
        return (
            train_batches,
            validation_batches,
            batches_per_epoch(train_batches, len(splits["train"]), batch_size),
        )

    def compile_for(self, phase) -> None:
        """Ready ``fit_model`` for one recipe phase: its encoder setting and optimizer."""
        if phase.encoder_trainable is not None:
            self.set_encoder_trainable(phase.encoder_trainable)
        if self.jit_compile and self.recompiles_trainable_encoder():
            print(XLA_RECOMPILES_TRAINABLE_ENCODER, file=sys.stderr, flush=True)
        self.fit_model.compile(
            optimizer=phase.make_optimizer(),
            loss=self.loss,
            metrics=self.metrics,
            weighted_metrics=self.weighted_metrics or None,
            jit_compile=self.jit_compile,
        )

    def recompiles_trainable_encoder(self) -> bool:
        encoder = self.encoder
        return (
            encoder is not None
            and encoder.trainable
            and not getattr(encoder, "xla_compiles_gradient_once", False)
        )

    def set_encoder_trainable(self, trainable: bool) -> None:
        """Freeze or unfreeze the pretrained encoder, as a recipe's phase says."""
        if self.encoder is None:
            raise KerasformerError(
                f"model {self.full_model.name!r} has no pretrained encoder to freeze or "
                "unfreeze; train it with --recipe from-scratch."
            )
        self.encoder.trainable = trainable

    def batches(
        self, part: LabeledTexts, batch_size: int, shuffle_seed: int | None = None
    ) -> tf.data.Dataset:
        return self.make_batches(part, batch_size, shuffle_seed)


def batches_per_epoch(train_batches: tf.data.Dataset, examples: int, batch_size: int) -> int:
    """Batches in one epoch, as ``tf.data`` counts them where it can.

    Examples and batches differ where one example gives several (a long SQuAD context
    gives several windows); bucketed pipelines cannot be counted, and give one batch
    per ``batch_size`` examples.
    """
    count = int(train_batches.cardinality())
    if count > 0:
        return count
    return math.ceil(examples / batch_size)
