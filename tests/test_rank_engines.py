"""``rank`` on another engine: the feature and score chunks as tasks of other processes.

The bundled bilingual sample is extracted once; its ``rank`` runs on the local engine and on
an engine whose chunks run in spawned processes (what Spark does, without a JVM: every
argument must pickle, and the workers restore the fitted LM, the unit table and the ranker
from files).  Features and scores must be equal, exactly: the chunks are the same rows, the
LM and units are the driver's, and LightGBM scores each row on its own.  The Spark engine
itself (``local[2]``) is compared in ``tests/test_spark_engine.py``.
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

# several chunks per stage; the sentence encoder is on (its cache is merged from the workers)
OVERRIDES = ["annotate.workers=1", "features.chunk_size=150", "features.workers=1"]
ORDER = [S.TYPE, "lhs", S.SOURCE, S.TARGET]


class SpawnedEngine(Engine):
    """Each chunk in a spawned process (a test double of a distributed engine)."""

    name = "spawned"

    def map_chunks(self, compute: Callable[[int, int], None],
                   chunks: Sequence[tuple[int, int]]) -> None:
        with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
            for future in [pool.submit(compute, a, b) for a, b in chunks]:
                future.result()


@pytest.fixture(scope="module")
def extracted(tmp_path_factory, data_dir) -> Path:
    from cppdb.extractors.bilingual import extract_bilingual

    run = tmp_path_factory.mktemp("rank-engines") / "bilingual"
    extract_bilingual(data_dir / "parallel" / "sample.zh", data_dir / "parallel" / "sample.en",
                      run, load_config(overrides=OVERRIDES))
    return run


def ranked_copy(extracted: Path, root: Path, rank: Callable[[Path], object]) -> Path:
    run = root / "run"
    shutil.copytree(extracted, run)
    rank(run)
    return run / "ranking"


@pytest.fixture(scope="module")
def both(extracted, tmp_path_factory) -> tuple[Path, Path]:
    from cppdb.rank import pipeline

    config = load_config(overrides=OVERRIDES)
    local = ranked_copy(extracted, tmp_path_factory.mktemp("local"),
                        lambda run: pipeline.rank_run(run, config))
    spawned = ranked_copy(extracted, tmp_path_factory.mktemp("spawned"),
                          lambda run: _rank_on(run, config, SpawnedEngine()))
    return local, spawned


def _rank_on(run: Path, config, engine: Engine) -> None:
    from cppdb.rank.pipeline import COMMAND, RANK_DIR, rank_stages
    from cppdb.rank.pairs import pair_table_paths
    from cppdb.run import RunDir
    from cppdb.stages import run_stages

    ranking = RunDir(run / RANK_DIR, config, command=COMMAND, inputs=pair_table_paths(run))
    run_stages(ranking, COMMAND, rank_stages(run, config, None, engine))


def test_features_are_equal_on_both_engines(both):
    local, spawned = (pl.read_parquet(d / "features.parquet") for d in both)
    assert local.height > 150                         # several chunks
    assert {"f_cosine", "f_lm_source", "f_lex_best"} <= set(local.columns)
    assert local.equals(spawned)


def test_scores_and_tiers_are_equal_on_both_engines(both):
    local, spawned = (pl.read_parquet(d / "ranked_pairs.parquet").sort(ORDER) for d in both)
    assert local.height > 0 and local.equals(spawned)
    assert pl.read_parquet(both[0] / "tiers.parquet").equals(
        pl.read_parquet(both[1] / "tiers.parquet"))


def test_the_engine_leaves_no_work_files(both):
    names = {p.name for p in both[1].iterdir()}
    assert not [n for n in names if n.endswith((".parts", ".broadcast"))], names


def test_the_workers_vectors_reach_the_runs_embedding_cache(both):
    from cppdb.features.models import model_texts

    texts = set(model_texts(pl.read_parquet(both[1] / "features.parquet")))
    caches = list(both[1].parent.glob("embeddings-*.parquet"))
    assert len(caches) == 1
    cached = pl.read_parquet(caches[0])["text"]
    assert texts <= set(cached.to_list()) and cached.is_unique().all()
