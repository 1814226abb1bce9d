"""Errors that describe a user mistake and how to fix it, in one line."""


class KerasformerError(Exception):
    """A user error: the message names the problem and the fix.

    The command line prints it as a single line instead of a traceback. The checks of
    settings, files and data raise it, so ``except KerasformerError`` tells a user's
    mistake from a bug.

    Examples:
        >>> from kerasformer.litert.runtime import signature_runner
        >>> try:
        ...     signature_runner("model.tflite", runtime="onnx")
        ... except KerasformerError as error:
        ...     print(error)
        runtime 'onnx' is not one of: litert, tensorflow.
    """
