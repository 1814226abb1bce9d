"""What ``model.fit`` trains, on which batches, with which loss and metrics."""

from __future__ import annotations

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
from kerasformer.models import text_vectorizer, token_id_classifier
from kerasformer.models.bert_classifier import (
    BertInputPacker,
    bert_classifier_on_encoder_inputs,
    bert_preprocess_layer,
)
from kerasformer.training.acceleration import split_off_string_preprocessing

# BERT spends far more per token than the from-scratch model, so its buckets are narrow:
# on AG News, 8-token buckets pack 56 positions per text of 53 tokens, buckets growing
# by half 63.
BERT_BUCKET_WIDTH = 8


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
    # Run at each epoch's end before its numbers are logged, e.g. to add task metrics.
    callbacks: list = field(default_factory=list)

    @classmethod
    def for_model(cls, model: keras.Model, pipeline: str, xla: bool) -> FitPlan:
        if pipeline in TOKEN_ID_PIPELINES:
            return cls.on_token_ids(model, pipeline, xla)
        if not xla:
            return cls(model, model, False, text_batches)
        preprocessing, core = split_off_string_preprocessing(model)

        def preprocessed_batches(part, batch_size, shuffle_seed):
            return (
                text_batches(part, batch_size, shuffle_seed)
                .map(lambda texts, labels: (preprocessing(texts), labels), tf.data.AUTOTUNE)
                .prefetch(tf.data.AUTOTUNE)
            )

        return cls(model, core, True, preprocessed_batches)

    @classmethod
    def on_token_ids(cls, model: keras.Model, pipeline: str, xla: bool) -> FitPlan:
        preprocess = bert_preprocess_layer(model)
        if preprocess is not None:
            return cls.on_word_pieces(model, preprocess, pipeline, xla)
        vectorizer = text_vectorizer(model)
        maxlen = vectorizer.get_config()["output_sequence_length"]

        def id_batches(part, batch_size, shuffle_seed):
            examples = token_id_examples(part, vectorizer)
            return token_id_batches(
                examples, batch_size, pipeline, maxlen, shuffle_seed, fixed_shapes=xla
            )

        return cls(model, token_id_classifier(model), xla, id_batches)

    @classmethod
    def on_word_pieces(
        cls, model: keras.Model, preprocess: keras.layers.Layer, pipeline: str, xla: bool
    ) -> FitPlan:
        """A BERT classifier trained on word pieces tokenised once, packed per batch.

        ``padded`` packs every batch to the preprocess model's sequence length, as the
        string-in model does; ``dynamic`` and ``bucketed`` only to the batch's longest
        text (under XLA, ``bucketed`` to its bucket's limit).
        """
        packer = BertInputPacker(preprocess)
        packer.require_padding_id_zero()

        def packed_batches(part, batch_size, shuffle_seed):
            examples = token_id_examples(part, packer.padded_word_pieces)
            batches = token_id_batches(
                examples, batch_size, pipeline, packer.max_pieces, shuffle_seed,
                fixed_shapes=xla, bucket_width=BERT_BUCKET_WIDTH,
            )  # fmt: skip
            return batches.map(
                lambda ids, labels: (packer.pack_padded(ids), labels), tf.data.AUTOTUNE
            ).prefetch(tf.data.AUTOTUNE)

        return cls(model, bert_classifier_on_encoder_inputs(model), xla, packed_batches)

    def batches(
        self, part: LabeledTexts, batch_size: int, shuffle_seed: int | None = None
    ) -> tf.data.Dataset:
        return self.make_batches(part, batch_size, shuffle_seed)
