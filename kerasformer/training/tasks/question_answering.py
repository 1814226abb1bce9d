"""Span question answering: SQuAD questions in, a `QuestionAnswerer` (BERT + tokeniser) out."""

from __future__ import annotations

from pathlib import Path

from kerasformer.backend import keras
from kerasformer.datasets.answer_spans import span_batches, span_examples
from kerasformer.datasets.data_summary import summarize_questions
from kerasformer.datasets.squad import QuestionAnsweringData, SquadExamples
from kerasformer.errors import KerasformerError
from kerasformer.export.question_answerer_export import write_question_answerer
from kerasformer.models.bert_classifier import (
    ONLINE_ENCODER,
    ONLINE_PREPROCESS,
    absolute_handle,
)
from kerasformer.models.bert_question_answerer import build_bert_question_answerer
from kerasformer.models.encoder_positions import require_seq_length_fits
from kerasformer.models.question_answerer import (
    DEFAULTS,
    MAX_ANSWER_TOKENS,
    QuestionAnswerer,
    load_preprocess,
)
from kerasformer.training.fit_plan import FitPlan
from kerasformer.training.question_answerer_evaluation import evaluate_answers
from kerasformer.training.tasks.base import Task

OPTIONS = (*DEFAULTS, "max_answer_tokens", "preprocess", "encoder")


class QuestionAnsweringTask(Task):
    """SQuAD questions in; a `QuestionAnswerer`, its EM and F1 and an answerer export out."""

    example_noun = "questions"

    def describe(self, data: QuestionAnsweringData) -> str:
        sizes = ", ".join(f"{count} {split}" for split, count in data.sizes().items())
        articles = ", ".join(str(count) for count in data.articles().values())
        return f"{data.name}: {sizes} questions (articles {articles}, split by article)"

    def build(self, config, data: QuestionAnsweringData):
        options = dict(config.model_options)
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise KerasformerError(
                f"unknown option(s) for question answering: {', '.join(unknown)}; choose from "
                f"{', '.join(OPTIONS)}."
            )
        preprocess_handle = absolute_handle(options.pop("preprocess", None) or ONLINE_PREPROCESS)
        encoder_handle = str(options.pop("encoder", None) or ONLINE_ENCODER)
        require_seq_length_fits(options.get("seq_length", DEFAULTS["seq_length"]), encoder_handle)
        if data.has_unanswerable and options.get("null_threshold") is None:
            options["null_threshold"] = 0.0  # SQuAD 2.0: BERT's threshold
        model = build_bert_question_answerer(encoder_handle, trainable=True)
        answerer = QuestionAnswerer(
            model, load_preprocess(preprocess_handle), preprocess_handle=preprocess_handle,
            **options,
        )  # fmt: skip
        cut: dict[int, tuple] = {}

        def batches(part: SquadExamples, batch_size: int, shuffle_seed: int | None):
            # Cut once per split: the trainer asks for train and validation batches once.
            if id(part) not in cut:
                cut[id(part)] = span_examples(part, answerer.windows)
            return span_batches(*cut[id(part)], batch_size, shuffle_seed)

        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        plan = FitPlan(
            model, model, config.xla, batches,
            loss={"start_logits": loss, "end_logits": loss},
            metrics={"start_logits": ["accuracy"], "end_logits": ["accuracy"]},
            callbacks=[ValidationAnswers(answerer, data, config.batch_size)],
            encoder=answerer.encoder,
        )  # fmt: skip
        return answerer, plan

    def evaluate(self, answerer: QuestionAnswerer, data: QuestionAnsweringData, config) -> dict:
        return {
            split: evaluate_answers(
                answerer, data.splits[split], config.batch_size, data.has_unanswerable
            )
            for split in ("validation", "test")
        }

    def write_export(self, answerer: QuestionAnswerer, data, directory: Path) -> None:
        write_question_answerer(answerer, directory)

    def summarize(self, answerer: QuestionAnswerer, data: QuestionAnsweringData) -> dict:
        return summarize_questions(data)

    def reported_metrics(self, metrics: dict[str, dict]) -> tuple[str, ...]:
        """EM and F1, and for SQuAD 2.0 data those of answerable and unanswerable questions."""
        parts = ("has_answer_exact_match", "has_answer_f1", "no_answer_exact_match", "no_answer_f1")
        return self.headline_metrics + tuple(
            name for name in parts if all(name in split for split in metrics.values())
        )


class ValidationAnswers(keras.callbacks.Callback):
    """Adds ``val_exact_match`` and ``val_f1`` to every epoch's logs (and history)."""

    def __init__(self, answerer: QuestionAnswerer, data: QuestionAnsweringData, batch_size: int):
        super().__init__()
        self.answerer = answerer
        self.part = data.splits["validation"]
        self.unanswerable = data.has_unanswerable
        self.batch_size = batch_size

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        scores = evaluate_answers(self.answerer, self.part, self.batch_size, self.unanswerable)
        logs["val_exact_match"] = scores["exact_match"]
        logs["val_f1"] = scores["f1"]


__all__ = ["MAX_ANSWER_TOKENS", "QuestionAnsweringTask"]
