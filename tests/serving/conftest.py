"""Every serving test reads the same tiny exports, trained once per test run."""

import pytest

from tests.helpers.served import serving_exports


@pytest.fixture(scope="session")
def exports(tmp_path_factory):
    """``{kind: export directory}``: one tiny export of each kind (`tests.helpers.served`)."""
    return serving_exports(tmp_path_factory)
