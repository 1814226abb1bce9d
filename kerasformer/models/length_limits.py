"""What fits a model's window: the length checks that the Keras readers (`TextGenerator`,
`Translator`) and the SavedModel ones (`ExportedGenerator`, `ExportedTranslator`) share,
in plain Python, so that serving from a SavedModel needs no Keras to make them."""

from __future__ import annotations

from kerasformer.errors import KerasformerError


def require_max_tokens(max_tokens: int, maxlen: int) -> None:
    """Refuse a number of tokens to generate that no prompt leaves room for."""
    if not 1 <= max_tokens < maxlen:
        raise KerasformerError(
            f"max_tokens must be from 1 to {maxlen - 1} (the model's window), got {max_tokens}."
        )


def prompt_problem(length: int, max_tokens: int, maxlen: int) -> str | None:
    """Why a prompt of ``length`` tokens cannot be continued by ``max_tokens`` tokens in a
    window of ``maxlen`` (a start-of-line token comes first), or None if it can."""
    if length == 0:
        return "is empty; give some words to continue"
    if length + 1 + max_tokens > maxlen:
        return (
            f"has {length} tokens; with {max_tokens} to generate that exceeds the "
            f"model's window of {maxlen}; shorten the prompt or generate fewer tokens"
        )
    return None


def sentence_problem(length: int, maxlen: int, unit: str) -> str | None:
    """Why a source sentence of ``length`` tokens (``unit``: "words", "pieces") cannot be
    translated by a model reading at most ``maxlen``, or None if it can."""
    if length == 0:
        return "has no words to translate; pass some text"
    if length > maxlen:
        return (
            f"has {length} {unit}, more than the model's {maxlen}; split it into shorter sentences"
        )
    return None
