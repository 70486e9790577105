"""Versioned backend names (``cppdb.thot.v1``) and their aliases (``thot``)."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cppdb.cli import app
from cppdb.config import load_config
from cppdb.errors import ConfigError
from cppdb.registry import (BACKEND_SETTINGS, CAPABILITIES, alias_of, backend_class,
                            create_backend, versioned)


@pytest.mark.parametrize("capability, name, alias", [
    ("word_aligner", "cppdb.thot.v1", "thot"),
    ("word_aligner", "thot", "thot"),                          # the alias still works
    ("word_aligner", "cppdb.simalign-e5.v1", "simalign-e5"),
    ("sentence_encoder", "cppdb.e5-tokens.v1", "e5-tokens"),
    ("token_encoder", "cppdb.e5-tokens.v1", "e5-tokens"),      # one class, two capabilities
    ("ud_parser", "cppdb.udchinese.v1", "udchinese"),
])
def test_versioned_names_and_aliases_resolve(capability, name, alias):
    assert alias_of(capability, name) == alias
    assert backend_class(capability, name) is backend_class(capability, alias)


@pytest.mark.parametrize("capability, name", [
    ("word_aligner", "cppdb.thot.v2"),      # no such version
    ("word_aligner", "thot.v1"),            # not namespaced
    ("word_aligner", "cppdb.thot"),         # no version
    ("zh_annotator", "cppdb.thot.v1"),      # a backend of another capability
    ("word_aligner", "Thot"),
])
def test_names_that_must_not_resolve(capability, name):
    with pytest.raises(ConfigError, match=f"unknown {capability} backend '{name}'"):
        alias_of(capability, name)


def test_every_backend_is_registered_once_per_version():
    for capability in CAPABILITIES.values():
        assert set(capability.registered) == {versioned(a) for a in capability.backends}
        assert all(name.startswith("cppdb.") and name.endswith(".v1")
                   for name in capability.registered)


def test_describe_records_the_versioned_name():
    info = create_backend("zh_annotator", "cppdb.jieba.v1").describe()
    assert (info["name"], info["registered"]) == ("jieba", "cppdb.jieba.v1")


@pytest.mark.parametrize("key, given, read", [
    ("annotate.zh_backend", "cppdb.jieba.v1", "jieba"),
    ("annotate.zh_backend", "jieba", "jieba"),
    ("annotate.zh_phrases", "auto", "auto"),                   # not a backend: untouched
    ("features.language_model", "none", "none"),
    ("features.language_model", "cppdb.char-ngram.v1", "char-ngram"),
    ("compression.parser", "cppdb.stanza.v1", "stanza"),
    ("align_words.aligners", ["cppdb.thot.v1", "dictionary"], ["thot", "dictionary"]),
    ("ocr.engine", "cppdb.rapidocr.v9", "cppdb.rapidocr.v9"),  # unknown: left for the error
])
def test_config_reads_versioned_names_as_aliases(key, given, read):
    section, name = key.split(".")
    assert load_config(overrides={key: given}).section(section)[name] == read


def test_backend_settings_exist_in_the_defaults():
    config = load_config()
    for section, key in BACKEND_SETTINGS:
        assert key in config.section(section), f"{section}.{key}"


def test_doctor_shows_versioned_names_and_aliases():
    runner = CliRunner()
    rows = json.loads(runner.invoke(app, ["doctor", "--json"]).stdout)
    thot = next(r for r in rows if r["capability"] == "word_aligner" and r["alias"] == "thot")
    assert thot["backend"] == "cppdb.thot.v1" and thot["default"]
    assert all(r["backend"] == versioned(r["alias"]) for r in rows)
    table = runner.invoke(app, ["doctor"]).stdout
    assert "cppdb.thot.v1" in table and "alias" in table


@pytest.mark.parametrize("name", ["local", "cppdb.local.v1"])
def test_engine_accepts_the_versioned_name(name):
    from cppdb.engine import make_engine

    assert make_engine(name).name == "local"
