"""``import kerasformer`` is light: Keras and TensorFlow load when a name needs them.

Each check runs in a fresh interpreter, where nothing has imported anything yet.
"""

from __future__ import annotations

import importlib
import json

import pytest

from tests.helpers.processes import run_python_json

HEAVY = ("tensorflow", "keras", "tf_keras", "tensorflow_hub", "official", "numpy")
PACKAGES = (
    "kerasformer.convert", "kerasformer.datasets", "kerasformer.export", "kerasformer.files",
    "kerasformer.layers", "kerasformer.litert", "kerasformer.loading", "kerasformer.models",
    "kerasformer.plots", "kerasformer.serving", "kerasformer.training",
    "kerasformer.training.tasks",
)  # fmt: skip
LOADED_AFTER = """
import json, sys
{code}
print(json.dumps([name for name in json.loads(sys.argv[1]) if name in sys.modules]))
"""


def loaded_after(code: str, modules=HEAVY, **environment) -> list[str]:
    """Which of ``modules`` a fresh interpreter has imported after running ``code``."""
    return run_python_json(
        LOADED_AFTER.format(code=code), json.dumps(list(modules)), env=environment
    )


def test_importing_the_package_imports_no_keras_tensorflow_or_numpy():
    assert loaded_after("import kerasformer") == []


def test_importing_the_subpackages_imports_no_keras_or_tensorflow():
    imports = "\n".join(
        f"import {package}" for package in PACKAGES if package != "kerasformer.layers"
    )
    assert loaded_after(imports, HEAVY[:-1]) == []


def test_a_layer_on_jax_loads_keras_3_and_jax_only():
    loaded = loaded_after(
        "from kerasformer.layers import TransformerBlock",
        ("keras", "jax", "tensorflow", "tf_keras", "tensorflow_hub"),
        KERAS_BACKEND="jax", JAX_PLATFORMS="cpu",
    )  # fmt: skip
    assert loaded == ["keras", "jax"]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_keeps_its_import_path(package):
    module = importlib.import_module(package)
    missing = [
        name for name in getattr(module, "__all__", ()) if getattr(module, name, None) is None
    ]
    assert missing == []
    assert set(getattr(module, "__all__", ())) <= set(dir(module))


def test_old_module_paths_are_the_moved_modules():
    for old, new in (
        ("export.convert_bert", "convert.convert_bert"),
        ("export.export_files", "files.export_files"),
        ("export.export_kind", "files.export_kind"),
        ("export.exported_classifier", "loading.exported_classifier"),
        ("export.staged_directory", "files.staged_directory"),
    ):
        moved = importlib.import_module(f"kerasformer.{new}")
        assert importlib.import_module(f"kerasformer.{old}") is moved
    # The package's own name stays the function, not the module of the same name.
    import kerasformer.export

    assert kerasformer.export.convert_bert is moved_function("convert_bert")


def moved_function(name: str):
    return getattr(importlib.import_module(f"kerasformer.convert.{name}"), name)


def test_every_plotting_module_loads_without_scikit_learn():
    """scikit-learn costs 1.6 s; only drawing a confusion matrix needs it."""
    imports = "\n".join(
        f"import kerasformer.plots.{name}"
        for name in ("confusion_matrix", "training_history", "entities", "figures")
    )
    assert loaded_after(imports, ("sklearn", "matplotlib")) == ["matplotlib"]
