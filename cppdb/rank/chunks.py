"""The per-chunk work of ``rank`` as functions an engine's workers can run.

The features of rows ``[start, stop)`` of ``candidates.parquet`` and the scores of rows
``[start, stop)`` of ``features.parquet``.  The runner (``StageHandle.run_parts`` /
``map_parts``) decides where a chunk runs: in this process the features come from the models
the stage already holds (:func:`feature_rows`) and the scores from :func:`score_part`; an
engine that runs chunks elsewhere (Spark) gets :func:`feature_part` / :func:`score_part` as
tasks, each returned chunk written where the runner then finds it.  They are
module-level functions of a frozen job (paths and settings: it pickles, so
``functools.partial`` binds it) and ``start, stop``.

What a worker process loads it keeps for its next tasks (``lru_cache``, keyed by the
settings and the size and mtime of the files):

* the models of the ``[features]``/``[embed]`` sections (as the driver loads them), with the
  char n-gram LM *restored* from the file the driver wrote after fitting it on the whole
  table's text, and the lexical-weight unit table the driver wrote: every chunk sees the LM
  and units of the local engine, whatever process computes it;
* the ranker JSON of the score stage.

The sentence encoder's embedding cache: a worker reads the run's cache file but saves its
vectors into a file of its own (``embeddings/worker-<host>-<pid>/``), because several processes
saving one file would each overwrite the others' new vectors; the driver merges these files
into the run's cache after the stage (:func:`merge_embedding_caches`).
"""
from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import polars as pl

from cppdb import schema as S
from cppdb.embed.cache import TEXT
from cppdb.embed.settings import EmbedSettings
from cppdb.features.lexical_weights import add_unit_weights
from cppdb.features.models import FeatureModels, build_feature_table, load_feature_models
from cppdb.features.settings import FeatureSettings
from cppdb.io import write_parquet_atomic
from cppdb.rank import exclusion, relations
from cppdb.rank.by_type import load_model
from cppdb.rank.tiers import SCORE


def _stamp(path: str | None) -> tuple[int, int] | None:
    if path is None:
        return None
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns


# -- features -------------------------------------------------------------------------------
def feature_rows(part: pl.DataFrame, models: FeatureModels, units: pl.DataFrame | None,
                 threads: int) -> pl.DataFrame:
    """Every ``f_*`` feature of one chunk of candidates (the LM is fitted already)."""
    frame = build_feature_table(part, models, threads=threads, fit=False)
    return add_unit_weights(frame, units)


@dataclass(frozen=True)
class FeatureJob:
    """What a worker needs to compute feature chunks (paths as strings: they pickle)."""

    candidates: str
    features: FeatureSettings
    embed: EmbedSettings
    cache_dir: str | None             # the run directory (where the embedding cache lives)
    language_model: str | None        # the fitted LM's file (None: nothing fitted to restore)
    units: str | None                 # the unit table (None: the run has no lexical tables)
    shards: str                       # where worker processes save their embedding caches


def feature_part(job: FeatureJob, start: int, stop: int) -> pl.DataFrame:
    """One chunk of the features table, computed on a worker."""
    models, units = _feature_state(job.features, job.embed, job.cache_dir, job.language_model,
                                   _stamp(job.language_model), job.units, _stamp(job.units),
                                   job.shards)
    part = pl.scan_parquet(job.candidates).slice(start, stop - start).collect()
    return feature_rows(part, models, units, job.features.threads)


@lru_cache(maxsize=1)
def _feature_state(features: FeatureSettings, embed: EmbedSettings, cache_dir: str | None,
                   lm_path: str | None, lm_stamp: Any, units_path: str | None,
                   units_stamp: Any, shards: str) -> tuple[FeatureModels, pl.DataFrame | None]:
    models = load_feature_models(features, embed, cache_dir)
    if models.language_model is not None and lm_path is not None:
        models.language_model.restore(lm_path)
    cache = getattr(models.encoder, "cache", None)         # cppdb.features.models._DescribedCache
    if cache is not None and cache.path is not None:
        # read the run's cache (loaded above), save into this process's own file
        worker = f"worker-{socket.gethostname()}-{os.getpid()}"      # unique on a cluster too
        cache.path = Path(shards) / worker / cache.path.name
        cache.path.parent.mkdir(parents=True, exist_ok=True)
    units = pl.read_parquet(units_path) if units_path is not None else None
    return models, units


def merge_embedding_caches(shards: Path, cache_dir: Path) -> int:
    """Fold the workers' cache files into the run's cache files (first vector of a text
    wins: the run's own, then workers in name order); the number of texts added."""
    added = 0
    for name in sorted({p.name for p in shards.glob("worker-*/embeddings-*.parquet")}):
        target = cache_dir / name
        files = ([target] if target.exists() else []) + sorted(shards.glob(f"worker-*/{name}"))
        before = pl.scan_parquet(target).select(pl.len()).collect().item() \
            if target.exists() else 0
        metadata = pl.read_parquet_metadata(files[-1])
        merged = pl.concat([pl.scan_parquet(f) for f in files]).unique(
            TEXT, keep="first", maintain_order=True)
        added += write_parquet_atomic(target, merged.collect(),
                                      metadata={k: v for k, v in metadata.items()
                                                if k == "encoder"}) - before
    return added


# -- scores ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScoreJob:
    """What a worker needs to score chunks of ``features.parquet``."""

    features: str
    model: str                        # ranker.json
    threads: int
    relation_model: str = "none"      # rank.relation_model: "default", "none" or a path
    exclusion: tuple[str, ...] = ()   # rank.exclusion: the evidence kinds that mark Exclusion
    negation_overlap: float = relations.FEATURE_NEGATION_OVERLAP  # rank.exclusion_negation_…


def score_part(job: ScoreJob, start: int, stop: int) -> pl.DataFrame:
    """The scores of one chunk of feature rows (one ``score`` column, in row order), the
    Exclusion evidence of ``job.exclusion`` (``relation_evidence``), and the relation
    classifier's ``relation`` and ``relation_probability`` unless it is "none".  The evidence
    is read once per row: the classifier's features use the same columns when the run's
    negation overlap is the one the classifier learnt."""
    ranker = _ranker(job.model, _stamp(job.model))
    frame = pl.scan_parquet(job.features).slice(start, stop - start).collect()
    scores = pl.DataFrame({SCORE: ranker.predict(frame, job.threads)}, schema={SCORE: pl.Float64})
    needed = frame.height and (job.exclusion or job.relation_model != "none")
    found = exclusion.evidence_columns(frame, job.negation_overlap) if needed else None
    evidence = (exclusion.evidence_text(found, job.exclusion)
                if found is not None and job.exclusion
                else pl.Series(S.RELATION_EVIDENCE, [None] * frame.height, dtype=pl.String))
    if job.relation_model != "none":
        shared = found if job.negation_overlap == relations.FEATURE_NEGATION_OVERLAP else None
        scores = pl.concat([scores, relations.load_model(job.relation_model).label(frame, shared)],
                           how="horizontal")
    return scores.with_columns(evidence.alias(S.RELATION_EVIDENCE))


@lru_cache(maxsize=1)
def _ranker(path: str, stamp: Any) -> Any:
    return load_model(path)
