"""The tests of Keras's own `MultiHeadAttention` suite that are not run against ours.

Each reads a private attribute of Keras's layer. The public behaviour it checks is tested
our own way in `test_suite_exceptions.py`, under the test's own name.
"""

EXCEPTIONS = {
    "test_sliding_window_serialization": (
        "reads `restored._sliding_window`, Keras's private attribute; ours is the public "
        "`sliding_window`. The behaviour, that `sliding_window` is in the config and comes "
        "back from it, is tested in test_suite_exceptions.py"
    ),
}
