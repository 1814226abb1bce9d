"""How many tokens a TF-Hub BERT encoder reads: read from its SavedModel, checked early."""

from __future__ import annotations

import tensorflow_hub as hub
from tensorflow.core.protobuf import saved_model_pb2

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.models.bert_classifier import load_hub_handle
from kerasformer.network import is_url
from kerasformer.validation import is_whole_number

# Longest window when the encoder's own limit cannot be read (BERTs mostly read 512).
MAX_SEQ_LENGTH = 8192
# Names of the position embedding table in Model Garden (TF 2) and TF 1 BERT encoders.
POSITION_EMBEDDINGS = ("position_embedding/embeddings", "position_embeddings")


def require_seq_length_fits(seq_length, encoder_handle: str) -> None:
    """Refuse, before anything is built, windows longer than the encoder can read.

    The limit is the rows of the encoder's position embeddings where they can be read
    from its SavedModel, else `MAX_SEQ_LENGTH`.
    """
    if not is_whole_number(seq_length):
        return  # the windows (SpanWindows, WordPieceWindows) say what is wrong with it
    positions = encoder_positions(encoder_handle)
    if positions is not None and seq_length > positions:
        raise KerasformerError(
            f"seq_length {seq_length:,} is longer than the encoder {encoder_handle} can read "
            f"(its position embeddings cover {positions:,} tokens); pass --seq-length "
            f"{positions} or less."
        )
    if seq_length > MAX_SEQ_LENGTH:
        raise KerasformerError(
            f"seq_length {seq_length:,} is longer than any BERT encoder reads (at most "
            f"{MAX_SEQ_LENGTH:,} tokens here; most read 512); pass a smaller --seq-length."
        )


def encoder_positions(handle: str) -> int | None:
    """Rows of the position embeddings of a TF-Hub BERT encoder, or None if not found.

    Read from the object graph of its ``saved_model.pb`` (no model is loaded); a URL is
    first downloaded to TF-Hub's cache, where building the model then finds it.
    """
    if is_url(handle):
        directory = load_hub_handle(handle, "encoder", hub.resolve)
    else:
        directory = handle
    try:
        with tf.io.gfile.GFile(f"{directory}/saved_model.pb", "rb") as graph_file:
            saved = saved_model_pb2.SavedModel.FromString(graph_file.read())
    except Exception:  # not there, or not a SavedModel: building says what is wrong
        return None
    for graph in saved.meta_graphs:
        for node in graph.object_graph_def.nodes:
            if node.WhichOneof("kind") != "variable":
                continue
            name = node.variable.name.split(":")[0]
            dims = node.variable.shape.dim
            if name.endswith(POSITION_EMBEDDINGS) and len(dims) == 2 and dims[0].size > 0:
                return int(dims[0].size)
    return None
