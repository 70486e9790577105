"""Config, run directories, registry/doctor and the basic commands."""
from __future__ import annotations

import json
import re

import polars as pl
import pytest
from typer.testing import CliRunner

from cppdb.cli import app
from cppdb.config import load_config
from cppdb.errors import ConfigError, RunStateError
from cppdb.io import write_parquet_atomic
from cppdb.registry import CAPABILITIES, backend_class
from cppdb.run import RunDir

runner = CliRunner()


@pytest.mark.parametrize("override, key, expected", [
    (["annotate.batch_size=7"], "annotate.batch_size", 7),
    (["annotate.zh_backend=stanza"], "annotate.zh_backend", "stanza"),
    (["annotate.to_simplified=false"], "annotate.to_simplified", False),
])
def test_overrides_are_typed(override, key, expected):
    assert load_config(None, override).get(key) == expected


def test_unknown_setting_is_an_error_listing_known_ones(tmp_path):
    with pytest.raises(ConfigError, match="unknown setting 'annotate.batchsize'") as info:
        load_config(None, ["annotate.batchsize=3"])
    assert "batch_size" in str(info.value)
    bad = tmp_path / "bad.toml"
    bad.write_text("[nosuch]\nx = 1\n")
    with pytest.raises(ConfigError, match="nosuch"):
        load_config(bad)


def test_config_file_then_overrides(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[annotate]\nbatch_size = 3\nen_backend = "stanza"\n')
    config = load_config(path, ["annotate.batch_size=5"])
    assert config.get("annotate.batch_size") == 5
    assert config.get("annotate.en_backend") == "stanza"


def _compute(start: int, stop: int) -> pl.DataFrame:
    return pl.DataFrame({"id": list(range(start, stop))})


def test_chunked_stage_resumes_without_duplicates(tmp_path):
    config = load_config()
    run = RunDir(tmp_path / "run", config, command="test")
    calls: list[int] = []

    def flaky(start: int, stop: int) -> pl.DataFrame:
        calls.append(start)
        if start == 20:
            raise KeyboardInterrupt  # a kill in the middle of the stage
        return _compute(start, stop)

    with pytest.raises(KeyboardInterrupt):
        with run.stage("numbers") as st:
            run.run_chunked(st, "numbers.parquet", 35, 10, flaky)
    assert run.manifest["stages"]["numbers"]["status"] == "failed"
    assert not run.is_done("numbers")

    resumed = RunDir(tmp_path / "run", config, command="test")
    calls.clear()
    with resumed.stage("numbers") as st:
        resumed.run_chunked(st, "numbers.parquet", 35, 10,
                            lambda a, b: (calls.append(a), _compute(a, b))[1])
    assert calls == [20, 30]  # chunks 0 and 10 were reused
    ids = resumed.read("numbers.parquet")["id"].to_list()
    assert ids == list(range(35))
    assert resumed.is_done("numbers")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["stages"]["numbers"]["rows"]["numbers.parquet"] == 35
    assert not (tmp_path / "run" / "numbers.parquet.parts").exists()


def test_run_dir_refuses_other_config_unless_fresh(tmp_path):
    RunDir(tmp_path / "r", load_config(), command="t")
    other = load_config(None, ["annotate.batch_size=3"])
    with pytest.raises(RunStateError, match="another config"):
        RunDir(tmp_path / "r", other, command="t")
    run = RunDir(tmp_path / "r", other, command="t", fresh=True)
    assert run.manifest["config"]["annotate"]["batch_size"] == 3


def test_atomic_write_leaves_no_partial_file(tmp_path):
    target = tmp_path / "x.parquet"

    class Boom(pl.DataFrame):
        def write_parquet(self, *args, **kwargs):
            raise OSError("disk full")

    with pytest.raises(OSError):
        write_parquet_atomic(target, Boom({"a": [1]}))
    assert list(tmp_path.iterdir()) == []


def test_every_registered_backend_class_exists():
    for capability in CAPABILITIES.values():
        assert capability.default in capability.backends
        for name in capability.backends:
            cls = backend_class(capability.name, name)
            assert cls.name == name, f"{cls} declares name {cls.name!r}"


def test_unknown_backend_lists_choices():
    with pytest.raises(ConfigError, match=re.escape(
            "choose one of: cppdb.jieba.v1 (jieba), cppdb.stanza.v1 (stanza)")):
        backend_class("zh_annotator", "thulac")


def test_doctor_json_lists_every_capability():
    result = runner.invoke(app, ["doctor", "--json"])
    rows = json.loads(result.stdout)
    assert {row["capability"] for row in rows} == set(CAPABILITIES)
    defaults = [row for row in rows if row["default"]]
    assert all(row["usable"] for row in defaults), [r for r in defaults if not r["usable"]]
    unusable = [row for row in rows if not row["usable"]]
    assert all(row["how_to_enable"] for row in unusable)


def test_config_show_prints_effective_values():
    result = runner.invoke(app, ["config", "show", "--set", "annotate.batch_size=9", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["annotate"]["batch_size"] == 9


def test_models_fetch_fails_clearly_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = runner.invoke(app, ["models", "fetch", "opus-mt-zh-en"])
    assert result.exit_code == 2
    assert "E320" in result.output and "align_words.attention.model_dir" in result.output


def test_models_fetch_hints_name_real_settings():
    from cppdb.models import MODELS

    config = load_config()
    for model in MODELS.values():
        config.get(model.config_key)   # raises ConfigError if the hint names a wrong setting


def test_config_show_round_trips_through_toml(tmp_path):
    config = load_config()
    path = tmp_path / "effective.toml"
    path.write_text(config.to_toml(), encoding="utf-8")
    assert load_config(path).data == config.data


def test_missing_optional_package_is_reported_with_the_install_command(monkeypatch):
    import importlib.util

    from cppdb.errors import BackendUnavailableError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "eflomal" else real(name, *a))
    cls = backend_class("word_aligner", "eflomal")
    with pytest.raises(BackendUnavailableError, match="eflomal") as info:
        cls().check()
    assert "cppdb[eflomal]" in info.value.hint


def test_error_messages_are_not_wrapped_at_the_terminal_width(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    deep = tmp_path / ("a-very-long-directory-name-" * 4) / "config.toml"
    result = runner.invoke(app, ["config", "show", "--config", str(deep)])
    assert result.exit_code == 2
    assert f"config file {deep} does not exist" in result.output


def test_streamed_parquet_has_fixed_row_groups_and_the_same_bytes_twice(tmp_path):
    """A LazyFrame sunk from several part files is cut into row groups of ROW_GROUP_ROWS,
    not where the streaming engine's morsels end, so the same rows give the same file."""
    import hashlib

    import pyarrow.parquet as pq

    from cppdb.io import ROW_GROUP_ROWS, write_parquet_atomic

    parts = []
    for k in range(5):
        part = tmp_path / f"part-{k}.parquet"
        pl.DataFrame({"i": pl.int_range(k * 130_001, (k + 1) * 130_001, eager=True),
                      "s": pl.int_range(0, 130_001, eager=True).cast(pl.String)}
                     ).write_parquet(part, row_group_size=7_777)
        parts.append(part)
    digests = []
    for name in ("a.parquet", "b.parquet"):
        out = tmp_path / name
        assert write_parquet_atomic(out, pl.scan_parquet(parts)) == 650_005
        meta = pq.ParquetFile(out).metadata
        sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
        assert sizes == [ROW_GROUP_ROWS, ROW_GROUP_ROWS, 650_005 - 2 * ROW_GROUP_ROWS]
        digests.append(hashlib.sha256(out.read_bytes()).hexdigest())
    assert digests[0] == digests[1]


def test_run_dir_refusal_says_what_changed(tmp_path):
    data = tmp_path / "model.json"
    data.write_text("{}")
    RunDir(tmp_path / "r", load_config(), command="t", inputs=[data], scope=["annotate"])
    data.write_text('{"retrained": true}')
    with pytest.raises(RunStateError, match=r"inputs model\.json"):
        RunDir(tmp_path / "r", load_config(), command="t", inputs=[data], scope=["annotate"])
    other = load_config(None, ["annotate.batch_size=3"])
    with pytest.raises(RunStateError, match=r"settings \[annotate\]; inputs model\.json"):
        RunDir(tmp_path / "r", other, command="t", inputs=[data], scope=["annotate"])
