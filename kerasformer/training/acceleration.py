"""Where and how training runs: distribution strategy, mixed precision, XLA.

Nothing here names a device: strategies use the devices TensorFlow sees, so a visible
GPU is used and a CPU-only machine runs the same code.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator

from kerasformer.backend import global_dtype_policy, keras, tf
from kerasformer.errors import KerasformerError

STRATEGIES = ("default", "one-device", "mirrored", "multi-worker")


def gpus_visible() -> bool:
    return bool(tf.config.list_logical_devices("GPU"))


def make_strategy(name: str) -> tf.distribute.Strategy:
    """A ``tf.distribute`` strategy by name.

    - ``default``: TensorFlow's default placement (a visible GPU is used).
    - ``one-device``: the first GPU if there is one, else the CPU.
    - ``mirrored``: synchronous data parallelism over all local GPUs, or over all
      logical CPU devices when there is no GPU.
    - ``multi-worker``: synchronous data parallelism across the machines that the
      ``TF_CONFIG`` environment variable describes.
    """
    if name == "default":
        return tf.distribute.get_strategy()
    if name == "one-device":
        kind = "GPU" if gpus_visible() else "CPU"
        return tf.distribute.OneDeviceStrategy(tf.config.list_logical_devices(kind)[0].name)
    if name == "mirrored":
        kind = "GPU" if gpus_visible() else "CPU"
        return tf.distribute.MirroredStrategy(
            [d.name for d in tf.config.list_logical_devices(kind)]
        )
    if name == "multi-worker":
        require_tf_config()
        return tf.distribute.MultiWorkerMirroredStrategy()
    raise KerasformerError(f"unknown strategy {name!r}; choose one of: {', '.join(STRATEGIES)}.")


def require_tf_config() -> None:
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        raise KerasformerError(
            "--strategy multi-worker needs the TF_CONFIG environment variable describing the "
            'cluster, e.g. {"cluster": {"worker": ["host1:port", "host2:port"]}, '
            '"task": {"type": "worker", "index": 0}}.'
        )
    try:
        config = json.loads(raw)
        config["cluster"]["worker"], config["task"]["index"]
    except (ValueError, KeyError, TypeError):
        raise KerasformerError(
            "TF_CONFIG is not valid JSON with cluster.worker and task.index; see --help."
        ) from None


def is_chief(strategy: tf.distribute.Strategy) -> bool:
    """Whether this process keeps what training writes: the only process, or worker 0."""
    return strategy.extended.should_checkpoint


def mixed_precision_policy_name() -> str:
    """float16 where hardware supports it (GPU, with loss scaling), bfloat16 on CPU."""
    return "mixed_float16" if gpus_visible() else "mixed_bfloat16"


@contextlib.contextmanager
def dtype_policy(mixed_precision: bool) -> Iterator[str]:
    """Build layers under a mixed-precision policy, then restore the previous one.

    Layers keep the policy they were built with; Keras wraps the optimizer in loss
    scaling for ``mixed_float16``. Output layers declare ``dtype="float32"`` themselves.
    """
    name = mixed_precision_policy_name() if mixed_precision else global_policy_name()
    with global_dtype_policy(name):
        yield name


@contextlib.contextmanager
def building_scope(strategy: tf.distribute.Strategy, mixed_precision: bool) -> Iterator[None]:
    """Where a model is built: under ``strategy`` and the run's dtype policy.

    Made when the strategy is, entered where the model is built.
    """
    with dtype_policy(mixed_precision), strategy.scope():
        yield


def global_policy_name() -> str:
    return keras.mixed_precision.global_policy().name


def split_off_string_preprocessing(model: keras.Model) -> tuple[keras.layers.Layer, keras.Model]:
    """The layer that turns strings into tensors, and the model from its outputs on.

    String ops cannot be XLA-compiled, so under XLA the first runs in ``tf.data`` and
    only the second, which shares every weight with ``model``, is compiled.
    """
    first = next(layer for layer in model.layers if not isinstance(layer, keras.layers.InputLayer))
    if first.input.dtype != tf.string:
        raise KerasformerError(
            f"model {model.name!r} does not start with a string preprocessing layer."
        )
    return first, keras.Model(first.output, model.output, name=f"{model.name}_core")
