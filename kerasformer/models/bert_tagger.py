"""Named-entity tagging over a pretrained BERT: a tag for each word, read at its first piece.

``build_bert_tagger`` puts a ``Dense(num_tags)`` head on a TF-Hub encoder's
``sequence_output``. `BertTagger` owns that model with the preprocess model it reads
with and the windows that cut long sentences (`WordPieceWindows`), and gives each word
the logits of its first word piece; `EntityTagger` decodes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.models import defaults
from kerasformer.models.bert_classifier import (
    ENCODER_LAYER,
    ONLINE_ENCODER,
    encoder_layer,
    hub_layer,
)
from kerasformer.models.entity_tagger import EntityTagger
from kerasformer.models.span_windows import ENCODER_INPUTS
from kerasformer.models.word_piece_windows import WordPieceWindows, ragged_words, word_logits

DEFAULTS = defaults.BERT_TAGGER


def build_bert_tagger(
    num_tags: int,
    encoder: str | Path = ONLINE_ENCODER,
    dropout: float = DEFAULTS["dropout"],
    trainable: bool = True,
    name: str = "bert_tagger",
) -> keras.Model:
    """A tag for every word piece: ``{input_word_ids, input_mask, input_type_ids}``
    (``[batch, seq_length]`` int32) -> ``HubLayer(encoder)`` -> ``sequence_output`` ->
    ``Dropout`` -> ``Dense(num_tags)`` -> logits ``[batch, seq_length, num_tags]`` (float32
    under any precision policy).

    Args:
        num_tags: How many tags.
        encoder: TF-Hub handle (URL or local directory) of a BERT encoder.
        dropout: Dropout rate before the head.
        trainable: Whether the encoder's weights are trained.
        name: Model name.

    Example:

    >>> model = build_bert_tagger(9, "hub/minilm/encoder")
    >>> logits = model(WordPieceWindows(preprocess)(words))  # [windows, length, 9]
    """
    inputs = {key: keras.Input(shape=(None,), dtype=tf.int32, name=key) for key in ENCODER_INPUTS}
    sequence = hub_layer(encoder, ENCODER_LAYER, trainable=trainable)(inputs)["sequence_output"]
    sequence = keras.layers.Dropout(dropout, name="sequence_dropout")(sequence)
    logits = keras.layers.Dense(
        num_tags,
        kernel_initializer=keras.initializers.TruncatedNormal(stddev=0.02),
        dtype="float32",
        name="tag_logits",
    )(sequence)
    return keras.Model(inputs, logits, name=name)


class BertTagger(EntityTagger):
    """A BERT tagging model (`build_bert_tagger`), its preprocess model and its tags.

    Args:
        model: Keras model from encoder inputs to word-piece tag logits.
        preprocess: The loaded TF-Hub BERT preprocess model the encoder expects.
        tag_names: The tags, in the model's output order.
        decoding: ``"constrained"`` (IOB2 Viterbi) or ``"argmax"``.
        seq_length, doc_stride: Window length and the stride between the windows of a
            long sentence, in word pieces (`WordPieceWindows`).
        preprocess_handle: Where ``preprocess`` was loaded from, kept for exports.

    Example:

    >>> handle = "hub/minilm/preprocess"
    >>> tagger = BertTagger(model, load_preprocess(handle), tag_names, preprocess_handle=handle)
    >>> tagger.tag(["Angela Merkel visited Paris."])[0]["entities"][0]["type"]
    'PER'
    """

    def __init__(
        self, model, preprocess, tag_names: Sequence[str], decoding: str = DEFAULTS["decoding"],
        seq_length: int = DEFAULTS["seq_length"], doc_stride: int | None = DEFAULTS["doc_stride"],
        preprocess_handle: str | None = None,
    ):  # fmt: skip
        super().__init__(tag_names, decoding)
        self.model = model
        self.windows = WordPieceWindows(preprocess, seq_length, doc_stride)
        self.preprocess_handle = preprocess_handle
        self._word_probabilities = tf.function(
            self.word_probabilities,
            input_signature=[
                tf.RaggedTensorSpec([None, None], tf.string, row_splits_dtype=tf.int64)
            ],
        )

    @property
    def encoder(self):
        """The BERT encoder layer, whose ``trainable`` the recipes switch."""
        return encoder_layer(self.model)

    def settings(self) -> dict:
        if self.preprocess_handle is None:
            raise KerasformerError(
                "this BertTagger does not know where its preprocess model came from, so an "
                "export could not load it again; pass preprocess_handle= (its TF-Hub handle)."
            )
        return {
            "kind": "bert", **super().settings(), "preprocess": self.preprocess_handle,
            "seq_length": self.windows.seq_length, "doc_stride": self.windows.stride,
        }  # fmt: skip

    def word_probabilities(self, words: tf.RaggedTensor) -> tf.RaggedTensor:
        """``[sentences, (words), tags]`` tag probabilities of a ragged batch of words."""
        inputs = self.windows(words)
        logits = self.model({key: inputs[key] for key in ENCODER_INPUTS}, training=False)
        per_word = word_logits(tf.cast(logits, tf.float32), inputs, words.row_lengths())
        return tf.ragged.map_flat_values(tf.nn.softmax, per_word)

    def probabilities(self, sentences, batch_size: int = 64) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for begin in range(0, len(sentences), batch_size):
            chunk = sentences[begin : begin + batch_size]
            probs = self._word_probabilities(ragged_words(chunk))
            flat, splits = probs.flat_values.numpy(), probs.row_splits.numpy()
            out += [flat[a:b] for a, b in zip(splits[:-1], splits[1:], strict=True)]
        return out

    def serving_reader(self) -> tf.Module:
        return WordPieceReader(self)


class WordPieceReader(tf.Module):
    """A `BertTagger`'s preprocess model and model, in TF ops: words in, tag
    probabilities ``[batch, longest, tags]`` out (see `EntityTagger`)."""

    def __init__(self, tagger: BertTagger):
        super().__init__(name="word_piece_reader")
        # Tracked here so the encoder's variables and the tokeniser's tables are saved.
        self.model = tagger.model
        self.preprocess = tagger.windows.preprocess
        self._tagger = tagger

    def __call__(self, words: tf.RaggedTensor, codes: tf.RaggedTensor) -> tf.Tensor:
        return self._tagger.word_probabilities(words).to_tensor(0.0)
