"""TF Serving's numbered layout (`add_serving_version`, ``--serving-version``), and a
classifier export taking TF Serving's request as it is."""

import os
import shutil

import pytest

from kerasformer.errors import KerasformerError
from kerasformer.export.serving_layout import add_serving_version
from tests.helpers.serving import assert_tf_serving_takes, numbered_copy


def files_under(directory):
    return {p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()}


def test_the_version_folder_links_the_saved_model_and_nothing_else(tiny_transformer, tmp_path):
    export = shutil.copytree(tiny_transformer.export_dir, tmp_path / "export")
    before = files_under(export)
    version = add_serving_version(export, 7)
    assert version == export / "7"
    linked = files_under(version)
    saved_model = {
        name for name in before if name.split("/")[0] in ("saved_model.pb", "variables",
                                                          "assets", "fingerprint.pb")
    }  # fmt: skip
    assert "saved_model.pb" in linked and any(n.startswith("variables/") for n in linked)
    assert linked == saved_model
    assert "model.keras" not in linked and "metrics.json" not in linked
    for name in linked:  # linked, so the export takes no more room
        assert os.path.samefile(version / name, export / name)


def test_a_version_added_to_an_export_is_kerasformers_own_to_overwrite(tiny_transformer, tmp_path):
    """`train --overwrite` of an export given a version afterwards replaces it, as it would
    one written with --serving-version, and still refuses a user's own file there."""
    from kerasformer.files.staged_directory import require_replaceable

    export = shutil.copytree(tiny_transformer.export_dir, tmp_path / "export")
    add_serving_version(export, 3)
    require_replaceable(export, True, "--export-dir", "classifier")  # not refused
    (export / "3" / "notes.txt").write_text("mine")
    with pytest.raises(KerasformerError, match="notes.txt"):
        require_replaceable(export, True, "--export-dir", "classifier")


@pytest.mark.parametrize("version", [0, -1, 1.5, True, "1", 2**63])
def test_a_version_tf_serving_would_not_read_is_refused(version, tmp_path):
    with pytest.raises(KerasformerError, match="serving_version must be a whole number"):
        add_serving_version(tmp_path, version)


def test_a_version_already_there_or_no_saved_model_is_refused(tiny_transformer, tmp_path):
    served = numbered_copy(tiny_transformer.export_dir, tmp_path)
    with pytest.raises(KerasformerError, match="already exists; choose another"):
        add_serving_version(served.parent, 1)
    with pytest.raises(KerasformerError, match="holds no saved_model.pb"):
        add_serving_version(tmp_path / "empty", 1)


def test_the_training_config_refuses_a_bad_serving_version():
    from kerasformer.training import TrainingConfig

    with pytest.raises(KerasformerError, match="serving_version must be a whole number"):
        TrainingConfig(serving_version=0).validate()


@pytest.mark.slow
def test_tf_serving_takes_the_classifier_export_as_it_is(tiny_transformer, tmp_path):
    # The README's REST body: a semicolon and an empty text too.
    body = {"instances": ["team goal season", "shares; profit market", ""]}
    served = assert_tf_serving_takes(
        numbered_copy(tiny_transformer.export_dir, tmp_path), body, tmp_path
    )
    assert set(served) == {"probabilities", "predicted_class", "known_tokens"}
    assert served["probabilities"].shape[0] == 3
