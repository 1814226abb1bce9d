"""An export's ``serving_default`` signature, loaded as TF Serving loads it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from kerasformer.backend import import_tensorflow_without_keras, tf
from kerasformer.files.export_files import (
    SAVED_MODEL_FILE,
    VARIABLES_INDEX,
    damaged,
    import_op_libraries,
    require_export_files,
    require_intact_export,
    require_parsable_saved_model,
    variables_data_files,
)
from kerasformer.files.export_kind import ExportKind


def load_serving_function(
    export_dir: Path, signature: str = "serving_default"
) -> Callable[..., dict]:
    """The function of ``signature``, loading the export's parts one step at a time."""
    loaded, _ = load_saved_model(export_dir)
    return loaded.signatures[signature]


def load_saved_model(export_dir: Path) -> tuple[object, object]:
    """The SavedModel in ``export_dir``, loaded, and its parsed ``saved_model.pb``.

    The graph is parsed whole and every variable read back before TensorFlow loads it, so
    a damaged file is named in one line rather than failing somewhere in the load.
    """
    # Serving needs TensorFlow alone: no Keras, and TF Text only for a BERT export.
    import_tensorflow_without_keras()
    saved_model = require_parsable_saved_model(export_dir / SAVED_MODEL_FILE)
    # BERT preprocess models use TF Text's ops, which TensorFlow knows only once their
    # kernel libraries are loaded; without them every BERT export fails to load.
    import_op_libraries(saved_model)
    try:
        tf.train.load_checkpoint(str(export_dir / "variables" / "variables"))
    except (tf.errors.OpError, ValueError):
        raise damaged(export_dir / VARIABLES_INDEX) from None
    try:
        loaded = tf.saved_model.load(str(export_dir))
    except Exception:  # a short data shard raises IndexError, OpError, OSError...
        # The graph and the index were read whole above: the values are what is left.
        shards = variables_data_files(export_dir)
        raise damaged(shards[0] if len(shards) == 1 else export_dir / "variables") from None
    return loaded, saved_model


def load_checked_serving_function(
    export_dir: str | Path, kind: ExportKind, signature: str = "serving_default"
) -> tuple[Path, Callable[..., dict]]:
    """An export of ``kind`` checked whole, and the function of its ``signature``.

    What needs no file's contents is refused before TensorFlow starts, and TensorFlow
    starts without a Keras (the whole check would import it with one).
    """
    require_export_files(export_dir, kind)
    import_tensorflow_without_keras()
    directory = require_intact_export(export_dir, kind)
    return directory, load_serving_function(directory, signature)


@contextlib.contextmanager
def without_graph_rewrites() -> Iterator[None]:
    """On a CPU, a function first called in the block runs its graph as saved, without
    Grappler's rewrites; where TensorFlow sees a GPU, nothing changes.

    For a command line, which answers one batch of texts and exits. On a 2-core CPU,
    rewriting a signature's graph at its first call took longer than it saved there: a
    BiLSTM tagger's first call 1.1 s with the rewrites, 0.4 s without; a MiniLM question
    answerer's 2.7 s and 1.2 s, and 64 long contexts after it 1.8 s either way. On a GPU
    the rewrites are what put tf-keras's LSTMs on cuDNN and fuse BERT's operations, so
    they stay; so they do for a server, which calls a signature for hours.
    """
    import_tensorflow_without_keras()
    if tf.config.list_physical_devices("GPU"):
        yield
        return
    before = tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    try:
        yield
    finally:
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": before})
