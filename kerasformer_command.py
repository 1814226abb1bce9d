"""The ``kerasformer`` console script: it chooses tf-keras for the whole process first.

Every command runs on tf-keras. Left alone, a command's process would also load Keras 3:
``import tensorflow`` imports it for ``tf.keras``. No command uses it. Both choices are
environment variables read at the first import, which is why they are set here, in a
module outside the package, whose import would come too late; a value the user has set
wins. Help pages and argument refusals import neither (``bench/command_start.py``). JAX,
which TensorFlow imports where it is installed, is hidden from TensorFlow's import.

Nothing depends on them: ``python -m kerasformer.cli.main`` and
`kerasformer.cli.main.main` run the same commands without them, only slower to start.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys

TF_KERAS_ONLY = {
    # tf.keras is then tf-keras, which TensorFlow imports in place of Keras 3.
    "TF_USE_LEGACY_KERAS": "1",
    # kerasformer.layers is then the tf-keras namespace (see kerasformer.backend).
    "KERASFORMER_KERAS": "2",
}


def use_tf_keras_only() -> None:
    """Set `TF_KERAS_ONLY` where the environment leaves them unset; call it before any
    import of TensorFlow or kerasformer."""
    for name, value in TF_KERAS_ONLY.items():
        os.environ.setdefault(name, value)


def main(argv: list[str] | None = None) -> int:
    """Run ``kerasformer ARGV`` (`kerasformer.cli.main.main`) on tf-keras alone."""
    use_tf_keras_only()
    from kerasformer.cli.main import main as run_command_line

    if "tensorflow" not in sys.modules and TensorFlowWithoutJax not in map(type, sys.meta_path):
        sys.meta_path.insert(0, TensorFlowWithoutJax())
    return run_command_line(argv)


class TensorFlowWithoutJax(importlib.abc.MetaPathFinder):
    """Finds TensorFlow as Python would, and runs its first import with JAX hidden.

    Where JAX is installed, ``import tensorflow`` imports it too (half a second), for
    tf.lite's converter of JAX functions, which no command uses. Hidden only while
    TensorFlow's own ``__init__`` runs (`kerasformer.backend.hidden_modules`), JAX stays
    importable, and absent from ``sys.modules``, for everything else.
    """

    def find_spec(self, name, path=None, target=None):
        if name != "tensorflow":
            return None
        sys.meta_path.remove(self)  # once: the next finders find TensorFlow as usual
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader.exec_module = without_jax(spec.loader.exec_module)
        return spec


def without_jax(exec_module):
    def run(module):
        from kerasformer.backend import hidden_modules

        with hidden_modules("jax"):
            exec_module(module)

    return run


if __name__ == "__main__":
    sys.exit(main())
