"""`cppdb doctor`: which backend of every capability is usable here, and how to enable the rest."""
from __future__ import annotations

from typing import Any

from cppdb.config import Config
from cppdb.registry import CAPABILITIES, availability


def doctor_rows(config: Config) -> list[dict[str, Any]]:
    """One row per (capability, backend), defaults first within a capability."""
    rows: list[dict[str, Any]] = []
    for capability in CAPABILITIES.values():
        names = sorted(capability.backends, key=lambda n: (n != capability.default, n))
        for name in names:
            rows.append(availability(capability.name, name, config))
    return rows


def missing_defaults(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Offline defaults that are not usable: these break the out-of-the-box pipelines."""
    return [row for row in rows if row["default"] and not row["usable"]]
