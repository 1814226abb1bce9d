"""Exported question answerers, served without kerasformer and loaded back with it."""

import json

import numpy as np
import pytest

from kerasformer.errors import KerasformerError
from kerasformer.export.question_answerer_export import load_question_answerer
from tests.helpers.processes import run_python_json

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

FILLER = "the minister said today in the software research " * 8
PAIRS = [
    ("which team", "said coach profit today"),
    ("which team", FILLER + "striker bank " + FILLER),  # several windows
    ("which team", "Zürich café: match shares, naïve!"),  # non-ASCII around the answer
]

# argv[1] the export, argv[2] JSON [[question, context], ...]. Prints one JSON object.
SERVE_WITH_TENSORFLOW_ONLY = """
import json, sys
import tensorflow as tf
import tensorflow_text  # the tokeniser's ops

served = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
pairs = json.loads(sys.argv[2])
questions, contexts = [q for q, _ in pairs], [c for _, c in pairs]
out = served(question=tf.constant(questions), context=tf.constant(contexts))
print(json.dumps({
    "answer": [a.decode("utf-8") for a in out["answer"].numpy()],
    "start": out["start"].numpy().tolist(),
    "end": out["end"].numpy().tolist(),
    "score": out["score"].numpy().tolist(),
    "kerasformer_imported": any(name.startswith("kerasformer") for name in sys.modules),
}))
"""


@pytest.fixture(scope="module")
def served(trained_question_answerer):
    pairs = [*PAIRS, ("", "said coach profit today"), ("which team", "")]
    export = str(trained_question_answerer.export_dir)
    return run_python_json(SERVE_WITH_TENSORFLOW_ONLY, export, json.dumps(pairs))


def test_serving_needs_no_kerasformer_and_matches_the_answerer(served, trained_question_answerer):
    assert served["kerasformer_imported"] is False
    expected = trained_question_answerer.model.answer(*zip(*PAIRS, strict=True))
    for i, answer in enumerate(expected):
        assert served["answer"][i] == answer["answer"]
        assert (served["start"][i], served["end"][i]) == (answer["start"], answer["end"])
        assert served["score"][i] == pytest.approx(answer["score"], rel=1e-4)
        context = PAIRS[i][1]
        assert context[answer["start"] : answer["end"]] == answer["answer"]
    assert_whole_words_of(PAIRS[2][1], served["start"][2], served["end"][2])


def assert_whole_words_of(context, start, end):
    """Character offsets (not UTF-8 bytes: "Zürich café" puts two extra bytes before the
    answer) that neither cut a word nor take in the space beside it. Which words a briefly
    trained model picks is left open."""
    assert 0 <= start < end <= len(context)
    answer = context[start:end]
    assert answer == answer.strip()
    assert start == 0 or not (context[start - 1].isalnum() and context[start].isalnum())
    assert end == len(context) or not (context[end - 1].isalnum() and context[end].isalnum())


def test_an_empty_question_is_answered_from_the_context_alone(served):
    start, end = served["start"][-2], served["end"][-2]
    assert "said coach profit today"[start:end] == served["answer"][-2] != ""


def test_an_empty_context_is_served_as_no_answer(served):
    assert (served["answer"][-1], served["start"][-1], served["end"][-1]) == ("", -1, -1)
    assert served["score"][-1] == 0.0


def test_load_question_answerer_gives_the_same_answers(trained_question_answerer):
    loaded = load_question_answerer(trained_question_answerer.export_dir)
    original = trained_question_answerer.model
    assert loaded.settings == original.settings
    questions, contexts = zip(*PAIRS, strict=True)
    for mine, theirs in zip(
        loaded.answer(questions, contexts), original.answer(questions, contexts), strict=True
    ):
        assert mine["answer"] == theirs["answer"]
        assert mine["score"] == pytest.approx(theirs["score"], rel=1e-5)


def test_the_saved_model_holds_the_models_weights_and_no_optimizer(trained_question_answerer):
    """Serving needs no optimizer: the SavedModel's values are the model's weights and a
    few scalars of the TF-Hub models (counters), not Adam's two slots per weight, and
    the model keeps its optimizer after the export."""
    import tensorflow as tf

    export_dir = trained_question_answerer.export_dir
    model = trained_question_answerer.model.model
    saved = tf.train.list_variables(str(export_dir / "variables" / "variables"))
    assert not [name for name, _ in saved if "optimizer" in name.lower()]
    saved_values = sum(int(np.prod(shape)) for name, shape in saved if name.endswith("_VALUE"))
    model_values = sum(int(np.prod(weight.shape)) for weight in model.weights)
    assert model_values <= saved_values < model_values + 8
    assert model.optimizer is not None


def test_loading_what_is_not_a_question_answerer_names_the_fix(tmp_path):
    with pytest.raises(KerasformerError, match="not an exported question answerer"):
        load_question_answerer(tmp_path)


def test_tf_serving_takes_the_question_answerer_export_as_it_is(
    trained_question_answerer, tmp_path
):
    from tests.helpers.serving import assert_tf_serving_takes, numbered_copy

    body = {"instances": [{"question": q, "context": c} for q, c in PAIRS]}
    served_dir = numbered_copy(trained_question_answerer.export_dir, tmp_path)
    served = assert_tf_serving_takes(served_dir, body, tmp_path, text_ops=True)
    assert {"answer", "start", "end", "score"} <= set(served)
