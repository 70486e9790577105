"""--fresh keeps the old run until the new one works; run lock; umask; output path checks."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from cppdb.config import load_config
from cppdb.errors import BadInputError, OutputPathError, RunStateError
from cppdb.io import check_output_file, check_run_dir, write_parquet_atomic
from cppdb.run import RunDir


def _finished_run(root: Path, value: int) -> RunDir:
    run = RunDir(root, load_config(overrides={"rank.seed": value}), command="t")
    with run.stage("one") as st:
        st.write_parquet("a.parquet", pl.DataFrame({"x": [value]}))
    run.finish()
    return run


def test_fresh_failing_before_any_stage_puts_the_old_run_back(tmp_path):
    _finished_run(tmp_path / "r", 1)
    run = RunDir(tmp_path / "r", load_config(overrides={"rank.seed": 2}), command="t", fresh=True)
    with pytest.raises(BadInputError):
        with run.stage("one"):
            raise BadInputError("bad input found by the first stage")
    assert pl.read_parquet(tmp_path / "r" / "a.parquet")["x"].to_list() == [1]
    assert not (tmp_path / "r.prev").exists()
    assert RunDir(tmp_path / "r", load_config(overrides={"rank.seed": 1}), command="t"
                  ).is_done("one")                 # the old run resumes as it was


def test_fresh_success_removes_the_old_run(tmp_path):
    _finished_run(tmp_path / "r", 1)
    run = RunDir(tmp_path / "r", load_config(overrides={"rank.seed": 2}), command="t", fresh=True)
    assert (tmp_path / "r.prev" / "a.parquet").exists()      # aside while the new run works
    with run.stage("one") as st:
        st.write_parquet("a.parquet", pl.DataFrame({"x": [2]}))
    run.finish()
    assert not (tmp_path / "r.prev").exists()
    assert pl.read_parquet(tmp_path / "r" / "a.parquet")["x"].to_list() == [2]


def test_a_second_writer_is_refused(tmp_path):
    run = RunDir(tmp_path / "r", load_config(), command="t")
    code = ("import sys; from cppdb.run import RunDir; from cppdb.config import load_config\n"
            "from cppdb.errors import RunStateError\n"
            f"try: RunDir({str(tmp_path / 'r')!r}, load_config(), command='t')\n"
            "except RunStateError as e: print(e.code); sys.exit(3)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert (done.returncode, done.stdout.strip()) == (3, "E400"), done.stderr
    run.finish()                                   # released: now it can be opened
    RunDir(tmp_path / "r", load_config(), command="t").finish()


def test_outputs_honour_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        write_parquet_atomic(tmp_path / "a.parquet", pl.DataFrame({"x": [1]}))
    finally:
        os.umask(old)
    assert (tmp_path / "a.parquet").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("make, check", [
    (lambda p: p.mkdir(), "file_is_dir"),                       # -o DIR for a file output
    (lambda p: p.write_text("x"), "run_is_file"),               # -o FILE for a run directory
    (lambda p: (p.mkdir(), (p / "notes.txt").write_text("x")), "foreign_dir"),
    (lambda p: (p.parent / "f").write_text("x"), "under_a_file"),
    (lambda p: None, "unwritable"),
])
def test_bad_output_paths_fail_before_work(tmp_path, make, check):
    path = tmp_path / "out"
    if check == "under_a_file":
        make(path)
        path = tmp_path / "f" / "out"
    elif check == "unwritable":
        path = Path("/proc/cppdb-test/out")
    else:
        make(path)
    with pytest.raises(OutputPathError) as err:
        if check in ("run_is_file", "foreign_dir"):
            check_run_dir(path)
        else:
            check_output_file(path)
    assert err.value.code == "E500"


@pytest.mark.parametrize("ok", [True, False])
def test_output_checks_must_not_fire_on_good_paths(tmp_path, ok):
    run_dir = tmp_path / "run"
    if ok:                                           # an existing run directory is fine
        RunDir(run_dir, load_config(), command="t").finish()
    assert check_run_dir(run_dir) == run_dir
    assert check_output_file(tmp_path / "new" / "deep" / "x.tsv").name == "x.tsv"



def test_a_run_resumes_after_an_unread_section_changed_but_not_a_read_one(tmp_path):
    """Fingerprints cover the sections the command reads (``scope``); a run made before the
    scope existed (fingerprint over every section) still resumes when those are unchanged."""
    scope = ("annotate",)
    run = RunDir(tmp_path / "r", load_config(overrides={"rank.seed": 1}), command="t")
    with run.stage("one") as st:                 # a run whose fingerprint covers everything
        st.write_parquet("a.parquet", pl.DataFrame({"x": [1]}))
    run.finish()
    upgraded = load_config(overrides={"rank.seed": 2})            # a section it never reads
    again = RunDir(tmp_path / "r", upgraded, command="t", scope=scope)
    assert again.is_done("one")
    again.finish()
    RunDir(tmp_path / "r", upgraded, command="t").finish()     # every section: unchanged
    with pytest.raises(RunStateError):                           # a command reading every
        RunDir(tmp_path / "r", load_config(overrides={"rank.seed": 3}), command="t")  # section
    changed = load_config(overrides={"rank.seed": 2, "annotate.max_chars": 77})
    with pytest.raises(RunStateError):
        RunDir(tmp_path / "r", changed, command="t", scope=scope)
