"""BERT inputs packed to the length of their text, not to a fixed sequence length.

A TF-Hub BERT preprocess model called as a layer pads every text to its sequence length
(``convert-bert --seq-length``, 128 by default), so a batch of short texts costs as much
encoder work as a batch of long ones. Its two sub-functions split that in two:
``tokenize`` (strings to wordpieces) and ``bert_pack_inputs(segments, seq_length)``
(``[CLS] pieces [SEP]``, padded to ``seq_length``). `BertInputPacker` tokenises once and
packs each batch only as long as its longest text; texts longer than the preprocess
model's own sequence length are cut exactly where it cuts them, so every text reaches
the encoder as the string-in model would give it, without the padding. BERT masks
padding in attention, so the encoder's outputs do not change.
"""

from __future__ import annotations

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.validation import is_whole_number

ENCODER_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")
# [CLS] before the text, [SEP] after it.
SPECIAL_TOKENS_PER_TEXT = 2


class BertInputPacker:
    """Tokenises texts once and packs them into encoder inputs only as long as needed.

    Args:
        preprocess: A TF-Hub BERT preprocess model with ``tokenize`` and
            ``bert_pack_inputs``: a loaded SavedModel (``hub.load``) or the
            ``hub.KerasLayer`` that holds one.
        max_seq_length: Longest packed sequence, special tokens included. Default: the
            preprocess model's own sequence length, so texts are cut where it cuts them.

    Example:

    >>> packer = BertInputPacker(hub.load("hub/minilm/preprocess"))
    >>> inputs = packer.pack(packer.word_pieces(tf.constant(["Stocks rose.", "Hi"])))
    >>> inputs["input_word_ids"].shape  # [CLS] stocks rose . [SEP]
    TensorShape([2, 5])
    """

    def __init__(self, preprocess, max_seq_length: int | None = None):
        preprocess = getattr(preprocess, "resolved_object", preprocess)
        require_packing_functions(preprocess)
        if max_seq_length is None:
            max_seq_length = default_seq_length(preprocess)
        if not is_whole_number(max_seq_length) or max_seq_length <= SPECIAL_TOKENS_PER_TEXT:
            raise KerasformerError(
                f"max_seq_length must be a whole number above {SPECIAL_TOKENS_PER_TEXT}, "
                f"got {max_seq_length!r}."
            )
        self.preprocess = preprocess
        self.max_seq_length = max_seq_length
        special = preprocess.tokenize.get_special_tokens_dict()
        self.padding_id = int(special["padding_id"])

    @property
    def max_pieces(self) -> int:
        """The most wordpieces of one text that reach the encoder."""
        return self.max_seq_length - SPECIAL_TOKENS_PER_TEXT

    def word_pieces(self, texts: tf.Tensor) -> tf.RaggedTensor:
        """``[batch, (pieces)]`` wordpiece ids of 1-D ``texts``, cut to `max_pieces`."""
        pieces = self.preprocess.tokenize(texts).merge_dims(1, 2)
        return pieces[:, : self.max_pieces]

    def piece_counts(self, texts: list[str], batch_size: int = 4096) -> list[int]:
        """Each text's length as the encoder would read it uncut: pieces, [CLS] and [SEP]."""
        counts = []
        for start in range(0, len(texts), batch_size):
            pieces = self.preprocess.tokenize(tf.constant(texts[start : start + batch_size]))
            lengths = pieces.merge_dims(1, 2).row_lengths() + SPECIAL_TOKENS_PER_TEXT
            counts.extend(int(length) for length in lengths.numpy())
        return counts

    def pack(self, pieces: tf.RaggedTensor, seq_length: tf.Tensor | int | None = None) -> dict:
        """Encoder inputs ``[batch, seq_length]``; by default as long as the longest text."""
        if seq_length is None:
            longest = tf.reduce_max(tf.concat([pieces.row_lengths(), [0]], axis=0))
            seq_length = tf.cast(longest, tf.int32) + SPECIAL_TOKENS_PER_TEXT
        packed = self.preprocess.bert_pack_inputs(
            [pieces], seq_length=tf.cast(seq_length, tf.int32)
        )
        return {key: packed[key] for key in ENCODER_INPUTS}

    def pack_padded(self, ids: tf.Tensor) -> dict:
        """Encoder inputs from wordpiece ids padded with `padding_id` (a ``tf.data`` batch).

        The packed length is the padded width plus the special tokens, so batches padded
        to a bucket's limit (for XLA) keep that fixed shape.
        """
        pieces = tf.RaggedTensor.from_tensor(ids, padding=self.padding_id)
        return self.pack(pieces, tf.shape(ids)[1] + SPECIAL_TOKENS_PER_TEXT)

    def padded_word_pieces(self, texts: tf.Tensor) -> tf.Tensor:
        """`word_pieces` padded with `padding_id` into one dense ``[batch, longest]`` tensor."""
        return self.word_pieces(texts).to_tensor(default_value=self.padding_id)

    def require_padding_id_zero(self) -> None:
        """Token-id pipelines read id 0 as padding; a vocabulary padding otherwise is refused."""
        if self.padding_id != 0:
            raise KerasformerError(
                f"this BERT vocabulary pads with id {self.padding_id}, not 0, which the "
                "length-bucketed pipelines need; train with --input-pipeline strings."
            )


def require_packing_functions(preprocess) -> None:
    """Refuse a preprocess model without the sub-functions that pack inputs by hand."""
    for function in ("tokenize", "bert_pack_inputs"):
        if not hasattr(preprocess, function):
            raise KerasformerError(
                f"the preprocess model has no {function}(); give a TF-Hub BERT "
                "preprocess model, e.g. one written by `kerasformer convert-bert`."
            )


def default_seq_length(preprocess) -> int:
    """The sequence length a preprocess model pads to when called on strings."""
    packed = preprocess(tf.constant([""]))
    return int(packed["input_word_ids"].shape[-1])


def in_length_sorted_chunks(
    packer: BertInputPacker, apply, pieces: tf.RaggedTensor, chunk_size: int, width: int
) -> tf.Tensor:
    """``apply(encoder inputs)`` for every text, on chunks of texts of similar length.

    The texts are ordered by length and cut into chunks of ``chunk_size``, each packed
    to its own longest text, so a batch of mostly short texts with a few long ones pays
    for the long ones once. Returns ``[batch, width]`` rows in the texts' own order.
    """
    lengths = pieces.row_lengths()
    order = tf.argsort(lengths, stable=True)
    ordered = tf.gather(pieces, order)
    count = tf.shape(order)[0]
    chunks = (count + chunk_size - 1) // chunk_size
    rows = tf.TensorArray(tf.float32, size=chunks, infer_shape=False, element_shape=[None, width])

    def one_chunk(index, rows):
        start = index * chunk_size
        chunk = ordered[start : start + chunk_size]
        return index + 1, rows.write(index, tf.cast(apply(packer.pack(chunk)), tf.float32))

    _, rows = tf.while_loop(lambda index, _: index < chunks, one_chunk, (0, rows))
    ordered_rows = tf.cond(chunks > 0, rows.concat, lambda: tf.zeros([0, width], tf.float32))
    return tf.gather(ordered_rows, tf.argsort(order))
