"""BERT inputs for word tagging: sentences of words cut into windows of word pieces.

Each word is split into BERT word pieces on its own, so every piece knows its word, and
the word is labelled on its first piece (Devlin et al., 2019, section 5.3). A sentence
longer than the window is cut into overlapping windows, ``stride`` pieces apart; a word
seen in several windows is read from the one where it has the most context on both
sides (BERT's "max context" rule for SQuAD). Everything is TensorFlow ops, so the same
code cuts training data and runs inside an exported SavedModel.
"""

from __future__ import annotations

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.models.bert_packing import require_packing_functions
from kerasformer.models.span_windows import ENCODER_INPUTS, require_count

NOT_A_WORD = -1
# [CLS] before the pieces, [SEP] after them.
SPECIAL_TOKENS = 2


def ragged_words(sentences) -> tf.RaggedTensor:
    """``[sentences, (words)]`` strings from a list of sentences, each a list of words.

    Built from one flat array and the row lengths: `tf.ragged.constant` on nested lists
    takes minutes on a dataset the size of CoNLL-2003.
    """
    return tf.RaggedTensor.from_row_lengths(
        tf.constant([word for words in sentences for word in words], tf.string),
        tf.constant([len(words) for words in sentences], tf.int64),
    )


class WordPieceWindows:
    """Cuts sentences of words into ``[CLS] pieces [SEP]`` windows and maps words to pieces.

    Args:
        preprocess: A loaded TF-Hub BERT preprocess model (``hub.load(handle)``) with
            ``tokenize``, ``bert_pack_inputs`` and ``tokenize.get_special_tokens_dict``,
            as ``kerasformer convert-bert`` writes it.
        seq_length: The most tokens of one window, special tokens included.
        stride: Word pieces between the starts of two windows of one sentence (default:
            half a window, so neighbouring windows overlap by half).

    Calling it with a ragged ``[sentences, (words)]`` string tensor returns a dict of
    ``[windows, length]`` int32 tensors, ``length`` the longest window's (at most
    ``seq_length``): ``input_word_ids``, ``input_mask``, ``input_type_ids`` (the encoder's
    inputs) and ``word_index`` (at a word's first piece, the word's index in its
    sentence; -1 elsewhere), with ``example`` (``[windows]``, each window's sentence)
    and ``context`` (``[windows, length]``: fewer pieces on the nearer side of the
    position within its window; the window where a word's first piece has the most
    is the one it is read from). A word BERT reads as no pieces at all (a lone
    combining accent) is read as ``[MASK]``. An empty sentence has one empty window.

    Example:

    >>> windows = WordPieceWindows(hub.load("hub/minilm/preprocess"), seq_length=128)
    >>> inputs = windows(tf.ragged.constant([["Zoë", "visited", "Paris", "."]]))
    """

    def __init__(self, preprocess, seq_length: int = 128, stride: int | None = None):
        require_count("seq_length", seq_length)
        room = seq_length - SPECIAL_TOKENS
        if room < 1:
            raise KerasformerError(
                f"seq_length {seq_length} leaves no room for a word piece beside [CLS] and "
                "[SEP]; use a seq_length of 3 or more."
            )
        if stride is None:
            stride = max(1, room // 2)
        require_count("stride", stride)
        if stride > room:
            raise KerasformerError(
                f"stride {stride} is longer than the {room} pieces a window holds, so windows "
                f"would skip words; lower the stride (--doc-stride) to at most {room} "
                "(seq_length - 2)."
            )
        require_packing_functions(preprocess)
        self.preprocess = preprocess
        self.seq_length = seq_length
        self.stride = stride
        self.mask_id = int(preprocess.tokenize.get_special_tokens_dict()["mask_id"])

    @property
    def room(self) -> int:
        return self.seq_length - SPECIAL_TOKENS

    def __call__(self, words: tf.RaggedTensor) -> dict[str, tf.Tensor]:
        pieces = self.word_pieces(words.flat_values)
        # [sentences, (pieces)] with each piece's word index in its sentence, or -1.
        by_word = tf.RaggedTensor.from_row_lengths(pieces, words.row_lengths(), validate=False)
        sentence_pieces = by_word.merge_dims(1, 2)
        word_of_piece = tf.ragged.range(words.row_lengths()).flat_values
        first_piece = tf.ragged.range(pieces.row_lengths()).flat_values == 0
        labelled = tf.where(
            first_piece,
            tf.repeat(tf.cast(word_of_piece, tf.int32), pieces.row_lengths()),
            NOT_A_WORD,
        )
        example, first, length = self.window_layout(sentence_pieces.row_lengths())
        taken = tf.ragged.range(first, first + length) + tf.expand_dims(
            tf.gather(sentence_pieces.row_starts(), example), 1
        )
        window_pieces = tf.gather(sentence_pieces.flat_values, taken)
        longest = tf.reduce_max(tf.pad(length, [[0, 1]]))  # 0 when there are no windows
        width = tf.cast(longest, tf.int32) + SPECIAL_TOKENS
        packed = self.preprocess.bert_pack_inputs([window_pieces], seq_length=width)
        inputs = {key: tf.cast(packed[key], tf.int32) for key in ENCODER_INPUTS}
        rank = tf.ragged.range(length)
        context = tf.minimum(rank, tf.expand_dims(length, 1) - 1 - rank)
        inputs["word_index"] = at_pieces(tf.gather(labelled, taken))
        inputs["context"] = at_pieces(tf.cast(context, tf.int32))
        inputs["example"] = tf.cast(example, tf.int32)
        return inputs

    def word_pieces(self, flat_words: tf.Tensor) -> tf.RaggedTensor:
        """``[words, (pieces)]`` ids of each word; a word with none gets ``[MASK]``."""
        pieces = self.preprocess.tokenize(flat_words).merge_dims(1, 2)
        empty = tf.cast(tf.equal(pieces.row_lengths(), 0), tf.int64)
        masks = tf.RaggedTensor.from_row_lengths(
            tf.fill([tf.reduce_sum(empty)], tf.cast(self.mask_id, pieces.dtype)), empty
        )
        return tf.concat([pieces, masks], axis=1)

    def window_layout(self, piece_counts: tf.Tensor):
        """For each window: its sentence, its first piece and how many pieces it holds."""
        overflow = tf.maximum(piece_counts - self.room, 0)
        count = 1 + (overflow + self.stride - 1) // self.stride
        example = tf.repeat(tf.range(tf.size(count, tf.int64)), count)
        first = tf.ragged.range(count).flat_values * self.stride
        length = tf.minimum(tf.gather(piece_counts, example) - first, self.room)
        return example, first, length


def at_pieces(values: tf.RaggedTensor) -> tf.Tensor:
    """``[windows, longest + 2]``: each window's ``values`` where its pieces sit (after
    [CLS]), -1 at the special tokens and the padding."""
    dense = values.to_tensor(NOT_A_WORD)
    return tf.pad(dense, [[0, 0], [1, 1]], constant_values=NOT_A_WORD)


def word_logits(logits: tf.Tensor, inputs: dict, words_per_sentence: tf.Tensor) -> tf.RaggedTensor:
    """``[sentences, (words), tags]``: each word's logits at its first piece, from the
    window where that piece has the most context (`WordPieceWindows`' ``context``).

    ``logits`` is the model's ``[windows, length, tags]`` output for ``inputs``.
    """
    word_index = inputs["word_index"]
    at_word = tf.where(word_index >= 0)  # [positions, 2]: window, column
    window = at_word[:, 0]
    sentence_start = tf.pad(tf.cumsum(words_per_sentence), [[1, 0]])
    word = tf.gather(sentence_start, tf.gather(inputs["example"], window)) + tf.cast(
        tf.gather_nd(word_index, at_word), tf.int64
    )
    total = tf.reduce_sum(words_per_sentence)
    context = tf.gather_nd(inputs["context"], at_word)
    best = tf.math.unsorted_segment_max(context, word, total)
    # Of a word's positions with the most context, the first.
    is_best = tf.equal(context, tf.gather(best, word))
    position = tf.range(tf.shape(at_word, tf.int64)[0])
    chosen = tf.math.unsorted_segment_min(tf.where(is_best, position, tf.int64.max), word, total)
    values = tf.gather(tf.gather_nd(logits, at_word), chosen)
    return tf.RaggedTensor.from_row_lengths(values, words_per_sentence, validate=False)
