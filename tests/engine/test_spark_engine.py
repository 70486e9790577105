"""Engine parity: the bundled sample through the local and the Spark engine (``local[2]``).

Every stage runs on each engine: annotation chunks and extract chunks as Spark tasks, word
alignment on the driver (full training: one global model) or, with
``align_words.train_sample``, trained on the driver and decoded by tasks with the broadcast
model; the pivot in Spark SQL.  Everything is deterministic (the sample is drawn with a
seed, the trained model is the same on every engine), so the comparison is exact; the pair
tables are compared in one sort order because the Spark pivot's partitions come back in any
order before the final sort.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import polars as pl
import pytest

from cppdb import schema as S
from cppdb.config import load_config
from cppdb.extractors.bilingual import extract_bilingual

pytestmark = pytest.mark.slow          # a local Spark session and the pipelines twice

CONFIG = {"bilingual.chunk_size": 100, "annotate.workers": 1, "bilingual.workers": 1,
          "annotate.chunk_size": 120}
SAMPLED = {**CONFIG, "align_words.train_sample": 150}
TABLES = ("phrase_occurrences.parquet", "phrase_pairs.parquet", "pattern_pairs.parquet")
PAIR_ORDER = (["lhs", S.SOURCE, S.TARGET], [False, False, False])


@pytest.fixture(scope="module")
def runs(tmp_path_factory, data_dir, spark) -> tuple[Path, Path]:
    """The sample through the local engine and, from the same input, through Spark."""
    root = tmp_path_factory.mktemp("engines")
    zh, en = data_dir / "parallel" / "sample.zh", data_dir / "parallel" / "sample.en"
    config = load_config(overrides=CONFIG)
    local = extract_bilingual(zh, en, root / "local", config).run_dir
    remote = extract_bilingual(zh, en, root / "spark", config, engine="spark",
                               spark_session=spark).run_dir
    return local, remote


@pytest.fixture(scope="module")
def sampled_runs(tmp_path_factory, data_dir, spark) -> tuple[Path, Path]:
    """Both engines with the aligner trained on a seeded sample (Spark: broadcast model)."""
    root = tmp_path_factory.mktemp("sampled")
    zh, en = data_dir / "parallel" / "sample.zh", data_dir / "parallel" / "sample.en"
    config = load_config(overrides=SAMPLED)
    return (extract_bilingual(zh, en, root / "local", config).run_dir,
            extract_bilingual(zh, en, root / "spark", config, engine="spark",
                              spark_session=spark).run_dir)


def test_annotation_is_the_same_on_both_engines(runs):
    local, remote = (pl.read_parquet(run / "annotations.parquet") for run in runs)
    assert local.height > 200 and local.equals(remote)
    notes = json.loads((runs[1] / "manifest.json").read_text("utf-8"))["stages"]["annotate"]
    assert notes["notes"]["workers"] == "spark"
    assert not (runs[1] / ".annotate-input.parquet").exists()    # the staged input is removed


@pytest.mark.parametrize("table", ["alignment.parquet", "lex_en_given_zh.parquet", *TABLES])
def test_a_sampled_alignment_is_the_same_on_both_engines(sampled_runs, table):
    local, remote = (pl.read_parquet(run / table) for run in sampled_runs)
    assert local.height > 0
    if table in TABLES[1:]:
        local, remote = (f.sort(*PAIR_ORDER[:1]) for f in (local, remote))
    assert local.equals(remote)
    manifest = json.loads((sampled_runs[1] / "manifest.json").read_text("utf-8"))
    assert manifest["stages"]["align"]["notes"]["train_sample"]["rows"] == 150


@pytest.mark.parametrize("table", TABLES)
def test_both_engines_write_the_same_table(runs, table):
    local, remote = (pl.read_parquet(run / table) for run in runs)
    assert local.height > 0
    assert local.schema == remote.schema
    if table != "phrase_occurrences.parquet":    # occurrences keep the input order on both
        local, remote = (f.sort(*PAIR_ORDER[:1], descending=PAIR_ORDER[1]) for f in
                         (local, remote))
    assert local.equals(remote)


def test_the_spark_run_records_its_engine(runs):
    local, manifest = (json.loads((run / "manifest.json").read_text("utf-8")) for run in runs)
    # the pruning counts (function-word pivots are pruned by default) agree too
    assert manifest["stages"]["pivot"]["rows"] == local["stages"]["pivot"]["rows"]
    assert manifest["stages"]["pivot"]["rows"]["pruned_phrase_units_function_pivot"] > 0
    assert manifest["status"] == "done"
    assert manifest["backends"]["engine"]["name"] == "spark"
    assert manifest["backends"]["engine"]["master"] == "local[2]"
    assert manifest["stages"]["pivot"]["rows"]["phrase_pairs.parquet"] > 0


def test_rank_scores_the_spark_tables_like_the_local_ones(runs):
    from cppdb.rank.pipeline import RANKED, rank_run

    config = load_config(overrides=["features.embedding=false"])
    scores = [pl.read_parquet(rank_run(run, config).ranking_dir / RANKED)
              .select(S.TYPE, "lhs", S.SOURCE, S.TARGET, "score")
              .sort(S.TYPE, "lhs", S.SOURCE, S.TARGET) for run in runs]
    assert scores[0].height > 0 and scores[0].equals(scores[1])


def test_spark_runs_every_chunk_once(tmp_path, spark):
    """Each chunk is one Spark task calling the stage's function (which writes its part)."""
    from cppdb.engine.spark import SparkEngine

    seen = tmp_path / "seen"
    seen.mkdir()

    def compute(start: int, stop: int) -> None:
        (seen / f"{start}-{stop}").write_text("x", "utf-8")

    SparkEngine(session=spark).map_chunks(compute, [(0, 5), (5, 9), (9, 10)])
    assert sorted(p.name for p in seen.iterdir()) == ["0-5", "5-9", "9-10"]


@pytest.mark.parametrize("name, master, error", [
    ("local", None, None),
    ("spark", "local[2]", None),
    ("local", "local[2]", "--spark-master needs --engine spark"),
    ("flink", None, "unknown engine 'flink'"),
])
def test_engine_choice(name, master, error):
    from cppdb.engine import make_engine
    from cppdb.errors import ConfigError

    if error is None:
        engine = make_engine(name, master=master)
        assert engine.name == name
        return
    with pytest.raises(ConfigError, match=error):
        make_engine(name, master=master)


def test_doctor_has_an_engine_row():
    from cppdb.doctor import doctor_rows

    rows = {r["alias"]: r for r in doctor_rows(load_config()) if r["capability"] == "engine"}
    assert rows["local"]["default"] and rows["local"]["usable"]
    assert rows["spark"]["usable"] and rows["spark"]["version"].startswith("pyspark==")


PRUNING = {
    "no pruning": dict(prune_function_pivots=False),
    "every rule": dict(prune_function_pivots=True, prune_min_p_e_given_f=0.05,
                       prune_min_p_f_given_e=0.05, prune_min_count=2,
                       prune_max_pivots_per_phrase=3, max_per_pivot=5, max_anchors=2),
}


@pytest.mark.parametrize("options", PRUNING.values(), ids=PRUNING)
def test_the_pivot_prunes_alike_on_both_engines(runs, tmp_path, spark, options):
    from cppdb.engine import LocalEngine
    from cppdb.engine.spark import SparkEngine
    from cppdb.extractors.bilingual import pivot_pairs
    from cppdb.extractors.pivot import PivotSettings

    settings = PivotSettings(**options)
    occurrences = runs[0] / "phrase_occurrences.parquet"
    tables, counts = [], []
    for name, engine in (("local", LocalEngine()), ("spark", SparkEngine(session=spark))):
        pruned: dict[str, int] = {}
        parts = pivot_pairs(engine, occurrences, "phrase", tmp_path / name, settings, pruned)
        tables.append(pl.read_parquet(parts).sort(*PAIR_ORDER[:1]))
        counts.append(pruned)
    assert tables[0].height > 0 and tables[0].equals(tables[1])
    assert counts[0] == counts[1]


@pytest.mark.parametrize("master, partitions", [
    ("local[2]", 4), ("local[8]", 16), ("local[3, 2]", 6), ("local", 2),
    ("local-cluster[2,1,1536]", 4), ("local-cluster[3, 2, 2048]", 12),
    # cluster masters keep their own configuration
    ("yarn", None), ("spark://host:7077", None), ("k8s://https://api:6443", None), (None, None),
])
def test_local_masters_get_few_shuffle_partitions(master, partitions):
    from cppdb.engine.spark import local_shuffle_partitions

    assert local_shuffle_partitions(master) == partitions


KILLED_CHILD = """
import os, signal, sys
from pathlib import Path
from cppdb import run as run_module
from cppdb.config import load_config
from cppdb.extractors.bilingual import extract_bilingual
original = run_module.RunDir.stage
def stage(self, name):
    if name == {stage!r}:
        os.kill(os.getpid(), signal.SIGKILL)      # no handler, no finally, no JVM shutdown
    return original(self, name)
run_module.RunDir.stage = stage
extract_bilingual(Path({zh!r}), Path({en!r}), Path({out!r}), load_config(overrides={config!r}),
                  engine="spark", spark_master="local[2]")
"""


@pytest.mark.parametrize("stage, finished_before", [("align", "annotate"), ("pivot", "extract")])
def test_a_killed_spark_run_resumes_to_the_same_tables(runs, tmp_path, data_dir, spark, stage,
                                                       finished_before):
    import signal
    import subprocess

    zh, en = data_dir / "parallel" / "sample.zh", data_dir / "parallel" / "sample.en"
    out = tmp_path / "killed"
    script = KILLED_CHILD.format(stage=stage, zh=str(zh), en=str(en), out=str(out),
                                 config=CONFIG)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    child = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=600)
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    finished = json.loads((out / "manifest.json").read_text("utf-8"))["stages"]
    assert finished[finished_before]["status"] == "done" and stage not in finished
    extract_bilingual(zh, en, out, load_config(overrides=CONFIG), engine="spark",
                      spark_session=spark)                       # resume on Spark
    local = runs[0]
    for table in TABLES:
        want, got = pl.read_parquet(local / table), pl.read_parquet(out / table)
        if table != "phrase_occurrences.parquet":
            want, got = (f.sort(*PAIR_ORDER[:1], descending=PAIR_ORDER[1]) for f in (want, got))
        assert want.equals(got), table
