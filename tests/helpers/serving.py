"""TF Serving's side of an export, checked without the server (it is not installable here).

TF Serving turns a REST body in the row format (``{"instances": [...]}``) into a
gRPC ``PredictRequest``: one tensor per input of the signature, the instances' values
stacked. `assert_tf_serving_takes` builds that request with the ``tensorflow-serving-api``
protos, checks it against the ``serving_default`` signature of the export's numbered
layout (``EXPORT/1/``, as ``--serving-version 1`` writes it), and runs the same request
through ``saved_model_cli run``, which loads the SavedModel into a session as the model
server does; its outputs must be what the signature returns in this process.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

SAVED_MODEL_CLI = """
import sys
if sys.argv[1] == "text-ops":
    import tensorflow_text  # a BERT export's tokeniser ops, as a model server must link them
from tensorflow.python.tools import saved_model_cli
sys.argv = ["saved_model_cli", *sys.argv[2:]]
saved_model_cli.main()
"""


def predict_request(rest_body: dict, input_names: list[str]):
    """The ``PredictRequest`` TF Serving makes of a row-format REST body: instances that are
    plain values feed the signature's one input; objects feed the inputs they name."""
    from tensorflow_serving.apis import predict_pb2

    from kerasformer.backend import tf

    instances = rest_body["instances"]
    if isinstance(instances[0], dict):
        columns = {name: [instance[name] for instance in instances] for name in instances[0]}
    else:
        (only,) = input_names
        columns = {only: instances}
    request = predict_pb2.PredictRequest()
    request.model_spec.name = "model"
    request.model_spec.signature_name = "serving_default"
    for name, values in columns.items():
        request.inputs[name].CopyFrom(tf.make_tensor_proto(values, dtype=tf.string))
    return request


def numbered_copy(export_dir: Path, work: Path) -> Path:
    """A copy of the export in ``work`` with TF Serving's version 1 added: ``work/export/1``."""
    from kerasformer.export.serving_layout import add_serving_version

    return add_serving_version(shutil.copytree(export_dir, work / "export"), 1)


def assert_tf_serving_takes(
    served: Path, rest_body: dict, work: Path, text_ops: bool = False
) -> dict:
    """Check that TF Serving's request for ``rest_body`` fits the signature of the
    SavedModel in the version folder ``served`` and gives, through ``saved_model_cli``,
    what the signature gives here; return that."""
    from kerasformer.backend import tf

    signature = tf.saved_model.load(str(served)).signatures["serving_default"]
    specs = signature.structured_input_signature[1]
    request = predict_request(rest_body, sorted(specs))
    assert set(request.inputs) == set(specs), (sorted(request.inputs), sorted(specs))
    arrays = {}
    for name, proto in request.inputs.items():
        assert tf.dtypes.as_dtype(proto.dtype) == specs[name].dtype
        assert specs[name].shape.is_compatible_with([d.size for d in proto.tensor_shape.dim])
        arrays[name] = tf.make_ndarray(proto)
        np.save(work / f"{name}.npy", arrays[name], allow_pickle=True)
    out = work / "outputs"
    result = subprocess.run(
        [sys.executable, "-c", SAVED_MODEL_CLI, "text-ops" if text_ops else "plain", "run",
         "--dir", str(served), "--tag_set", "serve", "--signature_def", "serving_default",
         "--inputs", ";".join(f"{name}={work / name}.npy" for name in arrays),
         "--outdir", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    expected = {
        name: tensor.numpy()
        for name, tensor in signature(**{k: tf.constant(v) for k, v in arrays.items()}).items()
    }
    for name, want in expected.items():
        got = np.load(out / f"{name}.npy", allow_pickle=True)
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)
    return expected
