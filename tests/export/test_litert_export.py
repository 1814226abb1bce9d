"""`kerasformer export-litert`: each export converted, run by LiteRT (a process without
TensorFlow or Keras) and by ``tf.lite.Interpreter``, checked against its SavedModel."""

import json

import numpy as np
import pytest

from kerasformer.errors import KerasformerError
from kerasformer.litert import LiteRTClassifier
from kerasformer.litert.tagger import LiteRTTagger
from kerasformer.loading import ExportedClassifier
from kerasformer.models.word_windows import WORD_WINDOW
from tests.helpers.data import synthetic_ner_sentences, synthetic_rows
from tests.helpers.processes import run_commands, run_python, run_python_json

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

QUANTIZATIONS = ("none", "dynamic", "float16")
# How far each quantisation may move a probability of the tiny models here.
TOLERANCE = {"none": 1e-5, "float16": 5e-3, "dynamic": 0.1}
# Empty, punctuation, unknown words, case and scripts TensorFlow does not lower-case,
# white space it does not split on, and texts longer than the classifier's 32 words.
ODD_TEXTS = [
    "", "   ", "?!", "SPORTS sports Sports.", "Élan école ÉCOLE", "no\u00a0break\u3000space",
    "emoji 😀 only", "zzz qqq", "market " * 50, "In Tokyo, Zoë Müller spoke (again).",
]  # fmt: skip

BLOCK_TENSORFLOW = """
import sys
for name in ("tensorflow", "tf_keras", "keras", "jax", "tensorflow_hub", "tensorflow_text"):
    sys.modules[name] = None  # as on a device that has only NumPy and ai-edge-litert
"""


def classifier_texts() -> list[str]:
    rows = synthetic_rows(190, seed=7)
    return [f"{title} {body}" for _, title, body in rows] + ODD_TEXTS


def tagger_texts() -> list[str]:
    sentences = [" ".join(words) for words, _ in synthetic_ner_sentences(190, seed=5)]
    # One text longer than a window (WORD_WINDOW words), which both read window by window.
    long = " ".join(sentences[:120])
    assert len(long.split()) > 2 * WORD_WINDOW
    return sentences + ODD_TEXTS + [long]


@pytest.fixture(scope="module")
def classifier_models(tiny_transformer, tmp_path_factory):
    out = tmp_path_factory.mktemp("litert_classifier")
    commands = [
        ["export-litert", str(tiny_transformer.export_dir), "--out", str(out / f"{q}.tflite"),
         "--quantize", q]
        for q in QUANTIZATIONS
    ]  # fmt: skip
    for result in run_commands(*commands):
        assert result["code"] == 0, result["stderr"][-2000:]
        assert "Wrote" in result["stdout"]
    return out


@pytest.fixture(scope="module")
def saved_model_predictions(tiny_transformer):
    predictions = ExportedClassifier(tiny_transformer.export_dir).classify(classifier_texts())
    return predictions.probabilities, predictions.known_tokens


RUN_WITHOUT_TENSORFLOW = (
    BLOCK_TENSORFLOW
    + """
import json
from kerasformer.litert import LiteRTClassifier
texts = json.loads(sys.argv[2])
classifier = LiteRTClassifier(sys.argv[1])
probabilities, known = classifier.classify(texts, batch_size=32)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("tensorflow", "keras", "tf_keras")
                and sys.modules[m] is not None)
print(json.dumps({"probabilities": probabilities.tolist(), "known": known.tolist(),
                  "predicted": classifier.predict(texts), "loaded": loaded}))
"""
)


@pytest.mark.parametrize("quantize", QUANTIZATIONS)
def test_litert_alone_gives_the_saved_models_answers(classifier_models, saved_model_predictions,
                                                      quantize):  # fmt: skip
    texts = classifier_texts()
    result = run_python_json(RUN_WITHOUT_TENSORFLOW, str(classifier_models / f"{quantize}.tflite"),
                             json.dumps(texts))  # fmt: skip
    assert result["loaded"] == []
    expected, known = saved_model_predictions
    probabilities = np.asarray(result["probabilities"])
    assert probabilities.shape == (200, 4) and np.isfinite(probabilities).all()
    np.testing.assert_allclose(probabilities, expected, atol=TOLERANCE[quantize])
    np.testing.assert_array_equal(result["known"], known)
    agree = np.mean(probabilities.argmax(1) == expected.argmax(1))
    assert agree >= (1.0 if quantize == "none" else 0.95)
    names = json.loads((classifier_models / f"{quantize}.json").read_text())["class_names"]
    assert result["predicted"] == [names[i] for i in probabilities.argmax(1)]


@pytest.mark.parametrize("quantize", QUANTIZATIONS)
def test_tf_lite_interpreter_gives_the_same_answers(classifier_models, saved_model_predictions,
                                                    quantize):  # fmt: skip
    classifier = LiteRTClassifier(classifier_models / f"{quantize}.tflite", runtime="tensorflow")
    probabilities, known = classifier.classify(classifier_texts())
    expected, expected_known = saved_model_predictions
    np.testing.assert_allclose(probabilities, expected, atol=TOLERANCE[quantize])
    np.testing.assert_array_equal(known, expected_known)


def test_the_models_use_builtin_ops_and_quantisation_shrinks_them(
    classifier_models, tiny_transformer
):
    from ai_edge_litert.interpreter import Interpreter

    sizes = {q: (classifier_models / f"{q}.tflite").stat().st_size for q in QUANTIZATIONS}
    assert sizes["dynamic"] < sizes["float16"] < sizes["none"]
    # Weights as stored: int8 (dynamic range), float16, or float32 only. (The converter
    # leaves weights under 1024 values in float32, so the tiny model shrinks little.)
    stored = {
        q: {str(t["dtype"].__name__) for t in Interpreter(
            model_path=str(classifier_models / f"{q}.tflite")).get_tensor_details()}
        for q in QUANTIZATIONS
    }  # fmt: skip
    assert "int8" in stored["dynamic"] and "float16" in stored["float16"]
    assert not {"int8", "float16"} & stored["none"]
    interpreter = Interpreter(model_path=str(classifier_models / "dynamic.tflite"))
    signature = interpreter.get_signature_list()["serving_default"]
    assert signature == {"inputs": ["token_ids"], "outputs": ["probabilities"]}
    ops = {op["op_name"] for op in interpreter._get_ops_details()}
    assert not {op for op in ops if op.startswith("Flex") or op == "CUSTOM"}, ops
    settings = json.loads((classifier_models / "dynamic.json").read_text())
    assert settings["class_names"] == list(
        ExportedClassifier(tiny_transformer.export_dir).class_names
    )
    assert settings["max_length"] == 32 and settings["quantize"] == "dynamic"


@pytest.fixture(scope="module")
def tagger_models(tiny_taggers, tmp_path_factory):
    """``MODEL-QUANTIZE.tflite`` of each of `tiny_taggers`, without and with dynamic
    quantisation, and the taggers' exports themselves, as ``MODEL``."""
    root = tmp_path_factory.mktemp("litert_tagger")
    commands = []
    for model, export_dir in tiny_taggers.items():
        (root / model).symlink_to(export_dir, target_is_directory=True)
        for quantize in ("none", "dynamic"):
            out = root / f"{model}-{quantize}.tflite"
            commands.append(["export-litert", str(export_dir), "--out", str(out),
                             "--quantize", quantize])  # fmt: skip
    for result in run_commands(*commands, timeout=900):
        assert result["code"] == 0, result["stderr"][-2000:]
    return root


def served_tags(export_dir, texts) -> list[dict]:
    """What the tagger's SavedModel answers, as TF Serving would serve it."""
    import tensorflow as tf

    outputs = tf.saved_model.load(str(export_dir)).signatures["serving_default"](
        inputs=tf.constant(texts)
    )
    records = []
    for i in range(len(texts)):
        count = int(outputs["entity_counts"][i])
        starts = outputs["entity_starts"][i][:count].numpy().tolist()
        ends = outputs["entity_ends"][i][:count].numpy().tolist()
        tags = [t.decode() for t in outputs["tags"][i].numpy() if t]
        records.append({"tags": tags, "entities": list(zip(starts, ends, strict=True))})
    return records


@pytest.mark.parametrize("model", ["rnn", "transformer"])
@pytest.mark.parametrize("runtime", ["litert", "tensorflow"])
def test_litert_taggers_tag_as_the_saved_model_does(tagger_models, model, runtime):
    texts = tagger_texts()
    expected = served_tags(tagger_models / model, texts)
    for quantize in ("none", "dynamic"):
        tagger = LiteRTTagger(tagger_models / f"{model}-{quantize}.tflite", runtime=runtime)
        records = tagger.tag(texts)
        same = [r["tags"] == e["tags"] for r, e in zip(records, expected, strict=True)]
        assert np.mean(same) >= (1.0 if quantize == "none" else 0.95), quantize
        if quantize == "none":
            assert [[(x["start"], x["end"]) for x in r["entities"]] for r in records] == [
                e["entities"] for e in expected
            ]
    # The model learned the templates: a model that learned nothing finds no people.
    assert sum(len(e["entities"]) for e in expected) > 150


def test_a_litert_tagger_refuses_what_it_would_misread(tagger_models, tmp_path):
    import shutil

    tagger = LiteRTTagger(tagger_models / "rnn-none.tflite")
    with pytest.raises(KerasformerError, match="not a single string"):
        tagger.tag("Angela Merkel visited Paris")  # would tag each character as a text
    with pytest.raises(KerasformerError, match="lists of words"):
        tagger.predict_tags(["Angela", "Merkel"])
    # Settings beside another tagger's model, or cut by hand, change every tag silently.
    shutil.copy(tagger_models / "rnn-none.tflite", tmp_path / "mixed.tflite")
    shutil.copy(tagger_models / "transformer-none.json", tmp_path / "mixed.json")
    with pytest.raises(KerasformerError, match="mixed.json was not written with mixed.tflite"):
        LiteRTTagger(tmp_path / "mixed.tflite")
    shutil.copy(tagger_models / "rnn-none.tflite", tmp_path / "cut.tflite")
    settings = json.loads((tagger_models / "rnn-none.json").read_text("utf-8"))
    settings["tagger"]["words"] = settings["tagger"]["words"][:-3]
    (tmp_path / "cut.json").write_text(json.dumps(settings), "utf-8")
    with pytest.raises(KerasformerError, match="words, characters or tags changed"):
        LiteRTTagger(tmp_path / "cut.tflite")


def test_the_litert_runners_refuse_bad_arguments_and_damaged_settings(
    classifier_models, tagger_models, tmp_path
):
    import shutil

    for runner in (LiteRTClassifier, LiteRTTagger):
        with pytest.raises(KerasformerError, match="give the path of a .tflite file"):
            runner(None)
    with pytest.raises(KerasformerError, match="num_threads must be a whole number >= 1"):
        LiteRTClassifier(classifier_models / "none.tflite", num_threads=0)
    # Settings that still say they are kerasformer's, with a field broken by hand.
    for name, change in (
        ("classifier", lambda settings: settings.update(max_length="long")),
        ("classifier", lambda settings: settings.update(class_names=None)),
        ("tagger", lambda settings: settings["tagger"].update(words=None)),
    ):  # fmt: skip
        source = classifier_models / "none" if name == "classifier" else tagger_models / "rnn-none"
        for suffix in (".tflite", ".vocab.txt"):
            if source.with_suffix(suffix).is_file():
                shutil.copy(source.with_suffix(suffix), tmp_path / f"broken{suffix}")
        settings = json.loads(source.with_suffix(".json").read_text("utf-8"))
        change(settings)
        settings.pop("tagger_sha256", None)  # as an export written before fingerprints
        (tmp_path / "broken.json").write_text(json.dumps(settings), "utf-8")
        runner = LiteRTClassifier if name == "classifier" else LiteRTTagger
        with pytest.raises(KerasformerError, match="broken.json is damaged") as caught:
            runner(tmp_path / "broken.tflite")
        assert "\n" not in str(caught.value)


def test_one_line_errors(tmp_path, tiny_transformer, classifier_models):
    from kerasformer.export.litert_export import export_litert

    (tmp_path / "notes").mkdir()
    cases = [
        (["export-litert", str(tmp_path / "notes"), "--out", str(tmp_path / "a.tflite")],
         "not a kerasformer export"),
        (["export-litert", str(tiny_transformer.export_dir), "--out", str(tmp_path / "a.bin")],
         "does not end in .tflite"),
    ]  # fmt: skip
    (tmp_path / "mine.json").write_text('{"my": "settings"}')
    cases.append((["export-litert", str(tiny_transformer.export_dir), "--out",
                   str(tmp_path / "mine.tflite")], "was not written by"))  # fmt: skip
    # Our own earlier export is replaced without --overwrite.
    again = ["export-litert", str(tiny_transformer.export_dir), "--out", str(tmp_path / "a.tflite")]
    results = run_commands(*[argv for argv, _ in cases], again, again)
    for result, (_, phrase) in zip(results[: len(cases)], cases, strict=True):
        assert result["code"] == 2 and phrase in result["stderr"], result
        assert len(result["stderr"].strip().splitlines()) == 1
    assert [r["code"] for r in results[-2:]] == [0, 0], results[-1]["stderr"]
    assert "a.tflite (0.0 MiB, dynamic) with a.vocab.txt, a.json." in results[-1]["stdout"]
    assert json.loads((tmp_path / "mine.json").read_text()) == {"my": "settings"}
    # A vocabulary that is not the one exported with the model is refused, not misread.
    vocabulary = (tmp_path / "a.vocab.txt").read_text().splitlines()
    (tmp_path / "a.vocab.txt").write_text("\n".join([*vocabulary[:2], *vocabulary[:1:-1]]) + "\n")
    with pytest.raises(KerasformerError, match="not the vocabulary exported with a.tflite"):
        LiteRTClassifier(tmp_path / "a.tflite")
    with pytest.raises(KerasformerError, match="is not valid UTF-8"):
        LiteRTClassifier(classifier_models / "none.tflite").classify(["fine", b"bad \xff"])
    with pytest.raises(KerasformerError, match="is not one of"):
        export_litert(tiny_transformer.export_dir, tmp_path / "b.tflite", "int4")
    (tmp_path / "lone.tflite").write_bytes((classifier_models / "none.tflite").read_bytes())
    with pytest.raises(KerasformerError, match="not kerasformer's LiteRT settings"):
        LiteRTClassifier(tmp_path / "lone.tflite")


def test_models_that_read_strings_with_tensorflow_ops_are_refused():
    from kerasformer.backend import keras
    from kerasformer.models.entity_tagger import EntityTagger
    from kerasformer.models.text_classifier import TextClassifier

    with pytest.raises(KerasformerError, match="only from-scratch taggers"):
        EntityTagger(["O", "B-PER", "I-PER"]).word_id_model()
    inputs = keras.Input((), dtype="string")
    plain = keras.Model(inputs, keras.layers.Lambda(lambda t: t)(inputs))
    with pytest.raises(KerasformerError, match="only from-scratch classifiers"):
        TextClassifier(plain).word_id_model()


# The console script's `main` in a process where TensorFlow and Keras cannot be imported.
COMMAND_WITHOUT_TENSORFLOW = (
    BLOCK_TENSORFLOW
    + """
import kerasformer_command
sys.exit(kerasformer_command.main(sys.argv[1:]))
"""
)


def json_records(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_predict_and_tag_run_litert_models_without_tensorflow(
    classifier_models, tagger_models, tiny_transformer, tmp_path
):
    classifier_file = tmp_path / "news.txt"
    classifier_file.write_text("\n".join(classifier_texts()[:30] + ["?!"]) + "\n")
    tagger_file = tmp_path / "sentences.txt"
    tagger_file.write_text("\n".join(tagger_texts()[:30]) + "\n")
    runs = {
        "predict": (
            classifier_models / "none.tflite",
            tiny_transformer.export_dir,
            classifier_file,
        ),
        "tag": (tagger_models / "rnn-none.tflite", tagger_models / "rnn", tagger_file),
    }
    for command, (litert_model, export_dir, texts) in runs.items():
        litert = run_python(COMMAND_WITHOUT_TENSORFLOW, command, str(litert_model), "--json",
                            "--input-file", str(texts))  # fmt: skip
        assert litert.returncode == 0, litert.stderr[-3000:]
        (saved,) = run_commands([command, str(export_dir), "--json", "--input-file", str(texts)])
        assert saved["code"] == 0, saved["stderr"][-2000:]
        got, expected = json_records(litert.stdout), json_records(saved["stdout"])
        assert len(got) == len(expected) == len(texts.read_text().splitlines())
        for mine, theirs in zip(got, expected, strict=True):
            assert mine["status"] == theirs["status"] and mine["text"] == theirs["text"]
            if command == "predict":
                assert mine["class"] == theirs["class"]
                for name, p in theirs["probabilities"].items():
                    assert abs(mine["probabilities"][name] - p) <= 2e-4
            else:
                assert mine["tags"] == theirs["tags"]
                for found, entity in zip(mine["entities"], theirs["entities"], strict=True):
                    assert found == entity | {"score": found["score"]}
                    assert abs(found["score"] - entity["score"]) <= 1e-5
