"""BERT inputs for span questions: question + context windows that cover long contexts.

A context longer than the sequence length is cut into overlapping windows, each packed
as ``[CLS] question [SEP] context part [SEP]`` by the TF-Hub preprocess model's
``bert_pack_inputs``. Every context wordpiece keeps the byte range of the context it came
from, so a predicted span maps back to the original characters.

Offsets: the TF-Hub tokenisers lower-case and strip accents before they split, and
report offsets into that normalised text, which drift from the original wherever a
character changes its length in bytes ("é" is 2 bytes, "e" is 1). So the context is
first split into BERT's own pieces (white space, punctuation and CJK characters
separate pieces, as in BERT's basic tokeniser) with offsets into the original, and each
piece is tokenised on its own. Inside an ASCII piece the tokeniser's offsets are exact
(lower-casing ASCII keeps every byte in place); the wordpieces of any other piece all
carry the whole piece's range, so an answer can start or end inside an ASCII word
("1990" of "1990s") but takes a non-ASCII word whole.
"""

from __future__ import annotations

import tensorflow_text

# tensorflow_text's own delimiters for BERT's basic tokeniser, so the pieces split here
# are exactly the words that tokeniser would find.
from tensorflow_text.python.ops.bert_tokenizer import (
    _DELIM_REGEX_PATTERN as BERT_DELIMITERS,
)
from tensorflow_text.python.ops.bert_tokenizer import (
    _KEEP_DELIM_NO_WHITESPACE_PATTERN as BERT_KEPT_DELIMITERS,
)

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.models import defaults
from kerasformer.models.bert_packing import require_packing_functions
from kerasformer.validation import is_whole_number

# The basic tokeniser turns control and format characters into spaces first.
PIECE_DELIMITERS = r"\p{Cc}|\p{Cf}|" + BERT_DELIMITERS
ASCII = r"[\x00-\x7f]*"
ENCODER_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")
NOT_CONTEXT = -1
LONGEST_DEFAULT_STRIDE = defaults.LONGEST_DEFAULT_STRIDE


class SpanWindows:
    """Cuts (question, context) pairs into BERT inputs and remembers where each token came from.

    Args:
        preprocess: A loaded TF-Hub BERT preprocess model (``hub.load(handle)``) with
            ``tokenize`` and ``bert_pack_inputs``; with ``tokenize_with_offsets`` too
            (``kerasformer convert-bert`` writes it), answers can split ASCII words.
        seq_length: Tokens per window, special tokens included.
        doc_stride: Context tokens between the starts of two windows of one context
            (default: 128, as BERT's SQuAD setup, or half the context room of a window if
            that is less, so neighbouring windows overlap by half).
        max_question_tokens: Questions are cut to this many wordpieces (default: 64, as
            BERT's SQuAD setup, or a quarter of ``seq_length`` if that is less).

    Calling it with 1-D string tensors of questions and contexts returns a dict of
    ``[windows, seq_length]`` int32 tensors: ``input_word_ids``, ``input_mask``,
    ``input_type_ids`` (the encoder's inputs), ``token_starts`` and ``token_limits``
    (each token's byte range in its context, -1 outside the context), and ``example``
    (``[windows]``: the pair each window belongs to). Every pair has at least one window;
    a context with no tokens (empty) has no context positions in it.

    Example:

    >>> windows = SpanWindows(hub.load("hub/minilm/preprocess"), seq_length=128)
    >>> inputs = windows(tf.constant(["Who?"]), tf.constant(["A long paragraph ..."]))
    """

    def __init__(
        self,
        preprocess,
        seq_length: int = 384,
        doc_stride: int | None = None,
        max_question_tokens: int | None = None,
    ):
        if max_question_tokens is None:
            max_question_tokens = default_max_question_tokens(seq_length)
        require_count("seq_length", seq_length)
        require_count("max_question_tokens", max_question_tokens)
        room = seq_length - 3 - max_question_tokens
        if room < 1:
            raise KerasformerError(
                f"seq_length {seq_length} leaves no room for the context after a "
                f"{max_question_tokens}-token question and 3 special tokens; raise seq_length "
                "or lower max_question_tokens."
            )
        if doc_stride is None:
            doc_stride = min(LONGEST_DEFAULT_STRIDE, max(1, room // 2))
        require_count("doc_stride", doc_stride)
        if doc_stride > room:
            raise KerasformerError(
                f"doc_stride {doc_stride} is longer than the {room} context tokens a window "
                "can hold, so windows would skip text; lower doc_stride to at most "
                f"{room} (seq_length - 3 - max_question_tokens)."
            )
        require_packing_functions(preprocess)
        self.preprocess = preprocess
        self.seq_length = seq_length
        self.doc_stride = doc_stride
        self.max_question_tokens = max_question_tokens
        self.has_offsets = hasattr(preprocess, "tokenize_with_offsets")

    def __call__(self, questions: tf.Tensor, contexts: tf.Tensor) -> dict[str, tf.Tensor]:
        question_ids = self.wordpieces(questions)[:, : self.max_question_tokens]
        context_ids, context_starts, context_limits = self.context_wordpieces(contexts)
        example, first, length = self.window_layout(
            question_ids.row_lengths(), context_ids.row_lengths()
        )
        positions = tf.ragged.range(first, first + length)
        taken = positions + tf.expand_dims(tf.gather(context_ids.row_starts(), example), 1)
        window_questions = tf.gather(question_ids, example)
        window_contexts = tf.gather(context_ids.flat_values, taken)
        inputs = dict(
            self.preprocess.bert_pack_inputs(
                [window_questions, window_contexts],
                seq_length=tf.constant(self.seq_length, tf.int32),
            )
        )
        # Context tokens sit after [CLS], the question and [SEP].
        context_offset = window_questions.row_lengths() + 2
        for name, values in (("token_starts", context_starts), ("token_limits", context_limits)):
            inputs[name] = self.scatter_context(
                tf.gather(values.flat_values, taken), context_offset
            )
        inputs["example"] = tf.cast(example, tf.int32)
        return inputs

    def wordpieces(self, texts: tf.Tensor) -> tf.RaggedTensor:
        """``[batch, (wordpieces)]`` int32 ids of each text."""
        return self.preprocess.tokenize(texts).merge_dims(1, 2)

    def context_wordpieces(self, contexts: tf.Tensor):
        """Ids, byte starts and byte limits of each context's wordpieces, ``[batch, (n)]``."""
        pieces, piece_starts, piece_limits = tensorflow_text.regex_split_with_offsets(
            contexts, PIECE_DELIMITERS, BERT_KEPT_DELIMITERS
        )
        flat_pieces = pieces.flat_values
        piece_starts = tf.cast(piece_starts.flat_values, tf.int32)
        piece_limits = tf.cast(piece_limits.flat_values, tf.int32)
        if self.has_offsets:
            ids, starts, limits = self.preprocess.tokenize_with_offsets(flat_pieces)
            ids = ids.merge_dims(1, 2)
            starts = tf.cast(starts.merge_dims(1, 2).flat_values, tf.int32)
            limits = tf.cast(limits.merge_dims(1, 2).flat_values, tf.int32)
        else:
            ids = self.wordpieces(flat_pieces)
        piece = ids.value_rowids()
        whole_start = tf.gather(piece_starts, piece)
        whole_limit = tf.gather(piece_limits, piece)
        if self.has_offsets:
            exact = tf.gather(tf.strings.regex_full_match(flat_pieces, ASCII), piece)
            token_starts = tf.where(exact, whole_start + starts, whole_start)
            token_limits = tf.where(exact, whole_start + limits, whole_limit)
        else:
            token_starts, token_limits = whole_start, whole_limit
        per_context = tf.math.unsorted_segment_sum(
            ids.row_lengths(), pieces.value_rowids(), tf.shape(contexts, tf.int64)[0]
        )

        def by_context(values):
            return tf.RaggedTensor.from_row_lengths(values, per_context, validate=False)

        return by_context(ids.flat_values), by_context(token_starts), by_context(token_limits)

    def window_layout(self, question_lengths: tf.Tensor, context_lengths: tf.Tensor):
        """For each window: its pair, its first context token and how many it holds."""
        room = self.seq_length - 3 - question_lengths
        overflow = tf.maximum(context_lengths - room, 0)
        count = 1 + (overflow + self.doc_stride - 1) // self.doc_stride
        example = tf.repeat(tf.range(tf.size(count, tf.int64)), count)
        first = tf.ragged.range(count).flat_values * self.doc_stride
        length = tf.minimum(tf.gather(room, example), tf.gather(context_lengths, example) - first)
        return example, first, length

    def scatter_context(self, values: tf.RaggedTensor, offset: tf.Tensor) -> tf.Tensor:
        """``[windows, seq_length]``: ``values`` placed from ``offset``, -1 elsewhere."""
        windows = tf.shape(offset, tf.int64)[0]
        rows = values.value_rowids()
        columns = tf.gather(offset, rows) + (
            tf.range(tf.size(values.flat_values, tf.int64)) - tf.gather(values.row_starts(), rows)
        )
        return tf.tensor_scatter_nd_update(
            tf.fill(tf.stack([windows, self.seq_length]), NOT_CONTEXT),
            tf.stack([rows, columns], axis=1),
            values.flat_values,
        )


def default_max_question_tokens(seq_length: int) -> int:
    if not is_whole_number(seq_length):
        return 64  # the seq_length check names the problem
    return max(1, min(64, seq_length // 4))


def require_count(name: str, value) -> None:
    if not is_whole_number(value) or value < 1:
        raise KerasformerError(f"{name} must be a whole number >= 1, got {value!r}.")
