"""`ExportedQuestionAnswerer` on stand-in exports: a SavedModel whose signature answers
with the first word of each context, with and without the no-answer score that exports
have returned since SQuAD 2.0 (the real model's answers: tests/cli/test_answer.py)."""

import json
import zipfile

import pytest
import tensorflow as tf

from kerasformer.errors import KerasformerError
from kerasformer.loading.exported_question_answerer import ExportedQuestionAnswerer

PAIRS = [("Who?", "Anna was born in Lima."), ("Where?", "Lima is far."), ("When?", "Today.")]


def write_stand_in_export(directory, with_no_answer_score: bool):
    """A directory that reads as a question-answerer export: its signature takes
    ``question`` and ``context`` and answers with the context's first word."""
    module = tf.Module()

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="question"),
                                  tf.TensorSpec([None], tf.string, name="context")])  # fmt: skip
    def answer(question, context):
        first = tf.strings.split(context).to_tensor("")[:, 0]
        outputs = {
            "answer": first,
            "start": tf.zeros_like(question, tf.int32),
            "end": tf.strings.length(first, unit="UTF8_CHAR"),
            "score": tf.fill(tf.shape(question), 0.5),
        }
        if with_no_answer_score:
            outputs["no_answer_score"] = -tf.cast(tf.strings.length(question), tf.float32)
        return outputs

    tf.saved_model.save(module, str(directory), signatures={"serving_default": answer})
    (directory / "question_answerer.json").write_text(json.dumps({"preprocess": "gone/"}))
    with zipfile.ZipFile(directory / "model.keras", "w") as archive:
        archive.writestr("config.json", "{}")
    return directory


def test_answers_come_from_the_signature_in_batches_one_record_per_pair(tmp_path):
    export = write_stand_in_export(tmp_path / "qa", with_no_answer_score=True)
    answerer = ExportedQuestionAnswerer.load_if_complete(export)
    questions, contexts = zip(*PAIRS, strict=True)
    answers = answerer.answer(questions, contexts, batch_size=2)
    assert answers == [
        {"answer": context.split()[0], "start": 0, "end": len(context.split()[0]),
         "score": 0.5, "no_answer_score": -float(len(question))}
        for question, context in PAIRS
    ]  # fmt: skip


def test_an_export_without_the_no_answer_score_is_left_to_the_keras_answerer(tmp_path):
    export = write_stand_in_export(tmp_path / "qa", with_no_answer_score=False)
    assert ExportedQuestionAnswerer.load_if_complete(export) is None


def test_pairs_are_checked_before_the_signature_runs(tmp_path):
    answerer = ExportedQuestionAnswerer(write_stand_in_export(tmp_path / "qa", True))
    with pytest.raises(KerasformerError, match="context 0 is empty"):
        answerer.answer(["Who?"], [" "])
    with pytest.raises(KerasformerError, match="got 2 questions and 1 contexts"):
        answerer.answer(["Who?", "Where?"], ["Lima."])
