"""Configuration: packaged defaults, a user TOML file, then ``--set key=value`` overrides.

Each section's defaults live in ``cppdb/defaults/<section>.toml`` so that every stage owns
its own settings.  Unknown sections or keys are errors (listing what does exist): a typo must
never silently fall back to a default.
"""
from __future__ import annotations

import copy
import json
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from cppdb.errors import ConfigError


def _load_defaults() -> dict[str, dict[str, Any]]:
    sections: dict[str, dict[str, Any]] = {}
    for entry in sorted(resources.files("cppdb.defaults").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            sections[entry.name[: -len(".toml")]] = tomllib.loads(entry.read_text("utf-8"))
    return sections


def _parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _merge(base: dict[str, Any], override: dict[str, Any], where: str) -> None:
    for key, value in override.items():
        if key not in base:
            known = ", ".join(sorted(base)) or "(none)"
            raise ConfigError(
                f"unknown setting '{where}{key}'",
                hint=f"known settings under '{where or 'top level'}': {known}",
            )
        if isinstance(base[key], dict) and isinstance(value, dict):
            _merge(base[key], value, f"{where}{key}.")
        else:
            base[key] = value


@dataclass(frozen=True)
class Config:
    """The effective configuration of one run, as nested plain values."""

    data: dict[str, Any] = field(default_factory=dict)

    def section(self, name: str) -> dict[str, Any]:
        if name not in self.data:
            raise ConfigError(f"unknown config section '{name}'",
                              hint=f"sections: {', '.join(sorted(self.data))}")
        return copy.deepcopy(self.data[name])

    def get(self, dotted: str) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                raise ConfigError(f"unknown setting '{dotted}'")
            node = node[part]
        return copy.deepcopy(node)

    def with_overrides(self, overrides: dict[str, Any] | list[str] | None) -> "Config":
        """Return a copy with ``{"a.b": v}`` or ``["a.b=v", ...]`` applied."""
        if not overrides:
            return self
        pairs: list[tuple[str, Any]] = []
        if isinstance(overrides, dict):
            pairs = list(overrides.items())
        else:
            for item in overrides:
                if "=" not in item:
                    raise ConfigError(f"override '{item}' is not of the form section.key=value")
                key, raw = item.split("=", 1)
                pairs.append((key.strip(), _parse_value(raw.strip())))
        data = copy.deepcopy(self.data)
        for dotted, value in pairs:
            nested: dict[str, Any] = {}
            node = nested
            parts = dotted.split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = value
            _merge(data, nested, "")
        return Config(data)

    def to_toml(self) -> str:
        """The configuration as TOML that ``load_config`` reads back unchanged."""
        lines: list[str] = []
        for name in sorted(self.data):
            _toml_table(lines, name, self.data[name])
        return "\n".join(lines)


def _toml_value(value: Any) -> str:
    if value is None:
        raise ConfigError("a setting is None, which TOML cannot express")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _toml_table(lines: list[str], name: str, table: dict[str, Any]) -> None:
    lines.append(f"[{name}]")
    nested = []
    for key, value in table.items():
        if isinstance(value, dict):
            nested.append((key, value))
        else:
            lines.append(f"{key} = {_toml_value(value)}")
    lines.append("")
    for key, value in nested:
        _toml_table(lines, f"{name}.{key}", value)


def load_config(path: str | Path | None = None,
                overrides: dict[str, Any] | list[str] | None = None) -> Config:
    """Defaults, then the TOML file at ``path`` (if any), then ``overrides``."""
    data = _load_defaults()
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        try:
            user = tomllib.loads(path.read_text("utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
        _merge(data, user, "")
    return Config(data).with_overrides(overrides)
