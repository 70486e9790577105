"""Configuration: packaged defaults, a user TOML file, then ``--set key=value`` overrides.

Each section's defaults live in ``cppdb/defaults/<section>.toml`` so that every stage owns
its own settings.  Unknown sections or keys are errors (listing what does exist): a typo must
never silently fall back to a default.

The schema is the defaults themselves: every setting must have the type of its default (an
int is accepted where the default is a float; a single value where the default is a list is
read as a one-element list), and a number whose default is >= 0 must be >= 0.  Narrower
ranges are declared in ``RANGES`` below — the one place to add them.  Everything is checked
when the configuration is loaded, before any work starts.
"""
from __future__ import annotations

import copy
import dataclasses
import math
import json
import tomllib
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from cppdb.defaults import all_sections
from cppdb.errors import ConfigError
from cppdb.registry import with_aliases


# Explicit ranges (inclusive; None = open), by dotted key.  Everything else: see the docstring.
RANGES: dict[str, tuple[float | None, float | None]] = {
    "align_words.threshold": (0.0, 1.0),
    "align_words.sure_threshold": (0.0, 1.0),
    "align_words.simalign.layer": (None, None),      # negative counts from the top
    "align_words.attention.layer": (None, None),
    "align_words.max_tokens": (1, None),
    "bilingual.max_phrase_len": (1, None),
    "bilingual.max_pattern_len": (1, None),
    "bilingual.max_slots": (1, 2),
    "bilingual.max_per_pivot": (1, None),
    "bilingual.chunk_size": (1, None),
    "bilingual.partition_rows": (1, None),
    "annotate.batch_size": (1, None),
    "annotate.chunk_size": (1, None),
    "annotate.max_chars": (1, None),
    "monolingual.chunk_size": (1, None),
    "monolingual.min_confidence": (0.0, 1.0),
    "monolingual.cue_offset_window": (1, None),
    "monolingual.cue_keep_char_jaccard": (0.0, 1.0),
    "monolingual.min_meaning_margin": (0.0, None),
    "monolingual.meaning_margin_k": (1, None),
    "rank.containment_penalty": (0.0, None),
    "rank.diversity_penalty": (0.0, None),
    "rank.pattern_diversity_penalty": (0.0, None),
    "rank.diversity_target": (0.0, 1.0),
    "rank.min_pivot_product": (0.0, 1.0),
    "rank.synonym_min_pivot_product": (0.0, 1.0),
    "evaluate.max_embedded_pairs": (1, None),
    "evaluate.bootstrap_max_items": (1, None),
    "evaluate.coverage_words": (1, None),
    "evaluate.coverage_examples": (0, None),
    "compression.batch_size": (1, None),
    "compression.min_content_overlap": (0.0, 1.0),
    "embed.batch_size": (1, None),
    "features.chunk_size": (1, None),
    "ocr.threads": (1, None),
    "ocr.rec_batch": (1, 64),
    "ocr.page_det_side": (0, 8192),                  # 0 = full resolution; else >= 320
    "ocr.page_rec_pad": (0.0, 1.0),
}


def _unknown(dotted: str, known: str | None) -> ConfigError:
    return ConfigError(f"unknown setting '{dotted}'", hint=known)


def _type_name(value: Any) -> str:
    return {bool: "a boolean (true/false)", int: "an integer", float: "a number",
            str: "a string", list: "a list", dict: "a table"}.get(type(value), type(value).__name__)


def _check_scalar(key: str, default: Any, value: Any, shown: Any) -> Any:
    """``value`` coerced to the type of ``default`` (int → float only), else a ConfigError."""
    expected = type(default)
    ok = (isinstance(value, expected) and (expected is bool) == isinstance(value, bool)) or (
        expected is float and isinstance(value, int) and not isinstance(value, bool))
    if not ok:
        raise ConfigError(f"setting '{key}' = {shown!r} is {_type_name(value)}, expected "
                          f"{_type_name(default)} (like the default {default!r})",
                          hint=f"e.g. --set {key}={_toml_value(default)}")
    if expected is float:
        value = float(value)
        if not math.isfinite(value):
            raise ConfigError(f"setting '{key}' = {shown!r} is not a finite number",
                              hint=f"the default is {default!r}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        low, high = RANGES.get(key, (0 if default >= 0 else None, None))
        if (low is not None and value < low) or (high is not None and value > high):
            span = f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]"
            raise ConfigError(f"setting '{key}' = {shown!r} is out of range, expected a value "
                              f"in {span}", hint=f"the default is {default!r}")
    return value


def _check(key: str, default: Any, value: Any) -> Any:
    if isinstance(default, dict):
        if not isinstance(value, dict):
            raise ConfigError(f"setting '{key}' = {value!r} is {_type_name(value)}, expected a "
                              "table of settings")
        return {k: _check(f"{key}.{k}", default[k], v) if k in default else v
                for k, v in value.items()}
    if isinstance(default, list):
        items = value if isinstance(value, list) else [value]   # one value = a one-item list
        kinds = {type(d) for d in default}
        if len(kinds) == 1:
            items = [_check_scalar(f"{key}[{i}]", default[0], v, v) for i, v in enumerate(items)]
        return items
    return _check_scalar(key, default, value, value)


def validate(data: dict[str, Any], defaults: dict[str, Any] | None = None) -> dict[str, Any]:
    """``data`` checked against the types and ranges of the defaults (see module docstring)."""
    defaults = defaults if defaults is not None else all_sections()
    return with_aliases({name: _check(name, defaults[name], table) if name in defaults
                         else table for name, table in data.items()})


def _parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _merge(base: dict[str, Any], override: dict[str, Any], where: str) -> None:
    for key, value in override.items():
        if key not in base:
            known = ", ".join(sorted(base)) or "(none)"
            raise _unknown(f"{where}{key}", f"known settings under '{where or 'top level'}': "
                                            f"{known}")
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
                raise _unknown(dotted, None)
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
        return Config(validate(data))

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


Settings = TypeVar("Settings")


def settings_from(cls: type[Settings], source: Mapping[str, Any] | Any) -> Settings:
    """The settings dataclass ``cls`` filled from a loaded section (a table of this module's
    ``Config``) or from another settings object: each field takes the key of its own name, so
    a field is its TOML key and no name is translated on the way.  A field whose type is a
    dataclass is filled from the sub-table of its name; a list becomes a tuple (settings are
    frozen).  Values are not cast: the loader checked them against the defaults.  A field
    with no key of its name is an error (a class and its TOML file disagree); keys without a
    field belong to another stage's settings."""
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for item in dataclasses.fields(cls):
        if not item.init:
            continue
        if isinstance(source, Mapping):
            key = _key_of(item.name, source)
            if key not in source:
                raise ConfigError(f"{cls.__name__}.{item.name} is not a setting of its section",
                                  hint=f"settings there: {', '.join(sorted(source))}")
            value = source[key]
        else:
            value = getattr(source, item.name)
        kind = hints[item.name]
        if dataclasses.is_dataclass(kind) and not dataclasses.is_dataclass(value):
            value = settings_from(kind, value)
        values[item.name] = tuple(value) if isinstance(value, list) else value
    return cls(**values)


def _key_of(name: str, table: Mapping[str, Any]) -> str:
    """The TOML key of field ``name``: the same name, or with ``-`` for ``_`` where only that
    spelling is in the table (a TOML key such as ``simalign-e5`` is no Python name)."""
    dashed = name.replace("_", "-")
    return dashed if name not in table and dashed in table else name


def resolve(cls: type[Settings], config: Config) -> Settings:
    """Settings resolved once, where a command starts: ``cls`` is one section's settings
    (its ``SECTION`` names the section) or a bundle whose every field is named after a
    section and typed by that section's settings class."""
    section = getattr(cls, "SECTION", None)
    if section is not None:
        return settings_from(cls, config.section(section))
    hints = typing.get_type_hints(cls)
    return cls(**{item.name: settings_from(hints[item.name], config.section(item.name))
                  for item in dataclasses.fields(cls)})


def sections_read(cls: type[Settings]) -> tuple[str, ...]:
    """The config sections a settings class (one section, or a bundle of sections) reads."""
    section = getattr(cls, "SECTION", None)
    if section is not None:
        return (section,)
    return tuple(item.name for item in dataclasses.fields(cls))


def load_config(path: str | Path | None = None,
                overrides: dict[str, Any] | list[str] | None = None) -> Config:
    """Defaults, then the TOML file at ``path`` (if any), then ``overrides``."""
    data = all_sections()
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        try:
            user = tomllib.loads(path.read_text("utf-8"))
        except UnicodeDecodeError as exc:
            raise ConfigError(f"config file {path} is not UTF-8 (byte {exc.start}: "
                              f"{exc.object[exc.start:exc.start + 4]!r})",
                              hint="TOML files must be UTF-8; re-save it as UTF-8") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
        _merge(data, user, "")
        data = validate(data)
    return Config(data).with_overrides(overrides)
