"""kerasformer's public API: every name its public subpackages export, and where the docs'
API reference documents it.

The public names are each subpackage's ``__all__`` (its lazy ``lazy_loader`` table, or
the layers' ``_public.py``). The API reference documents each at its home module, with
one mkdocstrings ``::: path`` line per name in ``docs/reference/api/*.md``;
``.ci/check_api.py`` reads the same lines to know what a release promised.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
API_PAGES = ROOT / "docs" / "reference" / "api"
# `kerasformer.export` also re-exports names that moved to `loading` and `convert`; each is
# documented once, at its home.
PUBLIC_PACKAGES = (
    "kerasformer", "kerasformer.convert", "kerasformer.datasets", "kerasformer.export",
    "kerasformer.layers", "kerasformer.litert", "kerasformer.loading", "kerasformer.models",
    "kerasformer.plots", "kerasformer.training",
)  # fmt: skip
DIRECTIVE = re.compile(r"^::: ([\w.]+)\s*$", re.M)


def documented_paths() -> list[str]:
    """The dotted path of every object the API reference pages document, in page order."""
    return [
        path
        for page in sorted(API_PAGES.glob("*.md"))
        for path in DIRECTIVE.findall(page.read_text("utf-8"))
    ]


def public_names() -> dict[str, str]:
    """Each public name, as ``package.name``, with the path of the object it names: its
    defining module and name (a constant's: the module that assigns it)."""
    names = {}
    for package_name in PUBLIC_PACKAGES:
        package = importlib.import_module(package_name)
        for name in package.__all__:
            if name.startswith("__") or name == "layers":
                continue
            names[f"{package_name}.{name}"] = home_path(package_name, name)
    return names


def home_path(package_name: str, name: str) -> str:
    obj = getattr(importlib.import_module(package_name), name)
    module = getattr(obj, "__module__", None)
    if isinstance(obj, type) or callable(obj) and module:
        return f"{module}.{obj.__qualname__}"
    # A constant: found in the submodule the lazy table names.
    for submodule, attributes in _lazy_tables(package_name).items():
        if name in attributes:
            return f"{package_name}.{submodule}.{name}"
    raise LookupError(f"{package_name}.{name} has no home module")


def _lazy_tables(package_name: str) -> dict[str, list[str]]:
    source = (ROOT / package_name.replace(".", "/") / "__init__.py").read_text("utf-8")
    tables = {}
    for submodule, names in re.findall(r'"(\w+)": \[([^\]]*)\]', source):
        tables[submodule] = re.findall(r'"(\w+)"', names)
    return tables
