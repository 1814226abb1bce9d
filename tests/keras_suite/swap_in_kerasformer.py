"""A pytest plugin that runs Keras's own tests of `MultiHeadAttention` against kerasformer's.

Loaded with ``-p tests.keras_suite.swap_in_kerasformer`` by `test_keras_suite.py`: Keras's
test module reads the class as ``keras.src.layers.MultiHeadAttention`` when each test runs,
so swapping that name runs the file unchanged, as Keras ships it, against ours. The tests
in `exceptions.EXCEPTIONS` are deselected.
"""

import keras.src.layers

from kerasformer.layers import MultiHeadAttention
from tests.keras_suite.exceptions import EXCEPTIONS

SWAPPED_LINE = "kerasformer.layers.MultiHeadAttention stands in for Keras's"

keras.src.layers.MultiHeadAttention = MultiHeadAttention


def pytest_configure(config):
    # A marker of Keras's own conftest, which is not in the wheel.
    config.addinivalue_line("markers", "requires_trainable_backend: Keras's marker")


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"{SWAPPED_LINE}: {MultiHeadAttention.__module__}")


def pytest_collection_modifyitems(config, items):
    kept = [item for item in items if item.name.split("[")[0] not in EXCEPTIONS]
    deselected = [item for item in items if item not in kept]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
    items[:] = kept
