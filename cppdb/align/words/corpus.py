"""Word alignment of a whole annotated corpus, as the align stage of a run.

``align_corpus`` owns the stage: it either trains the statistical aligner on the whole
corpus and aligns it with the training run's own alignments (one global model, in this
process), or — past ``align_words.max_train_pairs`` pairs, or with ``train_sample`` — trains
on a seeded sample and aligns chunk by chunk with the fixed model, shipping it to the local
pool's workers (a file they load once) or to the run's engine (a broadcast), with the
aligners that need no training prefetching their matrices while it trains.

Artifacts: ``alignment.parquet`` (``id``, ``link_zh``, ``link_en``) and, when a statistical
aligner ran, the lexical tables ``lex_en_given_zh.parquet`` / ``lex_zh_given_en.parquet``.
"""
from __future__ import annotations

import pickle
from collections.abc import Callable
from contextlib import nullcontext
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
from cppdb.align.words.settings import AlignWordsSettings
from cppdb.engine import LocalPool
from cppdb.io import atomic_path
from cppdb.progress import console, progress_bar
from cppdb.run import chunk_ranges, part_path
from cppdb.workers import limit_threads, split_range, threads_per_worker

ANNOTATIONS, ALIGNMENT = S.ANNOTATIONS_FILE, S.ALIGNMENT_FILE
LEX_EN_GIVEN_ZH, LEX_ZH_GIVEN_EN = S.LEX_EN_GIVEN_ZH_FILE, S.LEX_ZH_GIVEN_EN_FILE
LINK_ZH, LINK_EN, ALIGNMENT_SCHEMA = S.LINK_ZH, S.LINK_EN, S.ALIGNMENT_SCHEMA
ALIGN_MODEL = ".align-ensemble.pickle"     # the trained ensemble for align workers (removed after)
ALIGN_TRAINED = ".align-trained.pickle"    # the trained ensemble, kept until every chunk is aligned
ALIGN_PREFETCH = ".align-prefetch"         # fixed aligners' matrices made while thot trains (removed after)
#: the columns of the annotations the aligners read
ANNOTATION_COLUMNS = (S.ID, S.ann("zh", "tokens"), S.ann("en", "tokens"), S.ann("en", "lemma"))


def align_corpus(st: Any, settings: AlignWordsSettings, chunk: int) -> None:
    """The align stage on the run's ``annotations.parquet`` (``st``: its stage handle);
    ``chunk``: sentence pairs per resumable chunk of the chunked path."""
    run = st.run
    n_rows = run.scan(ANNOTATIONS).select(pl.len()).collect().item()
    size = train_sample_size(settings, n_rows)
    if size:
        _align_sampled(st, settings, chunk, size, n_rows)
        st.count("links", run.scan(ALIGNMENT).select(
            pl.col(LINK_ZH).list.len().sum()).collect().item() or 0)
        return
    ann = read_annotation_columns(run.path(ANNOTATIONS))
    # full training aligns the corpus with the training run's own alignments: one global
    # model, so it runs in this process on every engine (train_sample > 0 distributes)
    links = _links_from_aligner(run, st, ann, settings)
    st.count("links", int(links[LINK_ZH].list.len().sum() or 0))
    st.write_parquet(ALIGNMENT, links)


def read_annotation_columns(path: Path) -> pl.DataFrame:
    """The annotation columns the aligners read, those of them the file has."""
    present = pl.scan_parquet(path).collect_schema().names()
    return pl.read_parquet(path, columns=[c for c in ANNOTATION_COLUMNS if c in present])


def _links_from_aligner(run: Any, st: Any, ann: pl.DataFrame, settings: AlignWordsSettings
                        ) -> pl.DataFrame:
    def col(lang: str, name: str) -> list[list[str]]:
        column = S.ann(lang, name)
        return [list(x or ()) for x in ann[column].to_list()] if column in ann.columns else []

    zh_tokens, en_tokens = col("zh", "tokens"), col("en", "tokens")
    lemmas = col("en", "lemma")
    usable_lemmas = (len(lemmas) == len(en_tokens)
                     and all(len(a) == len(b) for a, b in zip(lemmas, en_tokens)))
    # why no POS lists: no aligner reads them, and at 1M pairs they cost about 1 GB
    workers = configured_workers(settings)
    st.note("workers", workers)
    result = align_tokenized(zh_tokens, en_tokens, settings,
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


def train_sample_size(settings: AlignWordsSettings, n_rows: int | None = None) -> int:
    """Pairs the statistical aligner trains on before aligning in chunks (0: the whole
    corpus, aligned by the training run itself).  ``train_sample`` when set; else, for a
    corpus of more than ``max_train_pairs`` pairs, that many — the whole-corpus path holds
    the tokenised corpus in three processes, so its memory grows with the corpus."""
    asked = settings.train_sample
    if asked or n_rows is None:
        return asked
    cap = settings.max_train_pairs
    return cap if cap and n_rows > cap else 0


def may_chunk(settings: AlignWordsSettings) -> bool:
    """Whether the align stage may take the chunked path (known before the corpus is read)."""
    return settings.train_sample > 0 or settings.max_train_pairs > 0


def _sample_rows(n_rows: int, size: int, seed: int) -> list[int]:
    """A seeded sample of row numbers (all of them when ``size >= n_rows``), sorted."""
    if size >= n_rows:
        return list(range(n_rows))
    return sorted(np.random.default_rng(seed).choice(n_rows, size, replace=False).tolist())


def _align_sampled(st: Any, settings: AlignWordsSettings, chunk: int, size: int,
                   n_rows: int) -> None:
    """Train the aligners on a seeded sample, then align chunk by chunk with the fixed model:
    memory holds the sample, the model tables and one chunk, whatever the corpus size.  On
    an engine that runs chunks elsewhere the trained model is shared (a broadcast) and the
    chunks are its tasks."""
    run = st.run
    zh, en = S.ann("zh", "tokens"), S.ann("en", "tokens")
    scan = run.scan(ANNOTATIONS)
    rows = _sample_rows(n_rows, size, settings.seed)
    workers = configured_workers(settings)
    trained_file = run.path(ALIGN_TRAINED)
    prefetch = None
    if trained_file.exists():         # a resumed stage: the run's fingerprint fixes the model
        ensemble = pickle.loads(trained_file.read_bytes())
        st.note("resumed_training", str(trained_file.name))
    else:
        sample = (scan.select(zh, en).with_row_index("_row")
                  .filter(pl.col("_row").is_in(rows)).collect())
        prefetch = _start_prefetch(st, settings, n_rows, chunk, workers)
        try:
            ensemble = train_ensemble(sample[zh].to_list(), sample[en].to_list(), settings)
            if prefetch is not None:
                st.note("prefetched_slices", prefetch.stop_feeding())
        except BaseException:
            if prefetch is not None:
                prefetch.close()
            raise
        del sample
        _save_once(trained_file, ensemble)      # hours of training survive an interruption
    run.record_backend("word_aligner", {"name": "+".join(ensemble.aligners),
                                        "signature": "+".join(ensemble.signatures)})
    asked = settings.train_sample > 0
    st.note("train_sample", {"rows": len(rows), "usable": ensemble.trained_pairs,
                             "of": n_rows, "seed": settings.seed,
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
    trained_file.unlink(missing_ok=True)
    max_tokens = settings.max_tokens
    lengths = [pl.col(c).list.len() for c in (zh, en)]
    st.count("rejected_by_aligner", scan.filter(
        pl.any_horizontal([(n == 0) | (n > max_tokens) for n in lengths])
    ).select(pl.len()).collect().item())


def _slices(start: int, stop: int, workers: int) -> list[tuple[int, int]]:
    """The tasks one align chunk is cut into for the local pool (and for prefetching)."""
    return split_range(start, stop, workers * 2)


def _start_prefetch(st: Any, settings: AlignWordsSettings, n_rows: int, chunk: int,
                    workers: int) -> Any:
    """Worker processes computing the fixed aligners' matrices of the chunks still to align
    while the statistical aligner trains (``align_words.prefetch``, local pool only); None
    when nothing would overlap: one worker, an engine elsewhere, no aligner of either kind."""
    if workers <= 1 or st.engine_name is not None or not settings.prefetch:
        return None
    run = st.run
    aligners, _ = build_aligners(settings, ensemble_params(settings).names)
    fixed = {name: a for name, a in aligners.items() if not a.needs_training}
    if not fixed or len(fixed) == len(aligners):
        return None
    parts = run.path(ALIGNMENT + ".parts")
    slices = [piece for start, stop in chunk_ranges(n_rows, chunk)
              if not part_path(parts, start).exists()
              for piece in _slices(start, stop, workers)]
    st.note("prefetch", {"aligners": sorted(fixed), "slices": len(slices)})
    return Prefetch(run.path(ANNOTATIONS), fixed, settings.max_tokens,
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
