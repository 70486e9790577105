"""The packaged defaults: one TOML file per config section, the one place a default is written.

``config.load_config`` starts from :func:`all_sections`; settings dataclasses and backend
constructors take their keyword defaults from :func:`toml_defaults`, so that a run built from
Python without a configuration gets the product's defaults without a second copy of them
(``tests/project/test_settings_defaults.py`` guards the few still written in Python).
"""
from __future__ import annotations

import copy
import tomllib
from collections.abc import Mapping
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any


@cache
def _parsed() -> dict[str, dict[str, Any]]:
    sections: dict[str, dict[str, Any]] = {}
    for entry in sorted(resources.files(__name__).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            sections[entry.name[: -len(".toml")]] = tomllib.loads(entry.read_text("utf-8"))
    return sections


def all_sections() -> dict[str, dict[str, Any]]:
    """Every section's defaults, as a fresh copy the caller may change."""
    return copy.deepcopy(_parsed())


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


@cache
def toml_defaults(path: str) -> Mapping[str, Any]:
    """The defaults of the section ``path`` (``"rank"``, or ``"align_words.thot"`` for a
    sub-table), read-only: lists as tuples, since a dataclass field or keyword default must
    not be a shared mutable list.  An unknown section or key is a KeyError at import time."""
    head, *rest = path.split(".", 1)
    node: Any = _parsed()[head]
    for part in rest:
        node = node[part]
    return _frozen(node)
