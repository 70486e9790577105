"""``rank`` on another engine: the feature and score chunks as tasks of other processes.

The bundled bilingual sample is extracted once; its ``rank`` runs on the local engine, on
Spark (``local[2]``, the session of ``conftest.spark``) and on an engine whose chunks run in
spawned processes (what Spark does, without a JVM: every argument must pickle, and the
workers restore the fitted LM, the unit table and the ranker from files).  Features and
scores must be equal, exactly: the chunks are the same rows, the LM and the units are the
driver's, each string's vector is encoded alone by the same encoder, and LightGBM scores each
row on its own (one thread).
"""
from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import polars as pl
import pytest

from cppdb import schema as S
from cppdb.config import load_config
from cppdb.engine import Engine

pytestmark = pytest.mark.slow          # ranking on three engines

# several chunks per stage; the sentence encoder is on (the workers' caches are merged)
OVERRIDES = ["annotate.workers=1", "features.chunk_size=150", "features.threads=1"]
ORDER = [S.TYPE, "lhs", S.SOURCE, S.TARGET]


class SpawnedEngine(Engine):
    """Each chunk in a spawned process (a test double of a distributed engine); with
    ``fail_after``, the chunks after the first ``fail_after`` fail (a killed run)."""

    name = "spawned"
    remote = True              # the runner ships the chunks (as it does to Spark)

    def __init__(self, fail_after: int | None = None) -> None:
        self.fail_after = fail_after

    def map_chunks(self, compute: Callable[[int, int], None],
                   chunks: Sequence[tuple[int, int]]) -> None:
        todo = list(chunks)[:self.fail_after] if self.fail_after is not None else chunks
        with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
            for future in [pool.submit(compute, a, b) for a, b in todo]:
                future.result()
        if len(todo) < len(chunks):
            raise RuntimeError("injected failure")


@pytest.fixture(scope="module")
def extracted(tmp_path_factory, data_dir) -> Path:
    from cppdb.extractors.bilingual import extract_bilingual

    run = tmp_path_factory.mktemp("rank-engines") / "bilingual"
    extract_bilingual(data_dir / "parallel" / "sample.zh", data_dir / "parallel" / "sample.en",
                      run, load_config(overrides=OVERRIDES))
    return run


def _copy(extracted: Path, root: Path, vectors_of: Path | None = None) -> Path:
    """A copy of the extracted run; with ``vectors_of``, that run's embedding cache too
    (its workers read vectors instead of encoding: cheaper, the same values)."""
    shutil.copytree(extracted, root / "run")
    for cache in (vectors_of.glob("embeddings-*.parquet") if vectors_of else ()):
        shutil.copy(cache, root / "run" / cache.name)
    return root / "run"


def _rank_on(run: Path, engine: Engine) -> Path:
    """``rank_run``'s stages with an engine object (``rank_run`` takes engine names)."""
    from cppdb.config import resolve
    from cppdb.rank.pipeline import COMMAND, RANK_DIR, rank_inputs, rank_stages
    from cppdb.rank.settings import RankRun
    from cppdb.run import RunDir
    from cppdb.stages import run_stages

    config = load_config(overrides=OVERRIDES)
    settings = resolve(RankRun, config)
    ranking = RunDir(run / RANK_DIR, config, command=COMMAND,
                     inputs=rank_inputs(run, settings, None), engine=engine)
    run_stages(ranking, COMMAND, rank_stages(run, settings, None))
    return ranking.root


@pytest.fixture(scope="module")
def local(extracted, tmp_path_factory) -> Path:
    from cppdb.rank.pipeline import rank_run

    run = _copy(extracted, tmp_path_factory.mktemp("local"))
    return rank_run(run, load_config(overrides=OVERRIDES)).ranking_dir


@pytest.fixture(scope="module")
def spawned(extracted, local, tmp_path_factory) -> Path:
    run = _copy(extracted, tmp_path_factory.mktemp("spawned"), vectors_of=local.parent)
    return _rank_on(run, SpawnedEngine())


@pytest.fixture(scope="module")
def on_spark(extracted, tmp_path_factory, spark) -> Path:
    """From an empty embedding cache (the stage fills it before Spark's workers start)."""
    from cppdb.rank.pipeline import rank_run

    run = _copy(extracted, tmp_path_factory.mktemp("spark"))
    return rank_run(run, load_config(overrides=OVERRIDES), engine="spark",
                    spark_session=spark).ranking_dir


ENGINES = ["spawned", "on_spark"]


@pytest.mark.parametrize("engine", ENGINES)
def test_features_are_equal_on_both_engines(request, local, engine):
    want = pl.read_parquet(local / "features.parquet")
    got = pl.read_parquet(request.getfixturevalue(engine) / "features.parquet")
    assert want.height > 2 * 150                      # three chunks
    assert {"f_cosine", "f_lm_source", "f_lex_best"} <= set(want.columns)
    assert want.equals(got)


@pytest.mark.parametrize("engine", ENGINES)
def test_scores_and_tiers_are_equal_on_both_engines(request, local, engine):
    ranking = request.getfixturevalue(engine)
    want, got = (pl.read_parquet(d / "ranked_pairs.parquet").sort(ORDER)
                 for d in (local, ranking))
    assert want.height > 0 and want.equals(got)
    assert pl.read_parquet(local / "tiers.parquet").equals(
        pl.read_parquet(ranking / "tiers.parquet"))


@pytest.mark.parametrize("engine", ENGINES)
def test_the_engine_leaves_no_work_files(request, engine):
    names = {p.name for p in request.getfixturevalue(engine).iterdir()}
    assert not [n for n in names if n.endswith((".parts", ".broadcast"))], names


def test_the_workers_vectors_reach_the_runs_embedding_cache(on_spark):
    from cppdb.features.models import model_texts

    ranking = on_spark
    texts = set(model_texts(pl.read_parquet(ranking / "features.parquet")))
    caches = list(ranking.parent.glob("embeddings-*.parquet"))
    assert len(caches) == 1
    cached = pl.read_parquet(caches[0])["text"]
    assert texts <= set(cached.to_list()) and cached.is_unique().all()


def test_the_spark_ranking_records_its_engine(on_spark):
    import json

    from cppdb.features.models import model_texts

    manifest = json.loads((on_spark / "manifest.json").read_text("utf-8"))
    assert manifest["backends"]["engine"] == {**manifest["backends"]["engine"],
                                             "name": "spark", "master": "local[2]"}
    # the stage encodes every distinct string before the chunks go out (a vector must not
    # depend on the chunk that met it first): Spark's workers only read the run's cache
    assert manifest["stages"]["features"]["notes"]["embedding_cache_added_by_workers"] == 0
    cached = pl.read_parquet(next(on_spark.parent.glob("embeddings-*.parquet")))
    strings = model_texts(pl.read_parquet(on_spark / "candidates.parquet"))
    assert set(strings) <= set(cached["text"])


def test_a_failed_ranking_resumes_from_its_parts_on_another_engine(extracted, tmp_path,
                                                                   local, spark):
    """One feature chunk is done when the run fails; Spark computes only the others."""
    from cppdb.rank.pipeline import rank_run

    run = _copy(extracted, tmp_path, vectors_of=local.parent)
    with pytest.raises(RuntimeError, match="injected failure"):
        _rank_on(run, SpawnedEngine(fail_after=1))
    parts = run / "ranking" / "features.parquet.parts"
    assert [p.name for p in parts.iterdir()] == ["part-000000000000.parquet"]
    ranking = rank_run(run, load_config(overrides=OVERRIDES), engine="spark",
                       spark_session=spark).ranking_dir
    assert pl.read_parquet(ranking / "features.parquet").equals(
        pl.read_parquet(local / "features.parquet"))
    assert not parts.exists()                          # assembled, then removed


def test_rank_dry_run_names_the_engine(extracted):
    from typer.testing import CliRunner

    from cppdb.cli import app

    result = CliRunner().invoke(app, ["rank", str(extracted), "--dry-run", "--engine", "spark",
                                      "--spark-master", "local[2]"])
    assert result.exit_code == 0, result.output
    assert "engine: spark (local[2])" in result.output
    assert "score [run; chunked]" in result.output
    local = CliRunner().invoke(app, ["rank", str(extracted), "--dry-run"])
    assert "engine: local" in local.output and "score [run; chunked]" in local.output
