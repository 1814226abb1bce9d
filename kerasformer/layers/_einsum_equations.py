"""The einsum equations of multi-head attention over any axes, as Keras's layer writes them.

Inputs are ``(batch, <other axes>, <attention axes>, features)``; after projection each
gains a heads axis before its last: ``(batch, ..., heads, depth)``.
"""

from __future__ import annotations

import string

LETTERS = string.ascii_lowercase


def projection_equation(free_dims: int, bound_dims: int, output_dims: int):
    """``(equation, bias_axes, output_rank)`` of a projection that contracts the last
    ``bound_dims`` axes of its input and appends ``output_dims`` axes.

    ``projection_equation(2, 1, 2)`` is ``("abc,cde->abde", "de", 4)``: a query
    ``(batch, length, width)`` becomes ``(batch, length, heads, depth)``.
    """
    free = LETTERS[:free_dims]
    bound = LETTERS[free_dims : free_dims + bound_dims]
    added = LETTERS[free_dims + bound_dims : free_dims + bound_dims + output_dims]
    return f"{free}{bound},{bound}{added}->{free}{added}", added, free_dims + output_dims


def attention_equations(rank: int, attention_axes: tuple[int, ...]):
    """``(scores_equation, combine_equation, scores_rank)`` for projected inputs of ``rank``.

    The scores equation takes ``(key, query)`` to scores of
    ``(<batch axes>, heads, <query attention axes>, <key attention axes>)``, where the
    batch axes are every axis that is neither attended over nor the depth; the combine
    equation takes ``(weights, value)`` back to the query's layout.
    """
    query = LETTERS[:rank]
    batch_axes = [axis for axis in range(rank - 1) if axis not in attention_axes]
    key = list(query)
    next_letter = rank
    for axis in attention_axes:
        key[axis] = LETTERS[next_letter]
        next_letter += 1
    key = "".join(key)
    scores = (
        "".join(query[axis] for axis in batch_axes)
        + "".join(query[axis] for axis in attention_axes)
        + "".join(key[axis] for axis in attention_axes)
    )
    return f"{key},{query}->{scores}", f"{scores},{key}->{query}", len(scores)


def resolved_attention_axes(attention_axes, rank: int) -> tuple[int, ...]:
    """The attention axes of projected inputs of ``rank`` as non-negative axes of the
    unprojected input; ``None`` means every axis but the batch, heads and depth."""
    if attention_axes is None:
        return tuple(range(1, rank - 2))
    return tuple(axis if axis >= 0 else rank - 1 + axis for axis in attention_axes)
