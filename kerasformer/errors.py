"""Errors that describe a user mistake and how to fix it, in one line."""


class KerasformerError(Exception):
    """A user error: the message names the problem and the fix.

    The command line prints it as a single line instead of a traceback.
    """
