"""BERT for extractive question answering: start and end logits over packed windows."""

from __future__ import annotations

from pathlib import Path

from kerasformer.backend import keras, serializable, tf
from kerasformer.models.bert_classifier import ENCODER_LAYER, ONLINE_ENCODER, hub_layer

# Far below any real logit, yet finite in float16, so softmax and the loss stay defined.
MASKED_LOGIT = -1e4


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


@serializable
class SpanLogitMask(keras.layers.Layer):
    """Splits ``[batch, seq_length, 2]`` logits into start and end, masked to the context.

    Positions outside the second segment (the question, padding), and the second
    segment's closing ``[SEP]``, get a logit of -10,000; position 0 (``[CLS]``) keeps
    its logit, as the target of windows without the answer. Outputs are float32 even
    under a mixed-precision policy.

    Call arguments:
        logits: ``[batch, seq_length, 2]``.
        input_mask: ``[batch, seq_length]``, 1 on real tokens.
        input_type_ids: ``[batch, seq_length]``, 1 on the context segment.
    """

    def __init__(self, **kwargs):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)

    def call(self, logits, input_mask, input_type_ids):
        real = tf.cast(input_mask, tf.bool)
        # The last real token of each row is the closing [SEP].
        next_is_real = tf.pad(real[:, 1:], [[0, 0], [0, 1]])
        context = real & tf.equal(input_type_ids, 1) & next_is_real
        first = tf.one_hot(0, tf.shape(real)[1], on_value=True, off_value=False, dtype=tf.bool)
        keep = context | first[None, :]
        logits = tf.cast(logits, tf.float32)
        start, end = tf.unstack(logits, axis=-1)
        return tf.where(keep, start, MASKED_LOGIT), tf.where(keep, end, MASKED_LOGIT)
