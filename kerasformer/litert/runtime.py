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


def signature_runner(
    model: str | Path, runtime: str = "litert", num_threads: int | None = None
) -> Callable[..., dict]:
    """The model's ``serving_default``: called with named NumPy inputs, returns its outputs.

    Inputs of a new shape resize the interpreter (batches and lengths may vary).
    ``num_threads`` defaults to every core (the interpreters' own default is one).
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
