"""TF Serving's REST API, through real HTTP: each kind's documented requests get the JSON
the SavedModel itself gives.

The reference is the export's signature run in this process with
``tf.saved_model.load`` and written as TF Serving's REST documentation shapes it, by
code of this test's own (`expected_body`), not the server's.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers.served import ServerProcess

pytestmark = pytest.mark.slow

TEXTS = ["Shares in the bank rose after profits beat forecasts", "The striker scored twice", ""]
QUESTIONS = [
    {"question": "Who won?", "context": "Super Bowl 50 was won by the Denver Broncos."},
    {"question": "Where did they meet?", "context": "Angela Merkel met Emmanuel Macron in Paris."},
]
# The requests of docs/deploying.md's table, for each kind (signature name, body).
DOCUMENTED = {
    "classifier": [("serving_default", {"instances": TEXTS})],
    "multi_label": [("serving_default", {"instances": ["goal match pizza", "hotel trip"]})],
    "translator": [
        ("serving_default", {"instances": ["Where is the station?", "I like tea."]}),
        ("beam_search", {"signature_name": "beam_search", "instances": ["Where is the station?"]}),
    ],
    "language_model": [
        ("sample", {"signature_name": "sample", "inputs": {
            "inputs": ["The cat", "In the"], "temperature": 0.0, "top_k": 0, "top_p": 1.0}}),
    ],
    "question_answerer": [("serving_default", {"instances": QUESTIONS})],
    "tagger": [("serving_default", {"instances": ["Angela Merkel visited Paris.", "", "Hi"]})],
}  # fmt: skip


@pytest.fixture(scope="module")
def server(exports):
    with ServerProcess(*(f"{kind}={path}" for kind, path in exports.items())) as running:
        yield running


@pytest.fixture(scope="module")
def signatures(exports):
    """Each export's signatures, loaded here as a user of TensorFlow alone loads them."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the question answerer's tokeniser ops)

    loaded = {kind: tf.saved_model.load(str(path)) for kind, path in exports.items()}
    return {kind: (model, model.signatures) for kind, model in loaded.items()}


def run_signature(function, body: dict) -> dict:
    import tensorflow as tf

    if "instances" in body:
        instances = body["instances"]
        if isinstance(instances[0], dict):
            columns = {name: [row[name] for row in instances] for name in instances[0]}
        else:
            columns = {"inputs": instances}
    else:
        columns = body["inputs"] if isinstance(body["inputs"], dict) else {"inputs": body["inputs"]}
    specs = function.structured_input_signature[1]
    arguments = {name: tf.constant(value, dtype=specs[name].dtype) for name, value in
                 columns.items()}  # fmt: skip
    return {name: value.numpy() for name, value in function(**arguments).items()}


def plain(value):
    """A NumPy value as JSON holds it: bytes as text."""
    if isinstance(value, np.ndarray):
        return [plain(item) for item in value]
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return value.item() if isinstance(value, np.generic) else value


def expected_body(outputs: dict, rows: bool) -> dict:
    if not rows:
        columns = {name: plain(value) for name, value in outputs.items()}
        return {"outputs": next(iter(columns.values())) if len(columns) == 1 else columns}
    count = len(next(iter(outputs.values())))
    predictions = [{name: plain(value[row]) for name, value in outputs.items()}
                   for row in range(count)]  # fmt: skip
    if len(outputs) == 1:
        (name,) = outputs
        predictions = [prediction[name] for prediction in predictions]
    return {"predictions": predictions}


def assert_same_json(actual, expected, where="body"):
    """Equal JSON, floats within float32's rounding."""
    if isinstance(expected, float):
        assert isinstance(actual, int | float) and math.isclose(actual, expected, rel_tol=1e-5,
                                                                abs_tol=1e-6), where  # fmt: skip
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), where
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same_json(a, e, f"{where}[{index}]")
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and set(actual) == set(expected), where
        for key in expected:
            assert_same_json(actual[key], expected[key], f"{where}.{key}")
    else:
        assert actual == expected, where


@pytest.mark.parametrize("kind", list(DOCUMENTED))
def test_each_documented_request_gets_the_saved_models_own_answer(kind, server, signatures):
    _, functions = signatures[kind]
    for signature, body in DOCUMENTED[kind]:
        status, answer = server.request(f"/v1/models/{kind}:predict", body)
        assert status == 200, answer
        expected = expected_body(run_signature(functions[signature], body), "instances" in body)
        assert_same_json(answer, expected)


@pytest.mark.parametrize("kind", ["classifier", "question_answerer", "tagger"])
def test_the_columnar_format_gets_the_same_values_as_columns(kind, server, signatures):
    _, functions = signatures[kind]
    (_, rows_body), *_ = DOCUMENTED[kind]
    instances = rows_body["instances"]
    if isinstance(instances[0], dict):
        body = {"inputs": {name: [row[name] for row in instances] for name in instances[0]}}
    else:
        body = {"inputs": instances}
    status, answer = server.request(f"/v1/models/{kind}:predict", body)
    assert status == 200, answer
    assert_same_json(answer, expected_body(run_signature(functions["serving_default"], body),
                                           rows=False))  # fmt: skip


def test_the_language_models_default_signature_samples_one_continuation_per_prompt(server):
    status, answer = server.request("/v1/models/language_model:predict",
                                    {"instances": ["The cat", "In the", "A"]})  # fmt: skip
    assert status == 200 and len(answer["predictions"]) == 3
    assert all(isinstance(text, str) for text in answer["predictions"])


def test_the_class_names_signature_answers_in_columns(server, exports):
    status, answer = server.request("/v1/models/classifier:predict",
                                    {"signature_name": "class_names", "inputs": {}})  # fmt: skip
    names = (exports["classifier"] / "assets" / "class_names.txt").read_text().split("\n")
    assert status == 200 and answer == {"outputs": [name for name in names if name]}


def test_status_and_metadata_describe_the_version_served(server, exports, signatures):
    from tensorflow.python.tools import saved_model_utils

    status, answer = server.request("/v1/models/tagger")
    assert status == 200
    assert answer == {"model_version_status": [
        {"version": "1", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}
    ]}  # fmt: skip
    for path in ("/v1/models/tagger/metadata", "/v1/models/tagger/versions/1/metadata"):
        status, metadata = server.request(path)
        assert status == 200 and metadata["model_spec"] == {
            "name": "tagger", "signature_name": "", "version": "1"}  # fmt: skip
        served = metadata["metadata"]["signature_def"]["signature_def"]["serving_default"]
        graph = saved_model_utils.get_meta_graph_def(str(exports["tagger"] / "1"), "serve")
        signature = graph.signature_def["serving_default"]
        assert set(served["inputs"]) == set(signature.inputs) == {"inputs"}
        assert served["inputs"]["inputs"]["dtype"] == "DT_STRING"
        assert set(served["outputs"]) == set(signature.outputs)
        assert served["method_name"] == "tensorflow/serving/predict"


def test_the_version_url_serves_that_version(server, signatures):
    body = {"instances": ["Angela Merkel visited Paris."]}
    latest = server.request("/v1/models/tagger:predict", body)
    assert server.request("/v1/models/tagger/versions/1:predict", body) == latest
    assert latest[0] == 200


def test_a_sampling_setting_out_of_range_is_a_400_in_the_signatures_own_words(server):
    body = {
        "signature_name": "sample",
        "inputs": {"inputs": ["The cat"], "temperature": 1.0, "top_k": 0, "top_p": 1.5},
    }
    status, answer = server.request("/v1/models/language_model:predict", body)
    assert status == 400 and "top_p must be in (0, 1]" in answer["error"], answer
    assert answer["error"].endswith("got 1.5")
    assert server.request("/v1/models/language_model:predict", {"instances": ["A"]})[0] == 200
