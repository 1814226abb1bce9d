"""`kerasformer train --task ner` on small CoNLL files, then `tag`, each export read back
in a fresh process and served without kerasformer."""

import json

import pytest

from tests.helpers.cli import run_cli_in_fixture
from tests.helpers.data import synthetic_ner_sentences, write_conll
from tests.helpers.processes import WITHOUT_KERASFORMER, run_kerasformer, run_python_json

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

# Empty and white-space-only texts have no words and no entities; a text longer than
# the BERT tagger's 8-token windows is read window by window.
TEXTS = [
    "Marie Curie visited New York .", "", "In Tokyo, Zoë Müller spoke (again).", " \t ",
    "Peter Blackburn met Ada Lovelace in Brussels . " * 6,
]  # fmt: skip
MODELS = ["rnn", "transformer", "bert"]


def tiny_flags(model: str, tiny_ner_bert) -> list[str]:
    return {
        "rnn": ["--embed-dim", "16", "--units", "16"],
        "transformer": ["--embed-dim", "16", "--num-heads", "2", "--ff-dim", "32",
                        "--num-layers", "1"],
        "bert": ["--preprocess", str(tiny_ner_bert.preprocess), "--encoder",
                 str(tiny_ner_bert.encoder), "--seq-length", "8", "--doc-stride", "3",
                 "--fine-tune-learning-rate", "5e-3", "--epochs", "10"],
    }[model]  # fmt: skip


@pytest.fixture(scope="module")
def exports(tmp_path_factory, tiny_ner_bert):
    root = tmp_path_factory.mktemp("ner")
    train = write_conll(root / "train.txt", synthetic_ner_sentences(160, seed=0))
    test = write_conll(root / "test.txt", synthetic_ner_sentences(40, seed=1))
    made = {}
    for model in MODELS:
        flags = tiny_flags(model, tiny_ner_bert)
        made[model] = root / model
        code, out, err = run_cli_in_fixture(
            "train", "--task", "ner", "--model", model, "--train-file", str(train),
            "--test-file", str(test), "--epochs", "6", "--learning-rate", "0.01",
            "--batch-size", "16", "--export-dir", str(made[model]), "--serving-version", "1",
            *flags,
        )  # fmt: skip
        assert code == 0, err
        assert "1/ for TF Serving" in out.splitlines()[-1]
    return made


@pytest.mark.parametrize("model", MODELS)
def test_training_reports_entity_scores_per_epoch_and_per_type(exports, model):
    metrics = json.loads((exports[model] / "metrics.json").read_text())
    history = json.loads((exports[model] / "history.json").read_text())
    assert len(history["val_entity_f1"]) == (10 if model == "bert" else 6)
    test = metrics["test"]
    assert set(test["per_type"]) == {"PER", "LOC"}
    assert 0.0 <= test["f1_argmax"] <= 1.0 and test["decoding"] == "constrained"
    # The templates are easy: a model that learned nothing scores 0.
    assert test["f1"] > 0.5, test


@pytest.mark.parametrize("model", MODELS)
def test_the_saved_model_serves_what_tag_prints_without_kerasformer(exports, model):
    tagged = run_kerasformer("tag", str(exports[model]), *TEXTS, "--json")
    assert tagged.returncode == 0, tagged.stderr
    records = [json.loads(line) for line in tagged.stdout.splitlines()]
    served = run_python_json(
        WITHOUT_KERASFORMER
        + """
import json, sys
import tensorflow as tf
if sys.argv[3] == "bert":
    import tensorflow_text  # its tokeniser's ops; a from-scratch export needs TF only
out = tf.saved_model.load(sys.argv[1]).signatures["serving_default"](
    inputs=tf.constant(json.loads(sys.argv[2])))
empty = tf.saved_model.load(sys.argv[1]).signatures["serving_default"](inputs=tf.constant([""]))
assert empty["entity_counts"].numpy().tolist() == [0] and empty["words"].shape == (1, 0)
print(json.dumps({k: v.numpy().tolist() for k, v in out.items()}, default=lambda b: b.decode()))
""",
        str(exports[model]), json.dumps(TEXTS), model,
    )  # fmt: skip
    for row, (text, record) in enumerate(zip(TEXTS, records, strict=True)):
        count = served["entity_counts"][row]
        entities = [
            {name: served[f"entity_{name}s"][row][i] for name in ("text", "type", "start", "end")}
            for i in range(count)
        ]
        assert entities == [
            {name: e[name] for name in ("text", "type", "start", "end")} for e in record["entities"]
        ]
        for i, entity in enumerate(record["entities"]):
            assert text[entity["start"] : entity["end"]] == entity["text"]
            assert served["entity_scores"][row][i] == pytest.approx(entity["score"], abs=1e-4)
        assert [w for w in served["words"][row] if w] == record["words"]
        assert [t for t in served["tags"][row] if t] == record["tags"]
    assert any(e["type"] == "LOC" and e["text"] == "New York" for e in records[0]["entities"])


def test_tag_marks_entities_in_the_text(exports):
    result = run_kerasformer("tag", str(exports["rnn"]), TEXTS[0])
    assert result.returncode == 0, result.stderr
    assert "[New York]LOC" in result.stdout


@pytest.mark.parametrize("model", ["rnn", "bert"])
def test_tf_serving_takes_the_tagger_export_as_training_laid_it_out(exports, model, tmp_path):
    from tests.helpers.serving import assert_tf_serving_takes

    body = {"instances": TEXTS}
    served = assert_tf_serving_takes(exports[model] / "1", body, tmp_path, text_ops=model == "bert")
    assert served["entity_counts"].tolist()[1] == 0  # the empty text
