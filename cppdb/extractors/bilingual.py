"""`cppdb extract-bilingual` as a plain function: annotate → align → extract → pivot.

Each stage writes its artifacts into the run directory and is skipped when already done
(``cppdb.run.RunDir``); the extract stage is chunked, so an interrupted run resumes at the
first missing chunk.

Artifacts: ``annotations.parquet`` (annotation colleague's schema), ``alignment.parquet``
(``id``, ``link_zh``, ``link_en``), ``phrase_occurrences.parquet`` (phrase and pattern
occurrences, :data:`~cppdb.extractors.occurrences.OCCURRENCE_SCHEMA`), ``phrase_pairs.parquet``
and ``pattern_pairs.parquet`` (``cppdb.schema.PAIR_COLUMNS`` + source_count, target_count,
slot_signature), ``rejected.jsonl`` (input lines kept out, with the reason), and when a
statistical aligner ran, ``lex_en_given_zh.parquet`` / ``lex_zh_given_en.parquet`` (columns
zh, en, prob) for the translation-probability features.
"""
from __future__ import annotations

import pickle
import shutil
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.align.words.api import (align_tokenized, align_with, build_aligners, configured_workers,
                                   ensemble_params, train_ensemble)
from cppdb.align.words.prefetch import (Prefetch, read_slice, slice_file, trained_part,
                                        worker_ensemble)
from cppdb.annotate.pipeline import annotate_into, stage_annotate_input
from cppdb.annotate.staging import STAGED_INPUT
from cppdb.config import Config, load_config
from cppdb.engine import LocalPool, make_engine
from cppdb.errors import BadInputError
from cppdb.extractors.pivot_sql import pivot_sql
from cppdb.io import ROW_GROUP_ROWS, atomic_path, write_parquet_atomic
from cppdb.extractors.occurrences import (ALIGNMENT_SCHEMA, COUNT_MODES, LINK_EN, LINK_ZH,
                                          OCCURRENCE_SCHEMA, ExtractionSettings, extract_range)
from cppdb.extractors.near_identity import near_identity_reason
from cppdb.extractors.pivot import PivotSettings, empty_pair_table, pivot
from cppdb.progress import console, progress_bar
from cppdb.readers.parallel import open_parallel_input, read_lines
from cppdb.readers.pharaoh import parse_links
from cppdb.run import RunDir, chunk_ranges, fingerprint_of, part_path
from cppdb.stages import (Artifact, External, Plan, Stage, dry_run_notes, plan_stages,
                          run_stages)
from cppdb.workers import limit_threads, resolve_workers, split_range, threads_per_worker

SECTION = "bilingual"
COMMAND = "extract-bilingual"
ANNOTATIONS, ALIGNMENT, OCCURRENCES = S.ANNOTATIONS_FILE, S.ALIGNMENT_FILE, S.OCCURRENCES_FILE
PHRASE_PAIRS, PATTERN_PAIRS = S.PHRASE_PAIRS_FILE, S.PATTERN_PAIRS_FILE
PIVOT_WRITES = (PHRASE_PAIRS, PATTERN_PAIRS, S.NEAR_IDENTITY_PAIRS)
REJECTED = S.REJECTED_FILE
LEX_EN_GIVEN_ZH, LEX_ZH_GIVEN_EN = S.LEX_EN_GIVEN_ZH_FILE, S.LEX_ZH_GIVEN_EN_FILE
_COUNT_PARTS = "consistency_counts.parts"
ALIGN_MODEL = ".align-ensemble.pickle"     # the trained ensemble for align workers (removed after)
ALIGN_PREFETCH = ".align-prefetch"         # fixed aligners' matrices made while thot trains (removed after)
PIVOT_WORK = ".pivot-{kind}.work"          # the pivot's work folder per kind (removed after)
PIVOT_NEAR = ".pivot-{kind}.near.parquet"  # its near-identity pairs per kind (removed after)


@dataclass(frozen=True)
class BilingualResult:
    """What a run produced: paths and counts per stage (also in ``manifest.json``)."""

    run_dir: Path
    phrase_pairs: Path
    pattern_pairs: Path
    counts: dict[str, int] = field(default_factory=dict)
    aligned_phrase_pairs: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"run_dir": str(self.run_dir), "phrase_pairs": str(self.phrase_pairs),
                "pattern_pairs": str(self.pattern_pairs), "counts": self.counts,
                "aligned_phrase_pairs_per_mode": self.aligned_phrase_pairs}


# -- inputs ---------------------------------------------------------------------------------
def read_pharaoh(path: str | Path) -> list[list[tuple[int, int]]]:
    """One line of ``i-j`` links (0-based, zh first) per sentence pair."""
    return [parse_links(line, f"{path}, line {number}")
            for number, line in enumerate(read_lines(path, what="alignment"), start=1)]


# -- stages ---------------------------------------------------------------------------------
def _annotate(st: Any, config: Config, inputs: "BilingualInputs") -> None:
    source = open_parallel_input(inputs.zh, inputs.en, inputs.parallel,
                                 max_chars=int(config.get("annotate.max_chars")))
    staged = stage_annotate_input(st, source, config)      # streamed: the driver holds a batch
    if staged.pairs == 0:
        staged.path.unlink(missing_ok=True)
        raise BadInputError("no usable sentence pair in the input",
                            hint=f"see {st.run.path(REJECTED)} for the reasons")
    annotate_into(st, source, config, staged=staged)


def _links_from_pharaoh(path: str | Path, ann: pl.DataFrame) -> pl.DataFrame:
    lines = read_pharaoh(path)
    ids = ann[S.ID].to_list()
    if ids and max(ids) >= len(lines):
        raise BadInputError(f"alignment file {path} has {len(lines)} lines, the input has "
                            f"at least {max(ids) + 1}",
                            hint="give one Pharaoh line per input line (empty line = no links)")
    zh_len = ann[S.ann("zh", "tokens")].list.len().to_list()
    en_len = ann[S.ann("en", "tokens")].list.len().to_list()
    link_zh, link_en = [], []
    for sid, nz, ne in zip(ids, zh_len, en_len):
        links = lines[sid]
        bad = [f"{i}-{j}" for i, j in links if i >= nz or j >= ne]
        if bad:
            raise BadInputError(
                f"alignment file {path}, line {sid + 1}: link(s) {', '.join(bad[:5])} point "
                f"past the tokens ({nz} zh, {ne} en)",
                hint="--alignment needs the tokenisation it was made on: use --parallel with "
                     "the pre-tokenised text")
        link_zh.append([i for i, _ in links])
        link_en.append([j for _, j in links])
    return pl.DataFrame({S.ID: ids, LINK_ZH: link_zh, LINK_EN: link_en}, schema=ALIGNMENT_SCHEMA)


def _links_from_aligner(run: Any, st: Any, ann: pl.DataFrame, config: Config) -> pl.DataFrame:
    def col(lang: str, name: str) -> list[list[str]]:
        column = S.ann(lang, name)
        return [list(x or ()) for x in ann[column].to_list()] if column in ann.columns else []

    zh_tokens, en_tokens = col("zh", "tokens"), col("en", "tokens")
    lemmas = col("en", "lemma")
    usable_lemmas = (len(lemmas) == len(en_tokens)
                     and all(len(a) == len(b) for a, b in zip(lemmas, en_tokens)))
    # why no POS lists: no aligner reads them, and at 1M pairs they cost about 1 GB
    workers = configured_workers(config)
    st.note("workers", workers)
    result = align_tokenized(zh_tokens, en_tokens, config,
                             en_lemmas=lemmas if usable_lemmas else None, workers=workers)
    del zh_tokens, en_tokens, lemmas
    run.record_backend("word_aligner", {"name": "+".join(result.aligners_used),
                                        "signature": "+".join(result.signatures)})
    st.count("rejected_by_aligner", len(result.rejected))
    if result.degraded:
        # a pair one aligner failed on keeps the other aligners' links: counted and named
        st.count("aligned_without_a_failing_aligner", len(result.degraded))
        st.note("aligner_failures", [{"pair": f.index, "reason": f.reason}
                                     for f in result.degraded[:20]])
    if result.skipped_aligners:
        st.note("skipped_aligners", {a.name: a.reason for a in result.skipped_aligners})
    # translation probabilities for the ranking features (PPDB feature 12)
    if result.lex_en_given_zh.height:
        st.write_parquet(LEX_EN_GIVEN_ZH, result.lex_en_given_zh)
        st.write_parquet(LEX_ZH_GIVEN_EN, result.lex_zh_given_en)
    return _links_frame(ann[S.ID], result.links)


def _links_frame(ids: pl.Series, links: list[list[tuple[int, int]]],
                 step: int = 100_000) -> pl.DataFrame:
    """The alignment table, built in slices: Python lists of every link of a large corpus
    would double the stage's peak memory."""
    parts = []
    for start in range(0, len(links), step):
        chunk = links[start:start + step]
        parts.append(pl.DataFrame({S.ID: ids.slice(start, len(chunk)),
                                   LINK_ZH: [[i for i, _ in x] for x in chunk],
                                   LINK_EN: [[j for _, j in x] for x in chunk]},
                                  schema=ALIGNMENT_SCHEMA))
    return pl.concat(parts) if parts else pl.DataFrame(schema=ALIGNMENT_SCHEMA)


def _train_sample(config: Config, n_rows: int | None = None) -> int:
    """Pairs the statistical aligner trains on before aligning in chunks (0: the whole
    corpus, aligned by the training run itself).  ``train_sample`` when set; else, for a
    corpus of more than ``max_train_pairs`` pairs, that many — the whole-corpus path holds
    the tokenised corpus in three processes, so its memory grows with the corpus."""
    section = config.section("align_words")
    asked = max(0, int(section["train_sample"]))
    if asked or n_rows is None:
        return asked
    cap = max(0, int(section["max_train_pairs"]))
    return cap if cap and n_rows > cap else 0


def _may_sample(config: Config) -> bool:
    """Whether the align stage may take the chunked path (known before the corpus is read)."""
    section = config.section("align_words")
    return int(section["train_sample"]) > 0 or int(section["max_train_pairs"]) > 0


def _sample_rows(n_rows: int, size: int, seed: int) -> list[int]:
    """A seeded sample of row numbers (all of them when ``size >= n_rows``), sorted."""
    if size >= n_rows:
        return list(range(n_rows))
    return sorted(np.random.default_rng(seed).choice(n_rows, size, replace=False).tolist())


def _align_sampled(st: Any, config: Config, section: dict[str, Any], size: int,
                   n_rows: int) -> None:
    """Train the aligners on a seeded sample, then align chunk by chunk with the fixed model:
    memory holds the sample, the model tables and one chunk, whatever the corpus size.  On
    an engine that runs chunks elsewhere the trained model is shared (a broadcast) and the
    chunks are its tasks."""
    run = st.run
    zh, en = S.ann("zh", "tokens"), S.ann("en", "tokens")
    scan = run.scan(ANNOTATIONS)
    rows = _sample_rows(n_rows, size, int(config.get("align_words.seed")))
    sample = (scan.select(zh, en).with_row_index("_row")
              .filter(pl.col("_row").is_in(rows)).collect())
    chunk = max(1, int(section["chunk_size"]))
    workers = configured_workers(config)
    prefetch = _start_prefetch(st, config, n_rows, chunk, workers)
    try:
        ensemble = train_ensemble(sample[zh].to_list(), sample[en].to_list(), config)
        if prefetch is not None:
            st.note("prefetched_slices", prefetch.stop_feeding())
    except BaseException:
        if prefetch is not None:
            prefetch.close()
        raise
    del sample
    run.record_backend("word_aligner", {"name": "+".join(ensemble.aligners),
                                        "signature": "+".join(ensemble.signatures)})
    asked = int(config.get("align_words.train_sample")) > 0
    st.note("train_sample", {"rows": len(rows), "usable": ensemble.trained_pairs,
                             "of": n_rows, "seed": int(config.get("align_words.seed")),
                             "why": "train_sample" if asked else "max_train_pairs"})
    if not asked:
        console().print(f"align: {n_rows:,} pairs > align_words.max_train_pairs; the "
                        f"statistical aligner trains on a seeded sample of {len(rows):,} "
                        "and aligns every pair with that model (set max_train_pairs=0 to "
                        "train on all)")
    if ensemble.skipped:
        st.note("skipped_aligners", {a.name: a.reason for a in ensemble.skipped})
    lex_e_f, lex_f_e = ensemble.lexical_frames()
    if lex_e_f.height:
        st.write_parquet(LEX_EN_GIVEN_ZH, lex_e_f)
        st.write_parquet(LEX_ZH_GIVEN_EN, lex_f_e)
    ann_path = str(run.path(ANNOTATIONS))
    part = partial(align_part, ann_path, st.share(ensemble))
    model_file = run.path(ALIGN_MODEL)
    st.note("workers", workers)
    pools = LocalPool(workers if prefetch is None else 1)
    compute = (_pooled(part, ann_path, pools, ensemble, model_file, workers) if prefetch is None
               else _decoded_in(prefetch, ann_path, ensemble, model_file))
    try:
        with progress_bar(n_rows, "align") as advance:
            st.run_parts(ALIGNMENT, n_rows, chunk, compute,
                         shipped=lambda: nullcontext(part), progress=advance)
    finally:
        pools.shutdown()
        if prefetch is not None:
            prefetch.close()
        model_file.unlink(missing_ok=True)
    max_tokens = int(config.get("align_words.max_tokens"))
    lengths = [pl.col(c).list.len() for c in (zh, en)]
    st.count("rejected_by_aligner", scan.filter(
        pl.any_horizontal([(n == 0) | (n > max_tokens) for n in lengths])
    ).select(pl.len()).collect().item())


def _slices(start: int, stop: int, workers: int) -> list[tuple[int, int]]:
    """The tasks one align chunk is cut into for the local pool (and for prefetching)."""
    return split_range(start, stop, workers * 2)


def _start_prefetch(st: Any, config: Config, n_rows: int, chunk: int, workers: int) -> Any:
    """Worker processes computing the fixed aligners' matrices of the chunks still to align
    while the statistical aligner trains (``align_words.prefetch``, local pool only); None
    when nothing would overlap: one worker, an engine elsewhere, no aligner of either kind."""
    if workers <= 1 or st.engine_name is not None or not config.get("align_words.prefetch"):
        return None
    run = st.run
    aligners, _ = build_aligners(config, ensemble_params(config).names)
    fixed = {name: a for name, a in aligners.items() if not a.needs_training}
    if not fixed or len(fixed) == len(aligners):
        return None
    parts = run.path(ALIGNMENT + ".parts")
    slices = [piece for start, stop in chunk_ranges(n_rows, chunk)
              if not part_path(parts, start).exists()
              for piece in _slices(start, stop, workers)]
    st.note("prefetch", {"aligners": sorted(fixed), "slices": len(slices)})
    return Prefetch(run.path(ANNOTATIONS), fixed, int(config.get("align_words.max_tokens")),
                    slices, run.path(ALIGN_PREFETCH), workers)


def _pooled(part: Callable[[int, int], pl.DataFrame], ann_path: str, pools: LocalPool,
            ensemble: Any, model_file: Path, workers: int) -> Callable[[int, int], pl.DataFrame]:
    """A chunk computed here: by ``part`` in this process, or — with ``align_words.workers``
    > 1 — split over the local pool, whose workers load the trained ensemble once from
    ``model_file`` (written on the first chunk computed here; never when all ran elsewhere)."""
    if workers <= 1:
        return part
    threads = threads_per_worker(workers)

    def compute(start: int, stop: int) -> pl.DataFrame:
        pool = pools.get()
        _save_once(model_file, ensemble)
        futures = [pool.submit(align_saved_part, ann_path, str(model_file), threads, a, b)
                   for a, b in _slices(start, stop, workers)]
        return pl.concat([f.result() for f in futures])

    return compute


def _decoded_in(prefetch: Any, ann_path: str, ensemble: Any, model_file: Path
                ) -> Callable[[int, int], pl.DataFrame]:
    """A chunk decoded by the prefetch workers, which keep their fixed aligners loaded and
    get the trained one from ``model_file``; each reads its slice's prefetched matrices."""
    def compute(start: int, stop: int) -> pl.DataFrame:
        _save_once(model_file, trained_part(ensemble))
        futures = [prefetch.submit(align_prefetched_part, ann_path, str(model_file),
                                   str(prefetch.folder), a, b)
                   for a, b in _slices(start, stop, prefetch.workers)]
        return pl.concat([f.result() for f in futures])

    return compute


def _save_once(model_file: Path, value: Any) -> None:
    if not model_file.exists():
        with atomic_path(model_file) as tmp:
            tmp.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


@lru_cache(maxsize=1)
def _saved_ensemble(model_file: str, threads: int) -> SimpleNamespace:
    """The trained ensemble of a pool worker, loaded once; the worker's share of the cores
    for the math libraries (torch's and BLAS's thread pools would each take them all)."""
    with open(model_file, "rb") as handle:
        ensemble = pickle.load(handle)
    # after the load, so that the OpenMP runtime thot brings is limited too (10 one-thread
    # GPU workers align 2,131 pairs/s on an H100 host, 12 unlimited ones 1,120)
    limit_threads(threads)
    return SimpleNamespace(value=ensemble)


def align_saved_part(ann_path: str, model_file: str, threads: int, start: int, stop: int
                     ) -> pl.DataFrame:
    """:func:`align_part` in a pool worker, with the ensemble the stage saved for it."""
    return align_part(ann_path, _saved_ensemble(model_file, threads), start, stop)


def align_prefetched_part(ann_path: str, model_file: str, folder: str, start: int, stop: int
                          ) -> pl.DataFrame:
    """:func:`align_part` in a prefetch worker, reading the slice's prefetched matrices."""
    return align_part(ann_path, worker_ensemble(model_file), start, stop, folder)


def align_part(ann_path: str, ensemble: Any, start: int, stop: int,
               prefetched: str | None = None) -> pl.DataFrame:
    """Links of annotation rows ``[start, stop)`` decoded with the fixed models
    (``ensemble.value``: the trained ensemble, shared by the engine), reusing the matrices
    prefetched for exactly this slice when the folder ``prefetched`` holds them."""
    zh, en, lemma = S.ann("zh", "tokens"), S.ann("en", "tokens"), S.ann("en", "lemma")
    scan = pl.scan_parquet(ann_path)
    has_lemma = lemma in scan.collect_schema().names()
    part = scan.slice(start, stop - start).select(
        [S.ID, zh, en] + ([lemma] if has_lemma else [])).collect()
    lemmas = _usable_lemmas(part, lemma) if has_lemma else None
    folder = None if prefetched is None else Path(prefetched)
    ready = read_slice(folder, start, stop)
    links, _ = align_with(ensemble.value, part[zh].to_list(), part[en].to_list(), lemmas,
                          prefetched=ready)
    if folder is not None:
        slice_file(folder, start, stop).unlink(missing_ok=True)
    return pl.DataFrame({S.ID: part[S.ID], LINK_ZH: [[i for i, _ in x] for x in links],
                         LINK_EN: [[j for _, j in x] for x in links]}, schema=ALIGNMENT_SCHEMA)


def _usable_lemmas(part: pl.DataFrame, lemma: str) -> list[list[str]] | None:
    lemmas = [list(x or ()) for x in part[lemma].to_list()]
    tokens = part[S.ann("en", "tokens")].list.len().to_list()
    return lemmas if all(len(a) == b for a, b in zip(lemmas, tokens)) else None


def _align(st: Any, config: Config, alignment_path: str | Path | None) -> None:
    run = st.run
    n_rows = run.scan(ANNOTATIONS).select(pl.len()).collect().item()
    size = 0 if alignment_path is not None else _train_sample(config, n_rows)
    if size:
        _align_sampled(st, config, config.section(SECTION), size, n_rows)
        st.count("links", run.scan(ALIGNMENT).select(
            pl.col(LINK_ZH).list.len().sum()).collect().item() or 0)
        return
    wanted = [S.ID] + [S.ann(lang, name) for lang, name in
                       (("zh", "tokens"), ("en", "tokens"), ("en", "lemma"))]
    present = run.scan(ANNOTATIONS).collect_schema().names()
    ann = pl.read_parquet(run.path(ANNOTATIONS), columns=[c for c in wanted if c in present])
    if alignment_path is not None:
        links = _links_from_pharaoh(alignment_path, ann)
        st.note("source", f"pharaoh:{alignment_path}")
    else:
        # full training aligns the corpus with the training run's own alignments: one global
        # model, so it runs in this process on every engine (train_sample > 0 distributes)
        links = _links_from_aligner(run, st, ann, config)
    st.count("links", int(links[LINK_ZH].list.len().sum() or 0))
    st.write_parquet(ALIGNMENT, links)


def _extract_part(ann_path: str, align_path: str, settings: ExtractionSettings,
                  counts_dir: str, start: int, stop: int) -> pl.DataFrame:
    """One chunk on an engine's worker: its counts (written first), then its frame."""
    frame, counts = extract_range(ann_path, align_path, start, stop, settings)
    write_parquet_atomic(part_path(Path(counts_dir), start),
                         pl.DataFrame([counts], schema=list(COUNT_MODES[:len(counts)]),
                                      orient="row"))
    return frame


def _extract(st: Any, section: dict[str, Any]) -> None:
    """Extract phrase and pattern occurrences (chunked, resumable; the runner puts the chunks
    on the run's engine, and what runs here is spread over a process pool)."""
    run = st.run
    settings = ExtractionSettings.from_config(section)
    n_rows = run.scan(ANNOTATIONS).select(pl.len()).collect().item()
    workers = resolve_workers(int(section["workers"]), "bilingual.workers")
    chunk = max(1, int(section["chunk_size"]))
    ann_path, align_path = run.path(ANNOTATIONS), run.path(ALIGNMENT)
    counts_dir = run.path(_COUNT_PARTS)
    counts_dir.mkdir(exist_ok=True)
    pools = LocalPool(workers if n_rows > int(section["min_rows_for_pool"]) else 1)

    def compute(start: int, stop: int) -> pl.DataFrame:
        ranges = split_range(start, stop, workers * 4)
        pool = pools.get()                 # started on the first chunk computed here
        if pool is None:
            results = [extract_range(ann_path, align_path, a, b, settings) for a, b in ranges]
        else:
            futures = [pool.submit(extract_range, ann_path, align_path, a, b, settings)
                       for a, b in ranges]
            results = [f.result() for f in futures]
        totals = [sum(r[1][k] for r in results) for k in range(len(settings.report_rules))]
        write_parquet_atomic(part_path(counts_dir, start),
                             pl.DataFrame([totals], schema=list(COUNT_MODES[:len(totals)]),
                                          orient="row"))
        frames = [r[0] for r in results if r[0].height]
        return pl.concat(frames) if frames else pl.DataFrame(schema=OCCURRENCE_SCHEMA)

    shipped = partial(_extract_part, str(ann_path), str(align_path), settings,
                      str(counts_dir))
    try:
        with progress_bar(n_rows, "extract") as advance:
            st.run_parts(OCCURRENCES, n_rows, chunk, compute,
                         shipped=lambda: nullcontext(shipped), progress=advance)
            kinds = (run.scan(OCCURRENCES).group_by("kind").agg(pl.len()).collect())
            for kind, n in kinds.iter_rows():
                st.count(f"{kind}_occurrence_rows", n)
            st.note("consistency", settings.rule.label)
            st.note("aligned_phrase_pairs_per_mode", _sum_counts(counts_dir, settings))
    finally:
        pools.shutdown()
    shutil.rmtree(counts_dir, ignore_errors=True)


def _sum_counts(counts_dir: Path, settings: ExtractionSettings) -> dict[str, int]:
    files = sorted(counts_dir.glob("part-*.parquet"))
    if not files or not settings.report_rules:
        return {}
    sums = pl.read_parquet(files).sum().row(0, named=True)
    return {rule.label: int(sums[mode]) for mode, rule in zip(COUNT_MODES, settings.report_rules)}


def _pivot(st: Any, section: dict[str, Any]) -> None:
    """Pivot occurrences into phrase_pairs.parquet and pattern_pairs.parquet (on the SQL
    session the run's engine lends, if any); the near-identity class
    (:mod:`cppdb.extractors.near_identity`) goes to its own file."""
    run = st.run
    engine = run.engine
    settings = pivot_settings(section)
    separate = bool(section["separate_near_identity"])
    run.scan(OCCURRENCES)                              # a clear error when it is missing
    held: list[Path] = []
    for kind, artifact in (("phrase", PHRASE_PAIRS), ("pattern", PATTERN_PAIRS)):
        work = run.path(PIVOT_WORK.format(kind=kind))
        pruned: dict[str, int] = {}
        parts = pivot_pairs(engine, run.path(OCCURRENCES), kind, work, settings, pruned)
        for rule, count in pruned.items():
            st.count(f"pruned_{kind}_units_{rule}", count)
        frame = pl.scan_parquet(parts) if parts else empty_pair_table().lazy()
        frame = frame.with_columns(near_identity_reason())
        near = run.path(PIVOT_NEAR.format(kind=kind))
        frame.filter(pl.col(S.REASON).is_not_null()).sink_parquet(
            near, row_group_size=ROW_GROUP_ROWS)
        held.append(near)
        for reason, count in _reason_counts(near).items():
            st.count(f"near_identity_{kind}_{reason}", count)
        kept = frame.filter(pl.col(S.REASON).is_null()) if separate else frame
        st.write_parquet(artifact, kept.drop(S.REASON))
        shutil.rmtree(work, ignore_errors=True)
    st.write_parquet(S.NEAR_IDENTITY_PAIRS, pl.scan_parquet(held))
    for path in held:
        path.unlink()


def pivot_pairs(engine: Any, occurrences: Path, kind: str, work_dir: Path,
                settings: PivotSettings, pruned: dict[str, int] | None = None) -> list[Path]:
    """The pair files of one occurrence kind: the polars pivot, or its Spark SQL twin when
    the engine lends a SQL session (the same tables; tests/test_spark_engine.py)."""
    session = engine.sql_session() if engine is not None else None
    if session is None:
        occ = pl.scan_parquet(occurrences).filter(pl.col(S.KIND) == kind)
        return pivot(occ, kind, work_dir, settings, pruned)

    return pivot_sql(session, occurrences, kind, work_dir, settings, pruned)


def _reason_counts(path: Path) -> dict[str, int]:
    counts = pl.scan_parquet(path).group_by(S.REASON).len().collect()
    return dict(zip(counts[S.REASON].to_list(), counts["len"].to_list(), strict=True))


@dataclass(frozen=True)
class BilingualInputs:
    """The user's files: raw ``zh``/``en`` or pre-tokenised ``parallel``, and a Pharaoh
    ``alignment`` that replaces the word aligner."""

    zh: Path | None = None
    en: Path | None = None
    parallel: Path | None = None
    alignment: Path | None = None

    def files(self) -> list[Path]:
        return [p for p in (self.zh, self.en, self.parallel, self.alignment) if p is not None]

    def corpus(self) -> External:
        if self.parallel is not None and (self.zh is not None or self.en is not None):
            raise BadInputError("give either --parallel or --zh/--en, not both")
        if self.parallel is None and (self.zh is None or self.en is None):
            raise BadInputError("missing input: give --zh FILE and --en FILE, or --parallel FILE",
                                hint="--parallel takes pre-tokenised 'zh tokens ||| en tokens' "
                                     "lines")
        paths = (self.parallel,) if self.parallel is not None else (self.zh, self.en)
        return External("the parallel corpus", tuple(Path(p) for p in paths if p is not None))


_ANN_KEYS = (S.ID, S.ann("zh", "tokens"), S.ann("en", "tokens"))


def bilingual_stages(config: Config, inputs: BilingualInputs) -> list[Stage]:
    """The declared stages of ``extract-bilingual`` (see the module docstring).  Their chunks
    go where the run's engine puts them (``StageHandle.run_parts``), and the pivot runs on
    the SQL session the engine lends, if any."""
    section = config.section(SECTION)
    align_reads: tuple[Artifact | External, ...] = (Artifact(ANNOTATIONS, _ANN_KEYS),)
    if inputs.alignment is not None:
        align_reads += (External("the Pharaoh alignment", (Path(inputs.alignment),)),)
    return [
        Stage("annotate", (inputs.corpus(),), (ANNOTATIONS, REJECTED),
              lambda st: _annotate(st, config, inputs), chunked=True,
              scratch=(STAGED_INPUT,),
              doc="tokenise, tag, parse and chunk both sides"),
        Stage("align", align_reads, (ALIGNMENT,),
              lambda st: _align(st, config, inputs.alignment),
              optional=(LEX_EN_GIVEN_ZH, LEX_ZH_GIVEN_EN),
              chunked=inputs.alignment is None and _may_sample(config),
              doc="word alignment (statistical aligner or the given Pharaoh file)"),
        Stage("extract", (Artifact(ANNOTATIONS, _ANN_KEYS),
                          Artifact(ALIGNMENT, (S.ID, LINK_ZH, LINK_EN))), (OCCURRENCES,),
              lambda st: _extract(st, section), chunked=True, scratch=(_COUNT_PARTS,),
              doc="aligned phrase and pattern occurrences"),
        Stage("pivot", (Artifact(OCCURRENCES, ("kind",)),), PIVOT_WRITES,
              lambda st: _pivot(st, section),
              scratch=(PIVOT_WORK.format(kind="*"), PIVOT_NEAR.format(kind="*")),
              doc="pivot through English, p(z2|z1)"),
    ]


def run_stage(run: Any, config: Config, name: str) -> None:
    """Run one declared stage of :func:`bilingual_stages` on the artifacts already in ``run``
    (benchmarks: extract, pivot); skipped when done.  The corpus is a placeholder: only the
    annotate stage reads it."""
    stages = bilingual_stages(config, BilingualInputs(parallel=Path("(not read)")))
    run_stages(run, COMMAND, [s for s in stages if s.name == name], finish=False)


def pivot_settings(section: dict[str, Any]) -> PivotSettings:
    """The pivot and its PPDB-style pruning from the ``[bilingual]`` settings."""
    return PivotSettings(max_per_pivot=int(section["max_per_pivot"]),
                         max_anchors=int(section["max_anchors"]),
                         partition_rows=int(section["partition_rows"]),
                         skip_function_pivots=bool(section["prune_function_pivots"]),
                         min_p_e_given_f=float(section["prune_min_p_e_given_f"]),
                         min_p_f_given_e=float(section["prune_min_p_f_given_e"]),
                         min_count=int(section["prune_min_count"]),
                         max_pivots_per_phrase=int(section["prune_max_pivots_per_phrase"]))


# -- the API --------------------------------------------------------------------------------
def _open(zh_path: str | Path | None, en_path: str | Path | None, config: Config | None,
          parallel_path: str | Path | None, alignment_path: str | Path | None
          ) -> tuple[Config, BilingualInputs, list[Stage]]:
    config = config or load_config()
    ExtractionSettings.from_config(config.section(SECTION))   # invalid settings fail first
    resolve_workers(config.get("align_words.workers"), "align_words.workers")
    as_path = (lambda p: Path(p) if p is not None else None)
    inputs = BilingualInputs(as_path(zh_path), as_path(en_path), as_path(parallel_path),
                             as_path(alignment_path))
    return config, inputs, bilingual_stages(config, inputs)


def plan_bilingual(zh_path: str | Path | None, en_path: str | Path | None,
                   out_dir: str | Path, config: Config | None = None, *,
                   parallel_path: str | Path | None = None,
                   alignment_path: str | Path | None = None, engine: str = "local",
                   spark_master: str | None = None) -> Plan:
    """The plan ``extract_bilingual`` would run (``--dry-run``); nothing is written."""
    chosen = make_engine(engine, master=spark_master)
    config, inputs, stages = _open(zh_path, en_path, config, parallel_path, alignment_path)
    plan_stages(out_dir, COMMAND, stages)          # every missing input at once
    notes = dry_run_notes(Path(out_dir), fingerprint_of(config, inputs.files()))
    notes.append(f"engine: {chosen.name}" + (f" ({spark_master})" if spark_master else ""))
    return plan_stages(out_dir, COMMAND, stages, notes=notes)


def extract_bilingual(zh_path: str | Path | None, en_path: str | Path | None,
                      out_dir: str | Path, config: Config | None = None, *,
                      parallel_path: str | Path | None = None,
                      alignment_path: str | Path | None = None,
                      fresh: bool = False, engine: str = "local",
                      spark_master: str | None = None,
                      spark_session: Any = None) -> BilingualResult:
    """Run (or resume) bilingual pivot extraction into ``out_dir``.

    >>> result = extract_bilingual("data/parallel/sample.zh", "data/parallel/sample.en",
    ...                            "demo-run/bilingual")            # doctest: +SKIP
    >>> pl.read_parquet(result.phrase_pairs).head()                  # doctest: +SKIP

    ``engine="spark"`` runs the extract chunks and the pivot on Spark (``spark_master``, or
    an existing ``spark_session``); the outputs are the same Parquet artifacts.
    """
    chosen = make_engine(engine, master=spark_master, session=spark_session)
    chosen.check()                                       # a missing engine fails before work
    config, inputs, stages = _open(zh_path, en_path, config, parallel_path, alignment_path)
    plan_stages(out_dir, COMMAND, stages, manifest={})   # inputs checked before any work
    run = RunDir(out_dir, config, command=COMMAND, inputs=inputs.files(), fresh=fresh,
                 engine=chosen)
    run.record_backend("engine", chosen.describe())
    run_stages(run, COMMAND, stages)
    return _result(run)


def _result(run: Any) -> BilingualResult:
    counts: dict[str, int] = {}
    for stage in ("annotate", "align", "extract", "pivot"):
        for key, value in run.stage_info(stage).get("rows", {}).items():
            counts[f"{stage}.{key}"] = value
    notes = run.stage_info("extract").get("notes", {})
    return BilingualResult(run.root, run.path(PHRASE_PAIRS), run.path(PATTERN_PAIRS), counts,
                           notes.get("aligned_phrase_pairs_per_mode", {}))
