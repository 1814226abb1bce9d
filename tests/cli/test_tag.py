"""`kerasformer train --task ner` on small CoNLL files, then `tag`, each export read back
in a fresh process and served without kerasformer."""

import json

import numpy as np
import pytest

from tests.helpers.cli import assert_one_line_error, run_cli_in_fixture
from tests.helpers.processes import WITHOUT_KERASFORMER, run_commands, run_python_json

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

# Empty and white-space-only texts have no words and no entities; a text longer than
# the BERT tagger's 8-token windows is read window by window.
TEXTS = [
    "Marie Curie visited New York .", "", "In Tokyo, Zoë Müller spoke (again).", " \t ",
    "Peter Blackburn met Ada Lovelace in Brussels . " * 6,
]  # fmt: skip
MODELS = ["rnn", "transformer", "bert"]


@pytest.fixture(scope="module")
def exports(tiny_taggers, tiny_ner_files, tiny_ner_bert, tmp_path_factory):
    """The from-scratch taggers (a session fixture, shared with the LiteRT tests) and a
    tiny BERT tagger trained here on the same files: model name -> export directory."""
    export_dir = tmp_path_factory.mktemp("ner") / "bert"
    code, out, err = run_cli_in_fixture(
        "train", "--task", "ner", "--model", "bert", "--train-file",
        str(tiny_ner_files["train"]), "--test-file", str(tiny_ner_files["test"]),
        "--epochs", "10", "--learning-rate", "0.01", "--batch-size", "16",
        "--export-dir", str(export_dir), "--serving-version", "1",
        "--preprocess", str(tiny_ner_bert.preprocess), "--encoder", str(tiny_ner_bert.encoder),
        "--seq-length", "8", "--doc-stride", "3", "--fine-tune-learning-rate", "5e-3",
    )  # fmt: skip
    assert code == 0, err
    assert "1/ for TF Serving" in out.splitlines()[-1]
    return {**tiny_taggers, "bert": export_dir}


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


@pytest.fixture(scope="module")
def tagged(exports, tiny_ner_files, tmp_path_factory):
    """What ``kerasformer tag`` prints: ``(model, "json")`` for each model's records of
    TEXTS, ``("rnn", "text")`` for the first text marked up, ``("rnn", "plot")`` and
    ``("rnn", "no plot")`` for ``--plot`` of texts starting or all without a word; every
    command in one fresh process (TensorFlow started once)."""
    pictures = tmp_path_factory.mktemp("tag_plots")
    commands = {(model, "json"): ["tag", str(exports[model]), *TEXTS, "--json"] for model in MODELS}
    commands["rnn", "text"] = ["tag", str(exports["rnn"]), TEXTS[0]]
    commands["rnn", "plot"] = ["tag", str(exports["rnn"]), "", TEXTS[0], "--plot",
                               str(pictures / "second.png")]  # fmt: skip
    commands["rnn", "no plot"] = ["tag", str(exports["rnn"]), "", " \t", "--plot",
                                  str(pictures / "none.png")]  # fmt: skip
    for model in ("rnn", "bert"):
        commands[model, "evaluate"] = [
            "evaluate", str(exports[model]), "--test-file", str(tiny_ner_files["test"]),
            "--output", str(pictures / f"{model}.json"),
        ]  # fmt: skip
    commands["rnn", "evaluate on news"] = ["evaluate", str(exports["rnn"]), "--dataset", "ag_news"]
    results = dict(zip(commands, run_commands(*commands.values()), strict=True))
    return {**results, "pictures": pictures}


# Each export's signature on TEXTS and on one empty text, in a process without
# kerasformer; the BERT export last, after importing TF Text, which its tokeniser's ops
# need: the from-scratch exports are served by TensorFlow alone.
SERVE_EACH_WITHOUT_KERASFORMER = (
    WITHOUT_KERASFORMER
    + """
import json
import tensorflow as tf
texts, served = json.loads(sys.argv[1]), {}
for model, export_dir in json.loads(sys.argv[2]):
    if model == "bert":
        import tensorflow_text
    signature = tf.saved_model.load(export_dir).signatures["serving_default"]
    out = signature(inputs=tf.constant(texts))
    empty = signature(inputs=tf.constant([""]))
    assert empty["entity_counts"].numpy().tolist() == [0] and empty["words"].shape == (1, 0)
    served[model] = {k: v.numpy().tolist() for k, v in out.items()}
print(json.dumps(served, default=lambda b: b.decode()))
"""
)


@pytest.fixture(scope="module")
def served_without_kerasformer(exports):
    pairs = [(model, str(exports[model])) for model in MODELS]
    return run_python_json(SERVE_EACH_WITHOUT_KERASFORMER, json.dumps(TEXTS), json.dumps(pairs))


@pytest.mark.parametrize("model", MODELS)
def test_the_saved_model_serves_what_tag_prints_without_kerasformer(
    tagged, served_without_kerasformer, model
):
    result = tagged[model, "json"]
    assert result["code"] == 0, result["stderr"]
    records = [json.loads(line) for line in result["stdout"].splitlines()]
    served = served_without_kerasformer[model]
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


@pytest.mark.parametrize("model", MODELS)
def test_tag_prints_what_the_keras_tagger_finds(tagged, exports, model):
    """`tag` runs the export's SavedModel; the Keras model beside it, read back by
    `load_tagger` (words split in Python, tags decoded in NumPy), finds the same words,
    tags and entities."""
    from kerasformer.loading import load_tagger

    records = [json.loads(line) for line in tagged[model, "json"]["stdout"].splitlines()]
    expected = load_tagger(exports[model]).tag(TEXTS)
    for record, keras_record in zip(records, expected, strict=True):
        assert record["words"] == keras_record["words"]
        assert record["tags"] == keras_record["tags"]
        assert len(record["entities"]) == len(keras_record["entities"])
        for entity, keras_entity in zip(record["entities"], keras_record["entities"], strict=True):
            assert entity == {
                **keras_entity,
                "score": pytest.approx(keras_entity["score"], abs=1e-5),
            }


def test_plot_draws_the_first_text_that_has_a_word(tagged):
    from tests.helpers.pictures import assert_not_blank, read_png

    drawn = tagged["rnn", "plot"]
    assert drawn["code"] == 0, drawn["stderr"]
    picture = tagged["pictures"] / "second.png"
    assert f"Entities of text 2 (the first with a word) drawn in {picture}" in drawn["stdout"]
    assert_not_blank(read_png(picture))
    nothing = tagged["rnn", "no plot"]
    assert nothing["code"] == 0, nothing["stderr"]
    assert "warning: no text has a word to draw" in nothing["stdout"]
    assert not (tagged["pictures"] / "none.png").exists()


@pytest.mark.parametrize("model", ["rnn", "bert"])
def test_evaluate_scores_a_tagger_on_its_words_and_on_raw_text(tagged, tiny_ner_files, model):
    """The synthetic words hold no punctuation, so the export reads the file's own words
    in raw text too: both readings must score alike, on every entity of the file."""
    result = tagged[model, "evaluate"]
    assert result["code"] == 0, result["stderr"]
    metrics = json.loads((tagged["pictures"] / f"{model}.json").read_text())
    tags = [line.split()[-1] for line in tiny_ner_files["test"].read_text().splitlines() if line]
    entities = sum(tag.startswith("B-") for tag in tags)
    assert metrics["generator"] == "kerasformer" and metrics["sentences"] == 40
    token, raw = metrics["token_level"], metrics["raw_text"]
    assert token["entities"] == raw["entities"] == entities
    assert set(raw["per_type"]) == {"LOC", "PER"}
    for name in ("precision", "recall", "f1"):
        assert raw[name] == pytest.approx(token[name])
    assert token["f1"] > 0.5
    assert "raw text          all" in result["stdout"]


def test_evaluate_refuses_a_classifiers_dataset_for_a_tagger(tagged):
    assert_one_line_error(
        tagged["rnn", "evaluate on news"],
        "is a tagger; evaluate it on --dataset conll2003 or a CoNLL or JSON Lines --test-file",
    )


def test_tag_marks_entities_in_the_text(tagged):
    result = tagged["rnn", "text"]
    assert result["code"] == 0, result["stderr"]
    assert "[New York]LOC" in result["stdout"]


@pytest.mark.parametrize("model", ["rnn", "bert"])
def test_tf_serving_takes_the_tagger_export_as_training_laid_it_out(exports, model, tmp_path):
    from tests.helpers.serving import assert_tf_serving_takes

    body = {"instances": TEXTS}
    served = assert_tf_serving_takes(exports[model] / "1", body, tmp_path, text_ops=model == "bert")
    assert served["entity_counts"].tolist()[1] == 0  # the empty text


def test_a_text_longer_than_a_window_is_tagged_window_by_window(tiny_taggers):
    """A 600-word text through the exported transformer tagger's reader: the words its
    first window reads best (the first three quarters) get exactly the probabilities of
    the first window's words read alone; read whole, the text would give others (the
    attention spans all 600 words). Every entity's offsets still name its text."""
    from kerasformer.backend import tf
    from kerasformer.loading.exported_tagger import ExportedTagger
    from kerasformer.loading.tagger import load_tagger
    from kerasformer.models.sequence_tagger import padded_features
    from kerasformer.models.word_windows import WORD_WINDOW
    from tests.helpers.data import synthetic_ner_sentences

    export_dir = tiny_taggers["transformer"]
    words = [w for sentence, _ in synthetic_ner_sentences(200, seed=3) for w in sentence][:600]
    tagger = load_tagger(export_dir)
    reader = tagger.serving_reader()

    def read(chosen):
        ragged = tf.ragged.constant([chosen])
        codes = tf.cast(tf.strings.unicode_decode(ragged, "UTF-8"), tf.int64)
        return reader(ragged, codes)[0].numpy()

    best_read_first = WORD_WINDOW * 3 // 4
    long, first = read(words), read(words[:WORD_WINDOW])
    np.testing.assert_allclose(long[:best_read_first], first[:best_read_first], atol=1e-6)
    # The Keras model on all 600 words at once reads them otherwise...
    features = padded_features(tagger.ragged_features([words]))
    whole = tf.nn.softmax(tf.cast(tagger.model(features), tf.float32))[0].numpy()
    assert not np.allclose(whole, long, atol=1e-3)
    # ...and the tagger's own Python path (predict_tags, the trainer's) reads as served.
    np.testing.assert_allclose(tagger.probabilities([words])[0], long, atol=1e-5)
    text = " ".join(words)
    (record,) = ExportedTagger(export_dir).tag([text])
    assert record["entities"] and all(
        text[e["start"] : e["end"]] == e["text"] for e in record["entities"]
    )
