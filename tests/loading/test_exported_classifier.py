"""Reading exports: damage that a quick look would miss is still named, file by file."""

import re
import shutil
import zipfile

import pytest

from kerasformer.errors import KerasformerError
from kerasformer.export import ExportedClassifier, export_classifier, load_keras_model
from kerasformer.models import build_classifier

CLASS_NAMES = ["World", "Sports", "Business", "Sci/Tech"]
TEXTS = ["team goal striker", "bank shares profit", "election minister", "chip software"]


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    model = build_classifier("transformer", 4, TEXTS, vocab_size=50, maxlen=8, embed_dim=8)
    return export_classifier(model, CLASS_NAMES, tmp_path_factory.mktemp("export") / "model")


@pytest.fixture
def copy_of_export(export_dir, tmp_path):
    return shutil.copytree(export_dir, tmp_path / "copy")


def damaged_message(path) -> str:
    return re.escape(f"{path} is missing or damaged; re-export the model with `kerasformer train`.")


def test_a_missing_shard_of_sharded_variables_is_named(tmp_path):
    # Large models save their variables in several shards; the names say how many.
    (tmp_path / "variables").mkdir()
    (tmp_path / "assets").mkdir()
    for name in ("saved_model.pb", "variables/variables.index", "assets/class_names.txt"):
        (tmp_path / name).write_text("x\n")
    (tmp_path / "variables" / "variables.data-00000-of-00002").write_text("x")
    missing = tmp_path / "variables" / "variables.data-00001-of-00002"
    with pytest.raises(KerasformerError, match=damaged_message(missing)):
        ExportedClassifier(tmp_path)


def test_saved_model_cut_between_fields_is_named(copy_of_export):
    # A file cut where a field ends still parses; only what it lacks gives it away.
    from tensorflow.core.protobuf import saved_model_pb2

    path = copy_of_export / "saved_model.pb"
    saved_model = saved_model_pb2.SavedModel.FromString(path.read_bytes())
    saved_model.meta_graphs[0].ClearField("object_graph_def")
    path.write_bytes(saved_model.SerializeToString())
    with pytest.raises(KerasformerError, match=damaged_message(path)):
        ExportedClassifier(copy_of_export)


def test_more_class_names_than_outputs_is_an_error(copy_of_export):
    path = copy_of_export / "assets" / "class_names.txt"
    path.write_text(path.read_text() + "Weather\n")
    with pytest.raises(KerasformerError, match="has 5 class names for a model with 4 outputs"):
        ExportedClassifier(copy_of_export)


def test_model_keras_with_a_corrupted_member_is_named(copy_of_export):
    # Same length, one byte flipped inside the weights: only the checksum shows it.
    path = copy_of_export / "model.keras"
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("model.weights.h5")
    data = bytearray(path.read_bytes())
    # A local header is 30 bytes, then the name and an extra field of the length at 28.
    extra = int.from_bytes(data[info.header_offset + 28 : info.header_offset + 30], "little")
    start = info.header_offset + 30 + len(info.filename) + extra
    data[start + info.compress_size // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(KerasformerError, match=damaged_message(path)):
        load_keras_model(copy_of_export)


def test_intact_export_still_loads(export_dir):
    classifier = ExportedClassifier(export_dir)
    assert classifier.class_names == tuple(CLASS_NAMES)
    assert load_keras_model(export_dir).output_shape == (None, 4)
