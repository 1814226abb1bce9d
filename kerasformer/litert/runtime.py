"""Open a ``.tflite`` model's signature with LiteRT's interpreter or TensorFlow's."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from kerasformer.errors import KerasformerError
from kerasformer.litert.files import SIGNATURE
from kerasformer.validation import is_whole_number

# ``litert``: the standalone ``ai-edge-litert`` package, no TensorFlow needed;
# ``tensorflow``: ``tf.lite.Interpreter``, the same runtime inside TensorFlow.
RUNTIMES = ("litert", "tensorflow")
"""The interpreters a ``.tflite`` model runs with, by the name ``runtime=`` takes:
``litert`` (``ai-edge-litert``, no TensorFlow) and ``tensorflow`` (``tf.lite``)."""


def signature_runner(
    model: str | Path, runtime: str = "litert", num_threads: int | None = None
) -> Callable[..., dict]:
    """The model's ``serving_default``: called with named NumPy inputs, returns its outputs.

    Inputs of a new shape resize the interpreter (batches and lengths may vary).

    Args:
        model: The ``.tflite`` file.
        runtime: One of `RUNTIMES`: ``"litert"`` (``ai_edge_litert``) or
            ``"tensorflow"`` (``tf.lite.Interpreter``).
        num_threads: Interpreter threads, a whole number >= 1; None for every core (the
            interpreters' own default is one).

    Returns:
        A function of the signature's inputs by keyword, returning its outputs as a dict
        of NumPy arrays by name.

    Raises:
        KerasformerError: ``num_threads`` not a whole number >= 1, an unknown
            ``runtime``, ``ai-edge-litert`` not installed (for ``"litert"``), or a model
            the interpreter cannot open.

    Examples:
        >>> import numpy as np
        >>> run = signature_runner("saved_models/bbc_news-transformer.tflite")
        >>> outputs = run(token_ids=np.array([[2, 3, 0]], np.int32))
        >>> list(outputs), outputs["probabilities"].shape
        (['probabilities'], (1, 5))
    """
    if num_threads is not None and (not is_whole_number(num_threads) or num_threads < 1):
        raise KerasformerError(
            f"num_threads must be a whole number >= 1, or None for every core; got {num_threads!r}."
        )
    interpreter_class = interpreter_of(runtime)
    threads = num_threads or os.cpu_count() or 1
    try:
        interpreter = interpreter_class(model_path=str(model), num_threads=threads)
        return interpreter.get_signature_runner(SIGNATURE)
    except (ValueError, RuntimeError) as error:
        raise KerasformerError(
            f"cannot open {model} with {runtime}'s interpreter: {' '.join(str(error).split())}"
        ) from None


def interpreter_of(runtime: str):
    if runtime == "litert":
        try:
            from ai_edge_litert.interpreter import Interpreter
        except ImportError:
            raise KerasformerError(
                "LiteRT is not installed; pip install ai-edge-litert, or pass "
                "runtime='tensorflow' to use tf.lite.Interpreter."
            ) from None
        return Interpreter
    if runtime == "tensorflow":
        import tensorflow as tf

        return tf.lite.Interpreter
    raise KerasformerError(f"runtime {runtime!r} is not one of: {', '.join(RUNTIMES)}.")
