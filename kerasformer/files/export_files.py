"""Checks of an export's files, each naming the file it found broken.

A damaged export is reported by what was checked, never by parsing TensorFlow's
messages: the SavedModel parses whole, every variable reads back with its checksum,
``model.keras`` is an intact archive, the settings and vocabularies a kind needs are
there, and the TF-Hub models a BERT export refers to still exist.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
import zlib
from pathlib import Path

from kerasformer.errors import KerasformerError
from kerasformer.files.export_kind import (
    CLASSIFIER,
    LANGUAGE_MODEL,
    QUESTION_ANSWERER,
    TAGGER,
    TRANSLATOR,
    ExportKind,
    require_export_kind,
)
from kerasformer.network import is_url

KERAS_FILE = "model.keras"
# Besides the SavedModel and model.keras, what each kind of export reads.
FILES_OF_KIND = {
    CLASSIFIER.name: ("assets/class_names.txt",),
    TRANSLATOR.name: ("translator.json", "source_vocabulary.txt", "target_vocabulary.txt"),
    LANGUAGE_MODEL.name: ("generator.json", "vocabulary.txt"),
    QUESTION_ANSWERER.name: ("question_answerer.json",),
    TAGGER.name: ("tagger.json",),
}
HUB_LAYER_CLASSES = ("HubLayer", "kerasformer>HubLayer", "KerasLayer")

REEXPORT = "re-export the model with `kerasformer train`."
SAVED_MODEL_FILE = "saved_model.pb"
VARIABLES_INDEX = Path("variables") / "variables.index"
DATA_SHARD = re.compile(r"variables\.data-\d{5}-of-(\d{5})")


def damaged(path: Path) -> KerasformerError:
    return KerasformerError(f"{path} is missing or damaged; {REEXPORT}")


def require_intact_export(directory: str | Path, kind: ExportKind) -> Path:
    """Check every file an export of ``kind`` reads, before any of it is used.

    The kind first (a translator given where a classifier belongs is named as one), then
    the files that kind needs, the SavedModel whole (every variable read back, so a
    damaged value fails its checksum here) and ``model.keras``. Returns the directory.
    """
    directory = require_export_files(directory, kind)
    require_saved_model_files(directory)
    require_parsable_saved_model(directory / SAVED_MODEL_FILE)
    require_readable_variables(directory)
    require_intact_keras_file(directory / KERAS_FILE)
    return directory


def require_export_files(directory: str | Path, kind: ExportKind) -> Path:
    """The checks of `require_intact_export` that read no file's contents (and import
    no TensorFlow): a directory, of ``kind``, with every file that kind needs."""
    directory = Path(directory)
    if not directory.is_dir():
        raise KerasformerError(
            f"{directory} is not a directory; pass the directory that `kerasformer train` "
            "wrote (e.g. saved_models/NAME)."
        )
    require_export_kind(directory, kind)
    for name in FILES_OF_KIND[kind.name]:
        path = directory / name
        if not path.is_file():
            raise KerasformerError(
                f"{directory} is not an exported {kind.bare_noun} (no {name}); pass the "
                f"directory that `{kind.made_by}` wrote."
            )
        if path.stat().st_size == 0:
            raise damaged(path)
    return directory


def require_readable_variables(export_dir: Path) -> None:
    """Read every saved value: TensorFlow checks each one's checksum as it reads it."""
    from kerasformer.backend import tf

    try:
        reader = tf.train.load_checkpoint(str(export_dir / "variables" / "variables"))
        for name in reader.get_variable_to_shape_map():
            reader.get_tensor(name)
    except (tf.errors.OpError, ValueError, IndexError, OSError):
        shards = variables_data_files(export_dir)
        raise damaged(shards[0] if len(shards) == 1 else export_dir / "variables") from None


def require_hub_handles(keras_file: Path) -> list[tuple[str, str]]:
    """Every local TF-Hub model a ``model.keras`` names must still be where it was.

    Read from the archive's configuration before Keras loads it, so that a moved or
    deleted preprocess model or encoder is named, not reported as a Keras error.
    Returns (layer name, handle) of each (none: the model needs no TF-Hub to load).
    """
    with zipfile.ZipFile(keras_file) as archive:
        config = json.loads(archive.read("config.json"))
    handles = hub_handles(config)
    for layer_name, handle in handles:
        require_handle_present(keras_file.parent, layer_name, handle)
    return handles


def require_handle_present(export_dir: Path, role: str, handle: str) -> None:
    """A local TF-Hub model that the export at ``export_dir`` refers to must still exist."""
    if is_url(handle) or (Path(handle) / SAVED_MODEL_FILE).is_file():
        return
    relative = "" if os.path.isabs(handle) else f" (relative to {Path.cwd()})"
    raise KerasformerError(
        f"{export_dir} needs its {role} model at {handle}{relative}, which is gone; put it "
        "back there, or train again with --preprocess and --encoder naming where it is now."
    )


def hub_handles(config) -> list[tuple[str, str]]:
    """(layer name, handle) of every TF-Hub layer in a Keras configuration, nested or not."""
    found = []
    if isinstance(config, dict):
        if config.get("class_name") in HUB_LAYER_CLASSES and isinstance(config.get("config"), dict):
            layer = config["config"]
            if isinstance(layer.get("handle"), str):
                found.append((layer.get("name", "TF-Hub"), layer["handle"]))
        for value in config.values():
            found += hub_handles(value)
    elif isinstance(config, list):
        for value in config:
            found += hub_handles(value)
    return found


def require_saved_model_files(export_dir: Path) -> None:
    """Fail on the first missing or empty file of the SavedModel, before TensorFlow reads it."""
    required = [
        export_dir / SAVED_MODEL_FILE,
        export_dir / VARIABLES_INDEX,
        *variables_data_files(export_dir),
    ]
    for path in required:
        if not path.is_file() or path.stat().st_size == 0:
            raise damaged(path)


def variables_data_files(export_dir: Path) -> list[Path]:
    """Every data shard of the variables; each shard's name says how many there are."""
    directory = export_dir / "variables"
    counts = [
        int(match.group(1))
        for match in map(DATA_SHARD.fullmatch, (path.name for path in directory.glob("*")))
        if match
    ]
    total = max(counts, default=1)
    return [directory / f"variables.data-{shard:05d}-of-{total:05d}" for shard in range(total)]


def require_parsable_saved_model(path: Path):
    """saved_model.pb must parse whole, with its object graph and serving signature.

    The object graph is the last field written, so a file cut at a field boundary
    (which still parses) lacks it. Returns the parsed ``SavedModel`` message.
    """
    from google.protobuf.message import DecodeError
    from tensorflow.core.protobuf import saved_model_pb2

    saved_model = saved_model_pb2.SavedModel()
    try:
        saved_model.ParseFromString(path.read_bytes())
    except DecodeError:
        raise damaged(path) from None
    graphs = saved_model.meta_graphs
    if len(graphs) != 1 or not graphs[0].HasField("object_graph_def"):
        raise damaged(path)
    if "serving_default" not in graphs[0].signature_def:
        raise KerasformerError(
            f"{path} has no serving_default signature, so kerasformer did not export it; "
            + REEXPORT
        )
    return saved_model


def import_op_libraries(saved_model) -> None:
    """Make the ops a parsed SavedModel's graph uses known to TensorFlow before it loads.

    TensorFlow knows TF Text's ops (BERT's preprocess models) only once their libraries
    are loaded; an export of a from-scratch model uses core ops alone and skips them. An
    op that neither provides is named in one line, not left to fail the load.
    """
    if not unknown_ops(saved_model):
        return
    load_text_op_libraries()
    missing = unknown_ops(saved_model)
    if missing:
        raise KerasformerError(
            f"the export uses the op {missing[0]}, which neither this TensorFlow nor TF Text "
            "provides; serve it with the TensorFlow and tensorflow-text versions it was "
            "exported with."
        )


def unknown_ops(saved_model) -> list[str]:
    """The ops of a parsed SavedModel's graph that TensorFlow does not know (yet), sorted."""
    from tensorflow.python.framework import op_def_registry

    graph = saved_model.meta_graphs[0].graph_def
    functions = {function.signature.name for function in graph.library.function}
    ops = {node.op for node in graph.node}
    ops.update(node.op for function in graph.library.function for node in function.node_def)
    return sorted(op for op in ops if op not in functions and op_def_registry.get(op) is None)


def load_text_op_libraries() -> None:
    """Register TF Text's ops by loading its kernel libraries, as its own modules do.

    Not ``import tensorflow_text``: its package imports its Keras layers, and with them a
    whole Keras (a second and a half), which serving a SavedModel does not use. Where
    the libraries are not found as files, the package is imported after all.
    """
    import importlib.util

    import tensorflow as tf

    spec = importlib.util.find_spec("tensorflow_text")
    if spec is None or spec.origin is None:
        raise KerasformerError(
            "this export uses TF Text's ops (a BERT preprocess model); install them with "
            f"pip install 'tensorflow-text~={tf_minor_version()}.0'."
        )
    libraries = sorted(Path(spec.origin).parent.glob("python/*/_*.so"))
    if not libraries:
        import tensorflow_text  # noqa: F401
    for library in libraries:
        try:
            tf.load_op_library(str(library))
        except (tf.errors.NotFoundError, OSError) as error:
            reason = " ".join(str(error).split())[:200]
            raise KerasformerError(
                f"TF Text's kernels do not load into this TensorFlow ({library.name}: "
                f"{reason}); install the matching version: pip install "
                f"'tensorflow-text~={tf_minor_version()}.0'."
            ) from None


def tf_minor_version() -> str:
    import tensorflow as tf

    return ".".join(tf.__version__.split(".")[:2])


def require_intact_keras_file(path: Path) -> None:
    """model.keras is a zip archive: every member must read back with its checksum."""
    try:
        with zipfile.ZipFile(path) as archive:
            intact = archive.testzip() is None and "config.json" in archive.namelist()
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error):
        intact = False
    if not intact:
        raise damaged(path)
