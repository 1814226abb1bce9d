"""Fixtures the model tests share."""

import pytest


@pytest.fixture(scope="module")
def generator():
    """A tiny untrained language model (tests/helpers/tiny_models.py), as a `TextGenerator`."""
    from tests.helpers.tiny_models import tiny_text_generator

    return tiny_text_generator()
