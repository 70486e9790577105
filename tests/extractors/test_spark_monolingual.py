"""Engine parity for ``extract-monolingual``: the bundled story (as text and as subtitles, the
demo's first two cases) through the local and the Spark engine (``local[2]``).

On Spark every chunk of document pairs is a task calling the align stage's own per-chunk
function (``cppdb.extractors.monolingual_align``), which reads its units from the run
directory, fits the char-lsa encoder per document pair and writes its part; the other
stages run on the driver either way.  The alignment is deterministic (a seeded RNG per
document pair, one BLAS thread, the same numpy/numba code in the Python worker), so the
bead and pair tables must be equal cell for cell, in the same order.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from cppdb import schema
from cppdb.config import load_config, resolve
from cppdb.extractors.monolingual import extract_monolingual

pytestmark = pytest.mark.slow          # a local Spark session and the pipelines twice

CONFIG = {"monolingual.chunk_size": 1}     # one document pair per Spark task
TABLES = ("beads.parquet", "sentence_pairs.parquet", "low_confidence_pairs.parquet",
          "entities.parquet")
CASES = ("text", "subtitles")
LATER_STAGES = ("align", "entities", "pairs")


def _versions(case: str, data_dir: Path, work: Path) -> list[Path]:
    if case == "text":
        return [data_dir / "story" / "version_a", data_dir / "story" / "version_b"]
    dirs = [work / "subs_a", work / "subs_b"]        # one track per version, as the demo
    for target, source in zip(dirs, ("version_a/episode01.srt", "version_b/ep1.srt")):
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(data_dir / "subtitles" / source, target)
    return dirs


@pytest.fixture(scope="module")
def runs(tmp_path_factory, data_dir, spark) -> dict[str, tuple[Path, Path, list[Path]]]:
    """Per case: the local run, the Spark run (both from scratch), and the version dirs."""
    root = tmp_path_factory.mktemp("mono-engines")
    config = load_config(overrides=CONFIG)
    out = {}
    for case in CASES:
        dirs = _versions(case, data_dir, root / case)
        local = extract_monolingual(dirs, root / case / "local", config).run_dir
        remote = extract_monolingual(dirs, root / case / "spark", config, engine="spark",
                                     spark_session=spark).run_dir
        out[case] = (local, remote, dirs)
    return out


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("case", CASES)
def test_both_engines_write_the_same_table(runs, case, table):
    local, remote = (pl.read_parquet(run / table) for run in runs[case][:2])
    if table in ("beads.parquet", "sentence_pairs.parquet"):
        assert local.height > 10
    assert local.schema == remote.schema
    assert local.equals(remote)


@pytest.mark.parametrize("case", CASES)
def test_the_spark_run_records_its_engine_and_the_same_notes(runs, case):
    local, remote = (json.loads((run / "manifest.json").read_text("utf-8"))
                     for run in runs[case][:2])
    assert remote["status"] == "done"
    engine = remote["backends"]["engine"]
    assert (engine["name"], engine["master"]) == ("spark", "local[2]")
    assert local["backends"]["engine"]["name"] == "local"
    assert remote["stages"]["align"]["notes"] == local["stages"]["align"]["notes"]
    assert remote["stages"]["align"]["rows"] == local["stages"]["align"]["rows"]
    assert remote["backends"]["sentence_encoder"]["name"] == "char-lsa"
    assert not list(runs[case][1].glob("*.parts"))


def _reopen_before_align(source: Path, target: Path) -> None:
    """A copy of a finished run with the align stage and everything after it undone."""
    shutil.copytree(source, target)
    manifest = json.loads((target / "manifest.json").read_text("utf-8"))
    for stage in LATER_STAGES:
        for artifact in manifest["stages"].pop(stage)["outputs"]:
            (target / artifact).unlink()
    (target / "manifest.json").write_text(json.dumps(manifest), "utf-8")


def test_spark_resumes_from_the_parts_on_disk(runs, tmp_path, spark, monkeypatch):
    """A part already on disk is not recomputed by the Spark engine (here marked by a
    changed cost, so a recomputation would show); the missing ones are, by Spark tasks, not
    by the driver."""
    from cppdb.extractors import monolingual
    from cppdb.extractors.monolingual import align_job, monolingual_inputs
    from cppdb.extractors.monolingual_align import align_chunk
    from cppdb.extractors.settings import MonolingualRun
    from cppdb.io import write_parquet_atomic
    from cppdb.run import RunDir, part_path

    local, _, dirs = runs["text"]
    out = tmp_path / "resumed"
    _reopen_before_align(local, out)
    config = load_config(overrides=CONFIG)
    run = RunDir(out, config, command="extract-monolingual",
                 inputs=monolingual_inputs(dirs, config, None))
    job = align_job(run, resolve(MonolingualRun, config))
    run.finish("failed")                                # as a killed run leaves it
    Path(job.notes_parts).mkdir()
    first = align_chunk(job, 0, 1).with_columns(pl.col("cost") + 1000.0)
    write_parquet_atomic(part_path(Path(job.beads_parts), 0), first)
    on_driver: list[int] = []

    def counted(job, start, stop):      # a copy of `on_driver` travels with a Spark task
        on_driver.append(start)
        return align_chunk(job, start, stop)

    monkeypatch.setattr(monolingual, "align_chunk", counted)
    extract_monolingual(dirs, out, config, engine="spark", spark_session=spark)
    assert on_driver == []
    want = pl.read_parquet(local / "beads.parquet")
    got = pl.read_parquet(out / "beads.parquet")
    marked = pl.all_horizontal(pl.col(c).eq_missing(first[c][0]) for c in schema.SRC_DOC)
    assert got.filter(marked)["cost"].equals(want.filter(marked)["cost"] + 1000.0)
    assert got.filter(~marked).equals(want.filter(~marked)) and want.filter(~marked).height


@pytest.mark.parametrize("options, shown", [
    ([], "engine: local"),
    (["--engine", "spark", "--spark-master", "local[2]"], "engine: spark (local[2])"),
])
def test_the_plan_names_the_engine(data_dir, tmp_path, options, shown):
    from cppdb.cli import app

    result = CliRunner().invoke(app, [
        "extract-monolingual", str(data_dir / "story" / "version_a"),
        str(data_dir / "story" / "version_b"), "-o", str(tmp_path / "run"), "--dry-run",
        *options])
    assert result.exit_code == 0, result.output
    assert shown in result.output and not (tmp_path / "run").exists()

