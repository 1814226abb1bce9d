"""Every public name has a docstring the API reference can render: what it is, its
arguments (and no argument its signature lacks), what it returns, and an example.

The docstrings are read as mkdocstrings reads them, by griffe from the source, in Google
style (``Args:``, ``Returns:``, ``Raises:``, ``Example:``).
"""

from __future__ import annotations

import functools
import logging

import griffe
import pytest

from tests.docs.public_api import documented_paths, public_names

# Arguments a docstring need not name: Keras's standard layer arguments go under
# ``**kwargs``, and ``self``/``cls`` are never documented.
UNDOCUMENTED = {"self", "cls"}
PUBLIC = public_names()


@functools.cache
def package() -> griffe.Module:
    logging.getLogger("griffe").setLevel(logging.ERROR)
    return griffe.load("kerasformer", resolve_aliases=False)


def griffe_object(path: str):
    return package()[path.removeprefix("kerasformer.")]


def sections(obj) -> dict[str, list]:
    found: dict[str, list] = {}
    for section in obj.docstring.parse("google", warn_unknown_params=False):
        found.setdefault(section.kind.value, []).append(section)
    return found


# How a docstring names a variadic parameter: ``*args``, ``**kwargs``.
STARS = {"variadic positional": "*", "variadic keyword": "**"}


def parameter_names(obj) -> list[str]:
    return [
        STARS.get(p.kind.value, "") + p.name for p in obj.parameters if p.name not in UNDOCUMENTED
    ]


def documented_arguments(found: dict[str, list]) -> list[str]:
    return [
        parameter.name
        for kind in ("parameters", "other parameters")
        for section in found.get(kind, [])
        for parameter in section.value
    ]


def test_every_public_name_is_in_the_api_reference_once():
    documented = documented_paths()
    missing = sorted(name for name, home in PUBLIC.items() if home not in documented)
    assert not missing, f"public names missing from docs/reference/api/*.md: {missing}"
    twice = sorted({path for path in documented if documented.count(path) > 1})
    assert not twice


def test_the_api_reference_documents_only_what_exists():
    for path in documented_paths():
        griffe_object(path)  # raises KeyError for a path that is not there


HOMES = sorted(set(PUBLIC.values()))


@pytest.mark.parametrize("path", HOMES)
def test_public_name_has_a_docstring_with_a_summary(path):
    obj = griffe_object(path)
    assert obj.docstring is not None, f"{path} has no docstring"
    assert obj.docstring.value.strip().splitlines()[0].strip(), f"{path}: no summary line"


CALLABLES = [path for path in HOMES if griffe_object(path).kind.value in ("class", "function")]


@pytest.mark.parametrize("path", CALLABLES)
def test_documented_arguments_are_the_signatures(path):
    obj = griffe_object(path)
    found = sections(obj)
    signature = parameter_names(obj)
    documented = documented_arguments(found)
    unknown = [name for name in documented if name not in signature]
    assert not unknown, f"{path} documents arguments its signature lacks: {unknown}"
    undocumented = [name for name in signature if name not in documented]
    assert not undocumented, f"{path} does not document: {undocumented}"


@pytest.mark.parametrize("path", CALLABLES)
def test_public_callable_says_what_it_returns_and_shows_an_example(path):
    obj = griffe_object(path)
    found = sections(obj)
    if obj.kind.value == "function" and str(obj.returns) != "None":
        assert "returns" in found or "yields" in found, f"{path}: no Returns: section"
    assert "examples" in found, f"{path}: no Example: section (indented, with >>> lines)"
