"""Every class a saved model can name is registered by ``import kerasformer`` alone."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import kerasformer
from tests.helpers.processes import run_python_json

PACKAGE = Path(kerasformer.__file__).parent


def serializable_class_names() -> list[str]:
    """Classes decorated ``@serializable``, read from the source without importing it."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(decorator, ast.Name) and decorator.id == "serializable"
                for decorator in node.decorator_list
            ):
                names.append(node.name)
    return names


@pytest.mark.slow
def test_importing_the_package_registers_every_serializable_class():
    names = serializable_class_names()
    assert {"SpanLogitMask", "HubLayer", "TransformerBlock", "DistillationLoss"} <= set(names)
    found = run_python_json(
        "import json, sys, kerasformer, tf_keras\n"
        "names = json.loads(sys.argv[1])\n"
        "print(json.dumps([n for n in names\n"
        "    if tf_keras.saving.get_registered_object(f'kerasformer>{n}') is None]))",
        json.dumps(names),
    )
    assert found == []
