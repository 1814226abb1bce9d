"""A trained span question-answering model with its tokeniser: strings in, answers out.

`QuestionAnswerer` cuts each (question, context) pair into windows (`SpanWindows`),
runs the model on every window, picks the best span across a pair's windows
(`best_spans`) and returns its text from the original context (`span_texts`), all in
TensorFlow ops, so the same function runs eagerly and inside an exported SavedModel.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import tensorflow_hub as hub

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.models import defaults
from kerasformer.models.attention_maps import AttentionMap, bert_attention_map
from kerasformer.models.bert_classifier import encoder_layer, load_hub_handle
from kerasformer.models.question_pairs import answers_in_batches, require_pairs
from kerasformer.models.span_extraction import (
    best_spans,
    null_scores,
    span_texts,
    without_unanswered,
)
from kerasformer.models.span_windows import ENCODER_INPUTS, SpanWindows
from kerasformer.validation import is_real_number, is_whole_number

DEFAULTS = defaults.QUESTION_ANSWERER
MAX_ANSWER_TOKENS = 30  # BERT's SQuAD setting


class QuestionAnswerer:
    """A span-labelling model (`build_bert_question_answerer`) and its preprocess model.

    Args:
        model: Keras model from packed windows to ``{start_logits, end_logits}``.
        preprocess: The loaded TF-Hub BERT preprocess model the encoder expects.
        seq_length: Word pieces per window, special tokens included (384 by default,
            BERT's SQuAD setting); contexts are cut into windows as `SpanWindows` does.
        doc_stride: Context word pieces between the starts of two windows of one
            context; None (the default): 128, or half a window's context room if less.
        max_question_tokens: Questions are cut to this many word pieces; None (the
            default): 64, or a quarter of ``seq_length`` if less.
        max_answer_tokens: Longest answer considered, in wordpieces.
        preprocess_handle: Where ``preprocess`` was loaded from, kept for exports.
        null_threshold: None to always answer; otherwise a question whose no-answer
            score ([CLS]'s start + end logits, least over its windows) exceeds its best
            span's score by more than this is answered ``""`` (SQuAD 2.0; 0.0 is BERT's).

    Raises:
        KerasformerError: ``null_threshold`` is not a finite number,
            ``max_answer_tokens`` is not a whole number >= 1, or the window sizes leave
            no room for a context.

    Examples:
        >>> from kerasformer.loading import load_question_answerer
        >>> trained = load_question_answerer("saved_models/squad-bert")
        >>> preprocess = load_preprocess(trained.preprocess_handle)
        >>> settings = dict(trained.settings, null_threshold=0.0)  # may answer "" (SQuAD 2.0)
        >>> answerer = QuestionAnswerer(trained.model, preprocess, **settings)
        >>> found = answerer.answer(["Who won?"], ["The Broncos won the game."])[0]
        >>> sorted(found)
        ['answer', 'end', 'no_answer_score', 'score', 'start']
    """

    def __init__(
        self,
        model,
        preprocess,
        seq_length: int = DEFAULTS["seq_length"],
        doc_stride: int | None = DEFAULTS["doc_stride"],
        max_question_tokens: int | None = DEFAULTS["max_question_tokens"],
        max_answer_tokens: int = MAX_ANSWER_TOKENS,
        preprocess_handle: str | None = None,
        null_threshold: float | None = DEFAULTS["null_threshold"],
    ):
        if null_threshold is not None and not (
            is_real_number(null_threshold) and math.isfinite(null_threshold)
        ):
            raise KerasformerError(
                f"null_threshold must be a finite number (0 is BERT's), got {null_threshold!r}."
            )
        if not is_whole_number(max_answer_tokens):
            raise KerasformerError(
                f"max_answer_tokens must be a whole number, got {max_answer_tokens!r}."
            )
        if max_answer_tokens < 1:
            raise KerasformerError(f"max_answer_tokens must be >= 1, got {max_answer_tokens}.")
        self.model = model
        self.preprocess_handle = preprocess_handle
        self.windows = SpanWindows(preprocess, seq_length, doc_stride, max_question_tokens)
        self.max_answer_tokens = max_answer_tokens
        self.null_threshold = None if null_threshold is None else float(null_threshold)
        # Any batch size: traced once, not again for the second size it meets.
        batch = tf.TensorSpec([None], tf.string)
        self._answer_batch = tf.function(self.answer_tensors, input_signature=[batch, batch])

    @property
    def settings(self) -> dict:
        return {
            "seq_length": self.windows.seq_length,
            "doc_stride": self.windows.doc_stride,
            "max_question_tokens": self.windows.max_question_tokens,
            "max_answer_tokens": self.max_answer_tokens,
            "null_threshold": self.null_threshold,
        }

    def answer_tensors(self, questions: tf.Tensor, contexts: tf.Tensor) -> dict[str, tf.Tensor]:
        """Answers to a batch of 1-D string tensors, as tensors (graph-friendly).

        Returns ``answer`` (string), ``start`` and ``end`` (int32 character offsets:
        ``context[start:end] == answer``), ``score`` (float32, the span's start
        probability × end probability in its window) and ``no_answer_score`` (float32:
        how far the no-answer score beats the best span's; above ``null_threshold``,
        when there is one, the answer is ``""``, -1, -1, score 0). A pair whose context
        has no tokens gets ``""``, -1, -1, 0 and 0.
        """
        inputs = self.windows(questions, contexts)
        logits = self.model({key: inputs[key] for key in ENCODER_INPUTS}, training=False)
        spans = best_spans(
            logits["start_logits"],
            logits["end_logits"],
            inputs["token_starts"],
            inputs["example"],
            tf.shape(questions)[0],
            self.max_answer_tokens,
        )
        texts = span_texts(contexts, inputs["token_starts"], inputs["token_limits"], spans)
        margin = (
            null_scores(
                logits["start_logits"],
                logits["end_logits"],
                inputs["example"],
                tf.shape(questions)[0],
            )
            - spans["score"]
        )
        margin = tf.where(spans["window"] >= 0, margin, 0.0)
        if self.null_threshold is not None:
            texts = without_unanswered(texts, spans, margin, self.null_threshold)
        return {**texts, "no_answer_score": margin}

    def answer(
        self, questions: Sequence[str], contexts: Sequence[str], batch_size: int = 32
    ) -> list[dict]:
        """Each question's answer in its context: ``{"answer", "start", "end", "score"}``.

        Raises a one-line error for an empty question or context, or unequal lengths.
        """
        return answers_in_batches(self._answer_batch, questions, contexts, batch_size)

    def token_probabilities(self, question: str, context: str) -> dict:
        """Start and end probabilities of every context token of one pair, for pictures.

        Returns ``tokens`` (each wordpiece's text in the context, in order, windows
        merged), ``byte_ranges`` (each one's ``(start, limit)`` in the UTF-8 context),
        and ``start`` and ``end``: softmax over all of the context's tokens of the
        model's logits, where a token seen in several windows keeps the logits of the
        window in which it lies furthest from the window's edges.
        """
        require_pairs([question], [context])
        inputs = self.windows(tf.constant([question]), tf.constant([context]))
        logits = self.model({key: inputs[key] for key in ENCODER_INPUTS}, training=False)
        starts = inputs["token_starts"].numpy()
        limits = inputs["token_limits"].numpy()
        start_logits = logits["start_logits"].numpy()
        end_logits = logits["end_logits"].numpy()
        best: dict[tuple[int, int], tuple[int, float, float]] = {}
        for w in range(starts.shape[0]):
            positions = np.flatnonzero(starts[w] >= 0)
            for rank, p in enumerate(positions):
                margin = min(rank, len(positions) - 1 - rank)
                key = (int(starts[w, p]), int(limits[w, p]))
                if key not in best or margin > best[key][0]:
                    best[key] = (margin, float(start_logits[w, p]), float(end_logits[w, p]))
        ranges = sorted(best)
        raw = context.encode("utf-8")
        return {
            "tokens": [raw[s:e].decode("utf-8", errors="replace") for s, e in ranges],
            "byte_ranges": ranges,
            "start": softmax(np.array([best[r][1] for r in ranges])),
            "end": softmax(np.array([best[r][2] for r in ranges])),
        }

    @property
    def encoder(self):
        """The BERT encoder layer, whose ``trainable`` the recipes switch."""
        return encoder_layer(self.model)

    def attention_maps(self, question: str, context: str) -> list[AttentionMap]:
        """The encoder's self-attention over ``[CLS] question [SEP] context [SEP]``, up
        to the model's window (a longer context is cut at its end)."""
        require_pairs([question], [context])
        encoder = self.encoder.resolved_object
        found = bert_attention_map(
            self.windows.preprocess, encoder, question, context, self.windows.seq_length
        )
        return [found]


def softmax(logits: np.ndarray) -> np.ndarray:
    if logits.size == 0:
        return logits
    exponentials = np.exp(logits - logits.max())
    return exponentials / exponentials.sum()


def load_preprocess(handle: str | Path):
    """The TF-Hub BERT preprocess model at ``handle`` (URL or directory), with its sub-functions."""
    import tensorflow_text  # noqa: F401  (registers the tokeniser's ops)

    return load_hub_handle(handle, "preprocess", hub.load)
