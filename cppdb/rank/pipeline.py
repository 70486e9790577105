"""The ranking API: ``rank_run``, ``score_pairs``/``score_file`` and ``read_ranked``.

``rank_run(run_dir)`` works in the sub-run ``RUN/ranking/`` (its own manifest, resumable):

1. ``filter``   candidates.parquet (kept), filtered_pairs.parquet (rejected + filter_reason)
2. ``features`` features.parquet: the candidates with every ``f_*`` feature
3. ``train``    ranker.json (model, training summary, importances), training_pairs.parquet
4. ``score``    ranked_pairs.parquet (score, rank, percentile, tier; ``relation``: "Exclusion"
   and its ``relation_evidence`` where :mod:`cppdb.rank.exclusion` finds some, else the
   relation classifier's (:mod:`cppdb.rank.relations`) with ``relation_probability``; the
   pairs of ``rank.demoted_relations`` rank below every other pair of their type), tiers.parquet;
   pruned_pairs.parquet: the pairs of ``rank.pruned_relations`` scored below the best
   ``rank.pruned_below`` of their type, which leave the ranked table before ranks and tiers
"""
from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.config import Config, load_config, resolve, sections_read
from cppdb.engine import make_engine
from cppdb.errors import RunStateError
from cppdb.features.lexical_weights import LEX_FEATURES, run_inputs, run_units
from cppdb.features.pivot_context import PIVOT_CONTEXT, context_inputs, pivot_context
from cppdb.features.models import (
    FeatureModels,
    build_feature_table,
    load_feature_models,
    model_texts,
)
from cppdb.features.table import (
    EVIDENCE_FEATURES,
    FEATURE_DESCRIPTIONS,
    LM_FEATURES,
    model_text,
)
from cppdb.io import write_parquet_atomic, write_text_atomic
from cppdb.progress import progress_bar
from cppdb.rank import exclusion, filters, novelty, tiers, weak_labels
from cppdb.rank.by_type import (BILINGUAL_MODEL, SENTENCE_MODEL, TypedRanker, load_model,
                                resolve_model, shipped_ranker)
from cppdb.rank.chunks import (FeatureJob, ScoreJob, feature_part, feature_rows,
                               merge_embedding_caches, score_part)
from cppdb.rank.pairs import (
    LABEL,
    PAIR_TABLES,
    join_key,
    pair_table_paths,
    read_run_pairs,
    read_tsv_pairs,
    text_pairs,
)
from cppdb.rank.ranker import Ranker, train_ranker, usable_features
from cppdb.rank.relations import model_file as relation_model_file
from cppdb.rank.settings import RankRun
from cppdb.run import RunDir, StageHandle
from cppdb.shipped import model_inputs, shipped_file
from cppdb.stages import (PARTS_SUFFIX, Artifact, External, Plan, Stage, dry_run_notes,
                          plan_stages, run_stages)
from cppdb.text.antonyms import ANTONYM_FILE
from cppdb.text.negation import negation_file

RANK_DIR = S.RANKING_DIR
COMMAND = "rank"
CANDIDATES, REJECTED, FEATURES = "candidates.parquet", S.FILTERED_FILE, S.FEATURES_FILE
MODEL, TRAINING = "ranker.json", "training_pairs.parquet"
RANKED, TIERS, PRUNED = S.RANKED_FILE, S.TIERS_FILE, S.PRUNED_FILE


@dataclass(frozen=True)
class RankSummary:
    ranking_dir: Path
    pairs: int
    rejected: int
    ranked: int
    pruned: int
    model: str
    tiers: pl.DataFrame


def default_model_path() -> Path:
    return shipped_file(SENTENCE_MODEL)


def load_ranker(model: str | Path | None) -> Ranker | TypedRanker:
    """``None``/"default": the shipped models by type (cppdb.rank.by_type); otherwise a
    ranker JSON file."""
    if model is None or str(model) == "default":
        return shipped_ranker()
    return load_model(model)


def _models(settings: RankRun, cache_dir: Path | None) -> FeatureModels:
    return load_feature_models(settings.features, settings.embed, cache_dir)


def _filter_stage(st: StageHandle, run_dir: Path, settings: RankRun) -> None:
    kept, rejected = filters.filter_pairs(read_run_pairs(run_dir),
                                          settings.rank.filter_settings())
    st.write_parquet(REJECTED, rejected)
    for reason in filters.REASONS:
        st.count(f"rejected_{reason}", (rejected[filters.FILTER_REASON] == reason).sum())
    del rejected         # most of a big run's pairs: not held while the context is computed
    # computed here, once over every kept pair (its idf and bags are the run's), so that the
    # feature chunks, wherever the engine runs them, only read it
    st.write_parquet(CANDIDATES, pivot_context(kept, run_dir))


class _LazyModels:
    """The feature models, loaded on first use (once per ``rank_run``); :meth:`forget` makes
    the next use load them again (after workers extended the embedding cache on disk)."""

    def __init__(self, settings: RankRun, run_dir: Path) -> None:
        self.settings, self.run_dir = settings, run_dir
        self._loaded: FeatureModels | None = None

    def __call__(self) -> FeatureModels:
        if self._loaded is None:
            self._loaded = _models(self.settings, self.run_dir)
        return self._loaded

    def forget(self) -> None:
        self._loaded = None


def _features_stage(st: StageHandle, run_dir: Path, models: _LazyModels, settings: RankRun
                    ) -> None:
    """Features chunk by chunk (resumable; memory bounded by the chunk), with the LM fitted
    once on the whole table's text, so the result does not depend on the chunk size."""
    run = st.run
    features = settings.features
    loaded = models()
    for role, info in loaded.describe().items():
        if info:
            run.record_backend(role, info)
    candidates = run.scan(CANDIDATES)
    n_rows = candidates.select(pl.len()).collect().item()
    texts = model_texts(candidates) if n_rows else []
    if loaded.language_model is not None and texts:
        loaded.language_model.fit(texts)
    if loaded.encoder is not None and texts:
        # every distinct string encoded here, once, in one call, and saved to the run's cache
        # where remote chunks read it: a bf16/fp16 vector moves in its last bits with the
        # batch it is computed in, so chunks encoding what they meet first would make the
        # engines and chunk sizes disagree
        loaded.encoder.prepare(texts)
    del texts
    units = run_units(run_dir)

    def compute(start: int, stop: int) -> pl.DataFrame:
        part = candidates.slice(start, stop - start).collect()
        return feature_rows(part, loaded, units, features.threads)

    with progress_bar(n_rows, "features") as advance:
        st.run_parts(FEATURES, n_rows, features.chunk_size, compute,
                     shipped=lambda: _shipped_features(st, run_dir, models, units, settings,
                                                       n_rows), progress=advance)


@contextmanager
def _shipped_features(st: StageHandle, run_dir: Path, models: _LazyModels,
                      units: pl.DataFrame | None, settings: RankRun, n_rows: int
                      ) -> Iterator[Callable[[int, int], pl.DataFrame]]:
    """The feature chunks as picklable tasks (``cppdb.rank.chunks``) for an engine that runs
    them elsewhere; the fitted LM and the unit table reach the workers as files in
    ``features.parquet.broadcast/``, and the embeddings they computed come back after."""
    run, loaded = st.run, models()
    shared = run.path(FEATURES + ".broadcast")
    lm_path, units_path = shared / "language_model.parquet", shared / "lexical_units.parquet"
    saved_lm = bool(n_rows) and loaded.language_model is not None \
        and loaded.language_model.save(lm_path)
    if units is not None:
        write_parquet_atomic(units_path, units)
    job = FeatureJob(str(run.path(CANDIDATES)), settings.features, settings.embed,
                     str(run_dir), str(lm_path) if saved_lm else None,
                     str(units_path) if units is not None else None, str(shared / "embeddings"))
    yield partial(feature_part, job)
    st.note("embedding_cache_added_by_workers",
            merge_embedding_caches(shared / "embeddings", run_dir))
    shutil.rmtree(shared)
    models.forget()            # the train stage reloads the embedding cache the workers grew


def _run_texts(features: pl.DataFrame) -> list[str]:
    both = pl.concat([features.select(model_text(S.SOURCE).alias("t")),
                      features.select(model_text(S.TARGET).alias("t"))])
    return both["t"].unique(maintain_order=True).to_list()


def _label_features(labels: pl.DataFrame, features: pl.DataFrame, models: FeatureModels,
                    settings: RankRun) -> pl.DataFrame:
    """Feature rows of labelled pairs: the run's own row when the pair is in the run, else
    features computed from the text (the LM fitted on the run's text, as for run pairs)."""
    keyed = features.with_columns(join_key(S.SOURCE).alias("_ks"), join_key(S.TARGET).alias("_kt"))
    labels = labels.with_columns(join_key("source").alias("_ks"), join_key("target").alias("_kt"))
    matched = keyed.join(labels.select("_ks", "_kt", LABEL), on=["_ks", "_kt"], how="inner")
    rest = labels.join(matched.select("_ks", "_kt"), on=["_ks", "_kt"], how="anti")
    parts = [matched.drop("_ks", "_kt")]
    if rest.height:
        fresh = text_pairs(rest["source"].to_list(), rest["target"].to_list(),
                           settings.annotate)
        fresh = build_feature_table(fresh, models, fit_texts=_run_texts(features),
                                    threads=settings.features.threads)
        parts.append(fresh.with_columns(rest[LABEL]))
    return pl.concat(parts, how="diagonal_relaxed")


def _weak_features(features: pl.DataFrame, models: FeatureModels, settings: RankRun
                   ) -> pl.DataFrame:
    pairs = weak_labels.weak_label_pairs(features.select(
        [c for c in features.columns if not c.startswith("f_")]), settings.rank.weak)
    return build_feature_table(pairs, models, fit_texts=_run_texts(features),
                               threads=settings.features.threads)


def portable_features() -> list[str]:
    """Features defined the same way for any text pair (what the shipped model uses)."""
    return [f for f in FEATURE_DESCRIPTIONS if f not in EVIDENCE_FEATURES + LM_FEATURES
            and "_pos_" not in f]


def _candidate_features(feature_set: str) -> list[str]:
    if feature_set == "text":
        return [f for f in FEATURE_DESCRIPTIONS if f not in EVIDENCE_FEATURES]
    if feature_set == "portable":
        return portable_features()
    return list(FEATURE_DESCRIPTIONS)           # "all" (RankSettings knows no other)


def _train_stage(st: StageHandle, models: Callable[[], FeatureModels], settings: RankRun,
                 labels: Path | None) -> None:
    run = st.run
    ranker, training, summary = _train(run, models(), settings, labels)
    ranker.save(run.path(MODEL))
    st.count(MODEL, 1)
    st.write_parquet(TRAINING, training)
    st.note("model", summary["source"])
    st.note("model_choice", summary["choice"])


def _train(run: RunDir, models: FeatureModels, settings: RankRun,
           labels: Path | None) -> tuple[Ranker, pl.DataFrame, dict[str, Any]]:
    """The run's ranker: trained on human and/or weak labels, or a pretrained model."""
    rank = settings.rank
    features = run.read(FEATURES)
    model, reason = resolve_model(rank.model, features)
    if labels is None and model != "weak":
        ranker = load_ranker(model)
        training = features.clear().with_columns(pl.lit(0.0).alias(LABEL))
        summary = {"source": f"pretrained model {model}", "choice": reason}
    else:
        parts = []
        if labels is not None:
            parts.append(_label_features(read_tsv_pairs(labels, with_score=True), features,
                                         models, settings).with_columns(
                pl.lit("human").alias(weak_labels.LABEL_KIND)))
        if labels is None or rank.labels_with_weak:
            parts.append(_weak_features(features, models, settings))
        training = pl.concat(parts, how="diagonal_relaxed")
        candidates = _candidate_features(rank.feature_set)
        if labels is None or rank.labels_with_weak:
            # weak labels come from pivot statistics: never train on features made of them
            candidates = weak_labels.independent_features(candidates)
        names = usable_features(training, candidates)
        kinds = training[weak_labels.LABEL_KIND].value_counts().sort(weak_labels.LABEL_KIND).rows()
        summary = {"source": "human labels" if labels else "weak labels",
                   "choice": reason if labels is None else "--labels",
                   "labels_file": str(labels) if labels else None,
                   "label_kinds": {str(k): int(v) for k, v in kinds}}
        ranker = train_ranker(training, training[LABEL].to_numpy(), names,
                              rank.ranker_settings(), summary)
    return ranker, training, summary


def _score_stage(st: StageHandle, settings: RankRun) -> None:
    run = st.run
    scored = _scores(st, settings)
    tier_list = settings.rank.tier_list()
    sameness = settings.rank.novelty_settings()
    scored = _with_relations(scored)
    st.note("exclusion", scored[S.RELATION_EVIDENCE].is_not_null().sum())
    scored, pruned = tiers.prune_unrelated(scored, settings.rank.pruned_relations,
                                     settings.rank.pruned_below)
    st.write_parquet(PRUNED, pruned)
    scored = scored.with_columns(pl.col(S.RELATION).is_in(list(settings.rank.demoted_relations))
                                 .fill_null(False).alias("_demoted"))
    scored, penalties = novelty.penalise_sameness(
        scored, sameness.containment_penalty, sameness.diversity_penalty,
        sameness.diversity_target, sameness.pattern_diversity_penalty,
        sameness.tier_diversity, sameness.max_diversity_penalty, tier_share=tier_list[0].share,
        demoted=scored["_demoted"].to_numpy())
    st.note("diversity_penalty", penalties)
    ranked = tiers.add_ranks(scored, tier_list, last="_demoted").drop("_demoted")
    st.write_parquet(RANKED, ranked)
    st.write_parquet(TIERS, tiers.tier_table(ranked, tier_list))
    shutil.rmtree(run.path(RANKED + PARTS_SUFFIX), ignore_errors=True)


def _with_relations(scored: pl.DataFrame) -> pl.DataFrame:
    """``relation`` = Exclusion where the rule found evidence (``relation_evidence``, from
    the score chunks), else the classifier's relation with its ``relation_probability``
    (null without one)."""
    classified = S.RELATION in scored.columns
    if classified:
        scored = scored.rename({S.RELATION: "_classified"})
    scored = scored.with_columns(
        pl.when(pl.col(S.RELATION_EVIDENCE).is_not_null()).then(pl.lit(exclusion.EXCLUSION))
        .otherwise(pl.lit(None, dtype=pl.String)).alias(S.RELATION))
    if not classified:
        return scored.with_columns(pl.lit(None, dtype=pl.Float64).alias(S.RELATION_PROBABILITY))
    return scored.with_columns(
        pl.when(pl.col(S.RELATION).is_null()).then(pl.col(S.RELATION_PROBABILITY))
        .alias(S.RELATION_PROBABILITY),
        pl.coalesce(S.RELATION, "_classified").alias(S.RELATION)).drop("_classified")


def _scores(st: StageHandle, settings: RankRun) -> pl.DataFrame:
    """The pairs (no ``f_*`` columns) with their scores, predicted chunk by chunk of
    ``features.parquet`` (where the run's engine puts the chunks); the global order (ranks,
    tiers) stays here."""
    run = st.run
    features = run.scan(FEATURES)
    n_rows = features.select(pl.len()).collect().item()
    parts = run.path(RANKED + PARTS_SUFFIX)
    part = partial(score_part, ScoreJob(str(run.path(FEATURES)), str(run.path(MODEL)),
                                        settings.rank.threads, settings.rank.relation_model,
                                        tuple(settings.rank.exclusion),
                                        settings.rank.exclusion_negation_overlap))
    files = st.map_parts(RANKED, n_rows, settings.features.chunk_size, part,
                         shipped=lambda: nullcontext(part))
    scores = pl.read_parquet(files)
    if scores.height != n_rows:
        raise RunStateError(f"the score parts in {parts} hold {scores.height} rows, "
                            f"features.parquet {n_rows}",
                            hint=f"delete {parts} and run `cppdb rank` again")
    keep = [c for c in features.collect_schema().names() if not c.startswith("f_")]
    return features.select(keep).collect().with_columns(scores.get_columns())


def rank_stages(run_dir: Path, settings: RankRun, labels: Path | None) -> list[Stage]:
    """The declared stages of ``rank`` (see the module docstring); models load once, lazily.
    The feature and score chunks go where the run's engine puts them."""
    models = _LazyModels(settings, run_dir)
    tables = External("a pair table of the run", tuple(run_dir / n for n in PAIR_TABLES),
                      any_of=True, hint="run `cppdb extract-bilingual` or "
                                        "`cppdb extract-monolingual` into this directory first")
    lexical = External("the run's lexical tables and occurrences", run_inputs(run_dir),
                       optional=True, effect=f"{', '.join(LEX_FEATURES)} are null (a Pharaoh "
                                             "alignment, or not a bilingual run)")
    train_reads: tuple[Artifact | External, ...] = (Artifact(FEATURES, (S.SOURCE, S.TARGET)),)
    if labels is not None:
        train_reads += (External("the labels file", (labels,)),)
    contexts = External("the run's occurrences and annotations", context_inputs(run_dir),
                        optional=True, effect=f"{PIVOT_CONTEXT} is null (not a bilingual run)")
    return [
        Stage("filter", (tables, contexts), (CANDIDATES, REJECTED),
              lambda st: _filter_stage(st, run_dir, settings),
              doc="drop unusable pairs; the pivot-context evidence of the rest"),
        Stage("features", (Artifact(CANDIDATES, (S.SOURCE, S.TARGET, S.TYPE)), lexical),
              (FEATURES,),
              lambda st: _features_stage(st, run_dir, models, settings), chunked=True,
              doc="every f_* feature"),
        Stage("train", train_reads, (MODEL, TRAINING),
              lambda st: _train_stage(st, models, settings, labels),
              doc="fit on human/weak labels, or load a pretrained model"),
        Stage("score", (Artifact(FEATURES), Artifact(MODEL)), (RANKED, TIERS, PRUNED),
              lambda st: _score_stage(st, settings), chunked=True,
              doc="score, rank, tiers"),
    ]


def rank_inputs(run_dir: Path, settings: RankRun, labels: Path | None) -> list[Path]:
    """What a rank run reads, for its fingerprint: the run's pair tables, the labels file,
    and the models and word lists that decide its scores, relations and filters (an upgrade
    that changes one makes resuming the run ask for ``--fresh``)."""
    rank = settings.rank
    models = [shipped_file(SENTENCE_MODEL), shipped_file(BILINGUAL_MODEL),
              negation_file(), shipped_file(ANTONYM_FILE),
              relation_model_file(rank.relation_model),
              None if rank.model in ("auto", "default", "weak") else rank.model]
    return pair_table_paths(run_dir) + ([labels] if labels else []) + model_inputs(models)


def plan_rank(run_dir: str | Path, config: Config | None = None,
              labels: str | Path | None = None, *, engine: str = "local",
              spark_master: str | None = None) -> Plan:
    """The plan ``rank_run`` would run (``--dry-run``); nothing is written."""
    config = config or load_config()
    settings = resolve(RankRun, config)          # a bad rank setting fails here, before any plan
    run_dir = Path(run_dir)
    label_path = Path(labels) if labels else None
    chosen = make_engine(engine, master=spark_master)
    stages = rank_stages(run_dir, settings, label_path)
    plan_stages(run_dir / RANK_DIR, COMMAND, stages, manifest={})
    inputs = rank_inputs(run_dir, settings, label_path)
    scope = sections_read(RankRun)
    notes = dry_run_notes(run_dir / RANK_DIR, config, inputs, scope)
    notes.append(f"engine: {chosen.name}" + (f" ({spark_master})" if spark_master else ""))
    return plan_stages(run_dir / RANK_DIR, COMMAND, stages, notes=notes)


def rank_run(run_dir: str | Path, config: Config | None = None, labels: str | Path | None = None,
             *, fresh: bool = False, engine: str = "local", spark_master: str | None = None,
             spark_session: Any = None) -> RankSummary:
    """Filter, featurise, train (human or weak labels, or load a model) and rank a run.

    ``engine="spark"`` computes the feature chunks and the scores as Spark tasks
    (``spark_master``, or an existing ``spark_session``); filter, the LM fit, training and
    the ranks/tiers run here.  The outputs are the same as on the local engine.
    """
    config = config or load_config()
    run_dir = Path(run_dir)
    if labels is not None:          # a bad labels file fails before --fresh moves the run aside
        read_tsv_pairs(labels, with_score=True)
    label_path = Path(labels) if labels else None
    chosen = make_engine(engine, master=spark_master, session=spark_session)
    chosen.check()                                       # a missing engine fails before work
    settings = resolve(RankRun, config)                  # so do bad rank settings
    stages = rank_stages(run_dir, settings, label_path)
    plan_stages(run_dir / RANK_DIR, COMMAND, stages, manifest={})   # before any work
    inputs = rank_inputs(run_dir, settings, label_path)
    run = RunDir(run_dir / RANK_DIR, config, command=COMMAND, inputs=inputs, fresh=fresh,
                 engine=chosen, scope=sections_read(RankRun))
    run.record_backend("engine", chosen.describe())
    with progress_bar(len(stages), "ranking (filter, features, train, score)") as advance:
        run_stages(run, COMMAND, stages, progress=lambda _name: advance(1))
    return RankSummary(run.root, run.stage_info("filter")["rows"][CANDIDATES]
                       + run.stage_info("filter")["rows"][REJECTED],
                       run.stage_info("filter")["rows"][REJECTED],
                       run.stage_info("score")["rows"][RANKED],
                       run.stage_info("score")["rows"].get(PRUNED, 0),
                       run.stage_info("train").get("notes", {}).get("model", ""),
                       run.read(TIERS))


def score_pairs(sources: list[str], targets: list[str], config: Config | None = None,
                model: str | Path | None = None, *, cache_dir: str | Path | None = None
                ) -> np.ndarray:
    """Scores (≈ the 1–5 scale, higher = better paraphrase) of raw text pairs.

    ``cache_dir``: where the embedding cache lives (when ``embed.cache`` is on).
    """
    settings = resolve(RankRun, config or load_config())
    ranker = load_ranker(model)
    pairs = text_pairs(list(sources), list(targets), settings.annotate)
    models = _models(settings, Path(cache_dir) if cache_dir else None)
    frame = build_feature_table(pairs, models, threads=settings.features.threads)
    return ranker.predict(frame, settings.rank.threads)


def score_file(path: str | Path, out: str | Path, config: Config | None = None,
               model: str | Path | None = None) -> int:
    """Score ``source<TAB>target`` lines; write ``source<TAB>target<TAB>score`` to ``out``."""
    ignored: list[str] = []
    pairs = read_tsv_pairs(path, ignored=ignored)
    for note in ignored:                 # said, not silently dropped (even under --quiet)
        sys.stderr.write(f"note: {path}: {note}\n")
    scores = score_pairs(pairs["source"].to_list(), pairs["target"].to_list(), config, model)
    lines = ["source\ttarget\tscore"] + [f"{s}\t{t}\t{v:.4f}" for s, t, v in
                                         zip(pairs["source"], pairs["target"], scores)]
    write_text_atomic(out, "\n".join(lines) + "\n")
    return len(scores)


def read_ranked(run_dir: str | Path) -> pl.DataFrame:
    """The ranked pairs of a run (after ``rank_run``)."""
    path = Path(run_dir) / RANK_DIR / RANKED
    if not path.exists():
        raise RunStateError(f"{path} does not exist", hint=f"run `cppdb rank {run_dir}` first")
    return pl.read_parquet(path)


def read_pruned(run_dir: str | Path) -> pl.DataFrame | None:
    """The pairs a run's ranking pruned (None when it wrote none: not ranked, or ranked
    before pruning existed)."""
    path = Path(run_dir) / RANK_DIR / PRUNED
    return pl.read_parquet(path) if path.exists() else None


def summary_dict(summary: RankSummary) -> dict[str, Any]:
    return {"ranking_dir": str(summary.ranking_dir), "pairs": summary.pairs,
            "rejected": summary.rejected, "ranked": summary.ranked, "pruned": summary.pruned,
            "model": summary.model,
            "tiers": summary.tiers.to_dicts()}
