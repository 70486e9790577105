"""The base install is complete: every README command runs on the bundled data in a venv that
holds only what `pip install -e .` installs (no extras), and an optional backend that is missing
there is a coded error naming the extra, never a traceback.

The venv is linked from this test environment's installed packages (tests/base_venv.py), so it
needs no network. The must-fire case rebuilds it from the dependency list as it was before
pyarrow became a base dependency and shows that the annotate stage then fails.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests import base_venv

REPO = base_venv.REPO
SMOKE = REPO / ".ci" / "smoke_readme.py"
#: packages the extras bring that a default path must never need
EXTRA_ONLY = {"transformers", "pyspark", "pandas", "datasets", "stanza", "simalign",
              "sentence-transformers", "eflomal", "pytest", "hypothesis"}
pytestmark = pytest.mark.slow


def _smoke(venv, work, *only: str) -> subprocess.CompletedProcess:
    args = [sys.executable, str(SMOKE), "--venv", str(venv), "--work", str(work)]
    if only:
        args += ["--only", ",".join(only)]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=1500)


@pytest.fixture(scope="module")
def base_env(tmp_path_factory):
    venv = tmp_path_factory.mktemp("base") / "venv"
    base_venv.build(venv)
    return venv


def test_base_venv_has_no_extra(base_env):
    names = base_venv.installed_names(base_env / "bin" / "python")
    assert {"polars", "pyarrow", "jieba", "spacy", "duckdb", "torch", "cppdb"} <= names
    assert not names & EXTRA_ONLY, names & EXTRA_ONLY


@pytest.mark.slow
def test_every_readme_command_runs_on_the_base_install(base_env, tmp_path):
    result = _smoke(base_env, tmp_path / "smoke")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "0 failed" in result.stdout and "FAIL" not in result.stdout


@pytest.mark.parametrize("args, extra", [
    (["extract-bilingual", "--engine", "spark"], "cppdb[spark]"),
    (["annotate", "--set", "annotate.zh_backend=stanza"], "cppdb[stanza]"),
])
def test_a_missing_extra_is_a_coded_error(base_env, tmp_path, args, extra):
    data = REPO / "data" / "parallel"
    command = [str(base_env / "bin" / "python"), "-m", "cppdb.cli", args[0],
               "--zh", str(data / "sample.zh"), "--en", str(data / "sample.en"),
               "-o", str(tmp_path / "run"), *args[1:]]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": ""})
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "[E300]" in output and extra in output and "Traceback" not in output, output


def test_must_fire_a_default_path_import_outside_the_base_list(tmp_path):
    """The dependency list before the fix (pyarrow only in the [spark] extra): the guard sees
    the annotate stage fail exactly as `make demo` did on a fresh machine."""
    old = [r for r in base_venv.base_requirements() if not r.startswith("pyarrow")]
    assert len(old) == len(base_venv.base_requirements()) - 1
    venv = tmp_path / "old-venv"
    base_venv.build(venv, old)
    assert "pyarrow" not in base_venv.installed_names(venv / "bin" / "python")
    result = _smoke(venv, tmp_path / "smoke", "annotate")
    assert result.returncode == 1, result.stdout
    assert "FAIL annotate" in result.stdout and "No module named 'pyarrow'" in result.stdout
