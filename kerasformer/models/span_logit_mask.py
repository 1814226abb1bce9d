"""`SpanLogitMask`: a span extractor's start and end logits, masked to the context."""

from __future__ import annotations

from kerasformer.backend import keras, serializable, tf

# Far below any real logit, yet finite in float16, so softmax and the loss stay defined.
MASKED_LOGIT = -1e4


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
