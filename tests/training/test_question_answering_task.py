"""Fine-tuning BERT for span question answering through the shared trainer."""

import json

import pytest

from kerasformer.errors import KerasformerError
from kerasformer.training import TrainingConfig, train
from kerasformer.training.squad_metrics import squad_scores
from tests.helpers.data import write_synthetic_squad


def test_the_tiny_bert_learns_the_synthetic_span_task(trained_question_answerer):
    result = trained_question_answerer
    # Answers are 2 of ~40 words, in 32-token windows: chance is far below this.
    assert result.metrics["test"]["exact_match"] >= 80
    assert result.metrics["validation"]["f1"] >= 90
    test = result.data.splits["test"]
    answers = result.model.answer(list(test.questions), list(test.contexts))
    again = squad_scores([a["answer"] for a in answers], test.answers)
    assert again["exact_match"] == pytest.approx(result.metrics["test"]["exact_match"])
    for answer, context in zip(answers, test.contexts, strict=True):
        assert context[answer["start"] : answer["end"]] == answer["answer"]


def test_history_has_exact_match_and_f1_for_every_epoch(trained_question_answerer):
    export = trained_question_answerer.export_dir
    history = json.loads((export / "history.json").read_text())
    assert len(history["val_exact_match"]) == len(history["loss"]) == 5
    assert history["val_f1"][-1] > history["val_f1"][0]
    assert {"start_logits_accuracy", "end_logits_accuracy"} <= set(history)
    metrics = json.loads((export / "metrics.json").read_text())
    assert metrics["sizes"] == trained_question_answerer.data.sizes()
    assert (export / "history.png").is_file()


def test_an_answer_past_the_first_window_is_found(trained_question_answerer):
    answerer = trained_question_answerer.model
    filler = "the minister said today in the software research " * 8  # ~64 wordpieces
    context = filler + "coach profit " + filler
    answer = answerer.answer(["which team"], [context])[0]
    assert answer["answer"] == "coach profit"
    assert context[answer["start"] : answer["end"]] == "coach profit"
    assert 0 < answer["score"] <= 1


@pytest.mark.parametrize(
    "questions, contexts, message",
    [
        (["which team"], [""], "context 0 is empty"),
        ([" "], ["coach profit"], "question 0 is empty"),
        (["a", "b"], ["c"], "2 questions and 1 contexts"),
    ],
)
def test_bad_pairs_are_one_clear_error(trained_question_answerer, questions, contexts, message):
    with pytest.raises(KerasformerError, match=message):
        trained_question_answerer.model.answer(questions, contexts)


def test_unknown_model_options_are_named(tiny_hub_bert, tmp_path):
    config = TrainingConfig(
        task="question-answering", model="bert", dataset="squad", epochs=1,
        data_dir=str(write_synthetic_squad(tmp_path / "squad", articles=10, per_article=2)),
        export_dir=str(tmp_path / "out"),
        model_options={"preprocess": str(tiny_hub_bert.preprocess), "num_heads": 2},
    )  # fmt: skip
    with pytest.raises(KerasformerError, match="unknown option.*num_heads"):
        train(config, verbose=0)
