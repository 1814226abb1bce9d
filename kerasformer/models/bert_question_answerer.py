"""BERT for extractive question answering: start and end logits over packed windows."""

from __future__ import annotations

from pathlib import Path

from kerasformer.backend import keras, tf
from kerasformer.models.bert_classifier import ENCODER_LAYER, ONLINE_ENCODER, hub_layer
from kerasformer.models.span_logit_mask import MASKED_LOGIT, SpanLogitMask  # noqa: F401


def build_bert_question_answerer(
    encoder: str | Path = ONLINE_ENCODER,
    trainable: bool = True,
    name: str = "bert_question_answerer",
) -> keras.Model:
    """Seed 002's ``BertForQuestionAnswering`` over a TF-Hub encoder.

    ``{input_word_ids, input_mask, input_type_ids}`` (``[batch, seq_length]`` int32, the
    encoder's inputs, as `SpanWindows` packs them) -> ``HubLayer(encoder)`` ->
    ``sequence_output`` -> ``Dense(2)`` -> ``(start_logits, end_logits)``, each
    ``[batch, seq_length]`` float32 and masked to the context tokens plus ``[CLS]``:
    [CLS] is where training points when a window does not hold the answer; answer
    extraction reads context tokens only.

    Args:
        encoder: TF-Hub handle (URL or local directory) of a BERT encoder.
        trainable: Whether the encoder's weights are trained.
        name: Model name.

    Example:

    >>> model = build_bert_question_answerer("hub/minilm/encoder")
    >>> start_logits, end_logits = model(windows(questions, contexts))
    """
    inputs = {
        key: keras.Input(shape=(None,), dtype=tf.int32, name=key)
        for key in ("input_word_ids", "input_mask", "input_type_ids")
    }
    sequence = hub_layer(encoder, ENCODER_LAYER, trainable=trainable)(inputs)["sequence_output"]
    logits = keras.layers.Dense(
        2,
        kernel_initializer=keras.initializers.TruncatedNormal(stddev=0.02),
        name="span_logits",
    )(sequence)
    start, end = SpanLogitMask(name="context_only")(
        logits, inputs["input_mask"], inputs["input_type_ids"]
    )
    # Named layers, so Keras names the losses and metrics after the outputs.
    outputs = {
        output: keras.layers.Activation("linear", dtype="float32", name=output)(tensor)
        for output, tensor in (("start_logits", start), ("end_logits", end))
    }
    return keras.Model(inputs, outputs, name=name)
