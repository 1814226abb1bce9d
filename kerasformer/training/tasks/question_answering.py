"""Span question answering: SQuAD questions in, a `QuestionAnswerer` (BERT + tokeniser) out."""

from __future__ import annotations

import time
from pathlib import Path

from kerasformer.backend import keras
from kerasformer.datasets.answer_spans import span_batches, span_examples
from kerasformer.datasets.squad import QuestionAnsweringData, SquadExamples, load_squad
from kerasformer.errors import KerasformerError
from kerasformer.export.question_answerer_export import write_question_answerer
from kerasformer.models.bert_classifier import ONLINE_ENCODER, ONLINE_PREPROCESS
from kerasformer.models.bert_question_answerer import build_bert_question_answerer
from kerasformer.models.question_answerer import (
    DEFAULTS,
    MAX_ANSWER_TOKENS,
    QuestionAnswerer,
    load_preprocess,
)
from kerasformer.training.fit_plan import FitPlan
from kerasformer.training.squad_metrics import squad_scores

OPTIONS = (*DEFAULTS, "max_answer_tokens", "preprocess", "encoder")


class QuestionAnsweringTask:
    name = "question-answering"
    models = ("bert",)
    datasets = ("squad",)
    headline_metrics = ("exact_match", "f1")
    export_kind = "question answerer"

    def load_data(self, config) -> QuestionAnsweringData:
        return load_squad(
            config.data_dir, validation_fraction=config.validation_fraction, split_seed=0
        )

    def require_trainable(self, data: QuestionAnsweringData) -> None:
        for split in ("train", "validation"):
            if len(data.splits[split]) == 0:
                raise KerasformerError(f"the {split} split of {data.name} has no questions.")

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
        preprocess_handle = str(options.pop("preprocess", None) or ONLINE_PREPROCESS)
        encoder_handle = str(options.pop("encoder", None) or ONLINE_ENCODER)
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
            callbacks=[ValidationAnswers(answerer, data.splits["validation"], config.batch_size)],
        )  # fmt: skip
        return answerer, plan

    def evaluate(self, answerer: QuestionAnswerer, data: QuestionAnsweringData, config) -> dict:
        return {
            split: evaluate_answers(answerer, data.splits[split], config.batch_size)
            for split in ("validation", "test")
        }

    def write_export(self, answerer: QuestionAnswerer, data, directory: Path) -> None:
        write_question_answerer(answerer, directory)

    def keras_model(self, answerer: QuestionAnswerer):
        return answerer.model


def evaluate_answers(answerer: QuestionAnswerer, part: SquadExamples, batch_size: int) -> dict:
    """SQuAD exact match and F1 of the answerer's answers, and its speed."""
    started = time.perf_counter()
    answers = answerer.answer(list(part.questions), list(part.contexts), batch_size)
    seconds = time.perf_counter() - started
    scores = squad_scores([a["answer"] for a in answers], part.answers)
    return {**scores, "examples_per_second": len(part) / seconds}


class ValidationAnswers(keras.callbacks.Callback):
    """Adds ``val_exact_match`` and ``val_f1`` to every epoch's logs (and history)."""

    def __init__(self, answerer: QuestionAnswerer, part: SquadExamples, batch_size: int):
        super().__init__()
        self.answerer = answerer
        self.part = part
        self.batch_size = batch_size

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        scores = evaluate_answers(self.answerer, self.part, self.batch_size)
        logs["val_exact_match"] = scores["exact_match"]
        logs["val_f1"] = scores["f1"]


__all__ = ["MAX_ANSWER_TOKENS", "QuestionAnsweringTask"]
