"""TF Serving's REST bodies read and written as its documentation gives them.

The expected values are written out by hand from TF Serving's REST API reference
(tensorflow.org/tfx/serving/api_rest): row and columnar requests, one output or many.
"""

import base64
import json

import numpy as np
import pytest

from kerasformer.serving.rest_format import (
    BadRequest,
    SignatureSpec,
    TensorSpec,
    predict_response,
    read_predict_request,
)

TEXTS = TensorSpec("inputs", "string", (None,))
CLASSIFY = SignatureSpec(
    "serving_default",
    {"inputs": TEXTS},
    {"probabilities": TensorSpec("probabilities", "float32", (None, 2)),
     "predicted_class": TensorSpec("predicted_class", "string", (None,))},
)  # fmt: skip
ANSWER = SignatureSpec(
    "serving_default",
    {"question": TensorSpec("question", "string", (None,)),
     "context": TensorSpec("context", "string", (None,))},
    {"answer": TensorSpec("answer", "string", (None,))},
)  # fmt: skip
SAMPLE = SignatureSpec(
    "sample",
    {"inputs": TEXTS, "temperature": TensorSpec("temperature", "float32", ()),
     "top_k": TensorSpec("top_k", "int32", ())},
    {"outputs": TensorSpec("outputs", "string", (None,))},
)  # fmt: skip
SIGNATURES = {"serving_default": CLASSIFY, "sample": SAMPLE}


def read(body, signatures=None, max_instances=8):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return read_predict_request(raw, signatures or SIGNATURES, max_instances)


def test_rows_of_one_input_are_its_values():
    request = read({"instances": ["a b", "ç"]})
    assert request.row_format and request.rows == 2
    assert request.columns["inputs"].tolist() == [b"a b", "ç".encode()]


def test_rows_of_named_inputs_and_columns_give_the_same_arrays():
    rows = read({"instances": [{"question": "q1", "context": "c1"},
                               {"question": "q2", "context": "c2"}]},
                {"serving_default": ANSWER})  # fmt: skip
    columns = read({"inputs": {"question": ["q1", "q2"], "context": ["c1", "c2"]}},
                   {"serving_default": ANSWER})  # fmt: skip
    for request in (rows, columns):
        assert request.columns["question"].tolist() == [b"q1", b"q2"]
        assert request.columns["context"].tolist() == [b"c1", b"c2"]
    assert rows.row_format and not columns.row_format


def test_one_input_may_be_named_in_a_row_or_given_bare_in_columns():
    assert read({"instances": [{"inputs": "x"}]}).columns["inputs"].tolist() == [b"x"]
    assert read({"inputs": ["x", "y"]}).columns["inputs"].tolist() == [b"x", b"y"]


def test_b64_values_are_bytes():
    encoded = base64.b64encode(b"\xff\xfe raw").decode()
    assert read({"instances": [{"b64": encoded}]}).columns["inputs"].tolist() == [b"\xff\xfe raw"]


def test_scalar_inputs_come_in_columns_and_key_the_batch():
    request = read({"signature_name": "sample",
                    "inputs": {"inputs": ["The cat"], "temperature": 0.5, "top_k": 3}})  # fmt: skip
    assert request.columns["temperature"].dtype == np.float32
    assert request.scalars_key() == (("temperature", 0.5), ("top_k", 3))


@pytest.mark.parametrize(
    "body, words",
    [
        (b"{not json", "not JSON"),
        (b'{"instances": ["\xff"]}', "not UTF-8"),
        ([], "JSON object"),
        ({"instances": []}, "empty"),
        ({"instances": ["a"] * 9}, "--max-instances"),
        ({"instances": [3]}, "a number"),
        ({"instances": [["a", "b"]]}, "a list"),
        ({"instances": ["a"], "inputs": ["a"]}, "exactly one"),
        ({"signature_name": "../etc", "instances": ["a"]}, "no signature"),
        ({"instances": ["a"], "extra": 1}, "unknown key"),
        ({"signature_name": "sample", "instances": ["a"]}, "columnar"),
        (
            {
                "signature_name": "sample",
                "inputs": {"inputs": ["a"], "temperature": "hot", "top_k": 1},
            },
            "number",
        ),  # fmt: skip
        (
            {
                "signature_name": "sample",
                "inputs": {"inputs": ["a"], "temperature": 1.0, "top_k": 1.5},
            },
            "whole number",
        ),  # fmt: skip
        ({"signature_name": "sample", "inputs": {"inputs": ["a"], "temperature": 1.0}}, "top_k"),
    ],
)
def test_unreadable_requests_are_400_naming_the_problem(body, words):
    with pytest.raises(BadRequest) as raised:
        read(body)
    assert raised.value.status == 400 and words in raised.value.message


def test_a_question_answerer_row_without_its_context_is_refused():
    with pytest.raises(BadRequest, match="instance 1 has no 'context'"):
        read({"instances": [{"question": "q", "context": "c"}, {"question": "q"}]},
             {"serving_default": ANSWER})  # fmt: skip


def test_columns_of_different_lengths_are_refused():
    with pytest.raises(BadRequest, match="one value per example"):
        read({"inputs": {"question": ["q1", "q2"], "context": ["c1"]}},
             {"serving_default": ANSWER})  # fmt: skip


def test_many_outputs_answer_one_object_per_row_or_one_list_per_output():
    outputs = {"probabilities": np.array([[0.25, 0.75], [1.0, 0.0]], np.float32),
               "predicted_class": np.array([b"b", "é".encode()], object)}  # fmt: skip
    assert predict_response(outputs, CLASSIFY, row_format=True) == {"predictions": [
        {"probabilities": [0.25, 0.75], "predicted_class": "b"},
        {"probabilities": [1.0, 0.0], "predicted_class": "é"},
    ]}  # fmt: skip
    assert predict_response(outputs, CLASSIFY, row_format=False) == {"outputs": {
        "probabilities": [[0.25, 0.75], [1.0, 0.0]], "predicted_class": ["b", "é"],
    }}  # fmt: skip


def test_one_output_answers_its_values_alone():
    outputs = {"outputs": np.array([b"uno", b"dos"], object)}
    assert predict_response(outputs, SAMPLE, row_format=True) == {"predictions": ["uno", "dos"]}
    assert predict_response(outputs, SAMPLE, row_format=False) == {"outputs": ["uno", "dos"]}


def test_outputs_named_bytes_are_base64():
    spec = SignatureSpec("s", {"inputs": TEXTS}, {"image_bytes": TEXTS})
    answer = predict_response({"image_bytes": np.array([b"\xff\x00"], object)}, spec, True)
    assert answer == {"predictions": [{"b64": base64.b64encode(b"\xff\x00").decode()}]}
