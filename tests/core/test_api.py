"""The Python API exposes every pipeline as a plain function."""
from __future__ import annotations

import pytest

from cppdb import api


@pytest.mark.parametrize("name", api.__all__)
def test_every_api_name_resolves_to_a_function(name):
    assert callable(getattr(api, name))


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'extract'"):
        api.extract  # noqa: B018
