"""Annotation API: normalise, tag, add phrase spans — batched, over all cores, resumable.

Other stages call :func:`annotate_texts` (lists in, lists out), :func:`annotate_stage` (a
ParallelText into ``annotations.parquet`` of a run directory) and the frame converters
:func:`frame_from_sentences` / :func:`sentences_from_frame`.
"""
from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Sequence
from concurrent.futures import Executor
from contextlib import nullcontext
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Literal

import polars as pl

from cppdb.defaults import toml_defaults
from cppdb.stages import Stage, run_stages
from cppdb.workers import resolve_workers
from cppdb.annotate.types import AnnotatedSentence, Span
from cppdb.annotate.settings import AnnotateSettings
from cppdb.engine.pools import process_pool
from cppdb.errors import ConfigError
from cppdb.progress import progress_bar
from cppdb.annotate.staging import (STAGED_INPUT, StagedInput, read_staged_rows,
                                     stage_source)
from cppdb.readers.parallel import ParallelSource, ParallelText
from cppdb.registry import Backend, load_backend
from cppdb.run import RunDir, StageHandle
from cppdb.schema import ANNOTATIONS_FILE, ID, REJECTED_FILE, ann, annotation_schema
from cppdb.text.convert import default_converter
from cppdb.text.normalize import collapse_whitespace, normalize_en, to_halfwidth

_ANNOTATE = toml_defaults("annotate")

Lang = Literal["zh", "en"]
ANNOTATIONS, REJECTED = ANNOTATIONS_FILE, REJECTED_FILE
STAGE = "annotate"
_DEFAULT_PHRASES = {"zh": "grammar", "en": "dependency"}


@dataclass(frozen=True)
class AnnotatorSpec:
    """Everything needed to build an annotator in any process (hashable, picklable)."""

    lang: str
    backend: str
    phrases: str
    backend_options: tuple[tuple[str, Any], ...] = ()
    to_simplified: bool = _ANNOTATE["to_simplified"]
    opencc_profile: str = _ANNOTATE["opencc_profile"]


def annotator_spec(lang: str, settings: AnnotateSettings) -> AnnotatorSpec:
    """Resolve the ``[annotate]`` settings for one language ("auto" phrases included)."""
    if lang not in ("zh", "en"):
        raise ConfigError(f"unknown language '{lang}'", hint="use 'zh' or 'en'")
    backend = settings.zh_backend if lang == "zh" else settings.en_backend
    phrases = settings.zh_phrases if lang == "zh" else settings.en_phrases
    if phrases == "auto":
        phrases = "stanza" if backend == "stanza" else _DEFAULT_PHRASES[lang]
    options: dict[str, Any] = {}
    if backend == "stanza" or phrases == "stanza":
        options["stanza_dir"] = settings.stanza_dir
    if lang == "en" and backend == "spacy":
        options["model"] = settings.spacy_model
    return AnnotatorSpec(lang, backend, phrases, tuple(sorted(options.items())),
                         settings.to_simplified and lang == "zh", settings.opencc_profile)


class Annotator:
    """One language's backend + phrase source, with input normalisation."""

    def __init__(self, spec: AnnotatorSpec) -> None:
        self.spec = spec
        options = dict(spec.backend_options)
        self.backend = load_backend(f"{spec.lang}_annotator", spec.backend, **_only(
            options, spec.backend, {"spacy": ("model",), "stanza": ("stanza_dir",)}))
        self.phrases: Backend | None = None
        if not (spec.phrases == "stanza" and spec.backend == "stanza"):
            self.phrases = load_backend(f"{spec.lang}_phrases", spec.phrases, **_only(
                options, spec.phrases, {"stanza": ("stanza_dir",)}))
        self.converter = (default_converter(spec.opencc_profile) if spec.to_simplified
                          else None)

    def normalize(self, text: str) -> str:
        if self.spec.lang == "en":
            return normalize_en(text)
        text = collapse_whitespace(to_halfwidth(text, keep_chinese_punctuation=True))
        return self.converter.convert_one(text) if self.converter else text

    def normalize_tokens(self, tokens: Sequence[str]) -> list[str]:
        cleaned = [self.normalize(token).replace(" ", "") for token in tokens]
        return [token for token in cleaned if token]

    def annotate(self, items: Sequence[Any], *, pretokenized: bool = False
                 ) -> list[AnnotatedSentence]:
        """Raw strings (or token sequences if ``pretokenized``) -> annotated sentences."""
        if pretokenized:
            sentences = self.backend.annotate_pretokenized(  # type: ignore[attr-defined]
                [self.normalize_tokens(tokens) for tokens in items])
        else:
            sentences = self.backend.annotate(  # type: ignore[attr-defined]
                [self.normalize(text) for text in items])
        if self.phrases is not None:
            sentences = self.phrases.add_spans(sentences)  # type: ignore[attr-defined]
        return sentences

    def describe(self) -> dict[str, Any]:
        info = {"lang": self.spec.lang, "annotator": self.backend.describe(),
                "phrases": (self.phrases or self.backend).describe(),
                "phrases_name": self.spec.phrases}
        if self.converter is not None:
            info["converter"] = self.converter.describe()
        return info


def _only(options: dict[str, Any], name: str, allowed: dict[str, tuple[str, ...]]
          ) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k in allowed.get(name, ())}


@lru_cache(maxsize=8)
def cached_annotator(spec: AnnotatorSpec) -> Annotator:
    """One annotator per spec per process (each pool worker loads its backends once)."""
    return Annotator(spec)


def _annotate_batch(spec: AnnotatorSpec, items: list[Any], pretokenized: bool
                    ) -> list[AnnotatedSentence]:
    return cached_annotator(spec).annotate(items, pretokenized=pretokenized)


def start_method(settings: AnnotateSettings) -> str:
    """``annotate.start_method``; "auto" is fork on Linux (workers inherit loaded models)."""
    method = settings.start_method
    available = multiprocessing.get_all_start_methods()
    if method == "auto":
        return "fork" if sys.platform.startswith("linux") and "fork" in available else "spawn"
    if method not in available:
        raise ConfigError(f"annotate.start_method '{method}' is not available here",
                          hint=f"choose auto or one of: {', '.join(available)}")
    return method


class AnnotationSession:
    """Annotators for both languages and (when worth it) process pools, reused across calls.

    Inputs smaller than two batches are annotated in-process: pool start-up costs more
    than it saves there.  With the fork start method the annotator is loaded once in this
    process before the pool starts, so workers inherit the loaded jieba/spaCy models
    (copy-on-write); with spawn each worker loads its backends once, on its first batch.
    One pool per language, so each forks with only its own models loaded.
    """

    def __init__(self, settings: AnnotateSettings, *, workers: int | None = None) -> None:
        self.batch_size = settings.batch_size
        self.workers = resolve_workers(workers if workers is not None else settings.workers,
                                       "annotate.workers")
        self.start_method = start_method(settings)
        self.specs = {lang: annotator_spec(lang, settings) for lang in ("zh", "en")}
        self._pools: dict[str, Executor] = {}

    def __enter__(self) -> "AnnotationSession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for pool in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
        self._pools.clear()

    @property
    def pooled(self) -> bool:
        """True once a worker pool has been started."""
        return bool(self._pools)

    def annotator(self, lang: str) -> Annotator:
        return cached_annotator(self.specs[lang])

    def describe(self, lang: str) -> dict[str, Any]:
        return self.annotator(lang).describe()

    def annotate(self, lang: str, items: Sequence[Any], *, pretokenized: bool = False
                 ) -> list[AnnotatedSentence]:
        if lang not in self.specs:
            raise ConfigError(f"unknown language '{lang}'", hint="use 'zh' or 'en'")
        spec = self.specs[lang]
        self.annotator(lang)  # fail fast (missing backend/model) in the calling process
        batches = [list(items[i:i + self.batch_size])
                   for i in range(0, len(items), self.batch_size)]
        if self.workers <= 1 or len(batches) < 2:
            return [s for batch in batches for s in _annotate_batch(spec, batch, pretokenized)]
        pool = self._pool(lang, pretokenized)
        results = pool.map(_annotate_batch, [spec] * len(batches), batches,
                           [pretokenized] * len(batches))
        return [s for batch in results for s in batch]

    def _pool(self, lang: str, pretokenized: bool) -> Executor:
        if lang not in self._pools:
            if self.start_method == "fork":  # load models before forking: workers inherit
                warm = [["热身"] if lang == "zh" else ["warm", "up"]] if pretokenized else \
                    ["热身" if lang == "zh" else "warm up"]
                self.annotator(lang).annotate(warm, pretokenized=pretokenized)
            self._pools[lang] = process_pool(self.workers, start_method=self.start_method)
        return self._pools[lang]


def annotate_texts(lang: Lang, texts: Sequence[Any], settings: AnnotateSettings, *,
                   pretokenized: bool = False) -> list[AnnotatedSentence]:
    """Annotate sentences of one language (zh: traditional -> simplified first)."""
    with AnnotationSession(settings) as session:
        return session.annotate(lang, texts, pretokenized=pretokenized)


# -- frames -----------------------------------------------------------------------------------
def frame_from_sentences(ids: Sequence[int], zh: Sequence[AnnotatedSentence],
                         en: Sequence[AnnotatedSentence]) -> pl.DataFrame:
    """The ``annotations.parquet`` frame (columns of :func:`cppdb.schema.annotation_schema`)."""
    if not len(ids) == len(zh) == len(en):
        raise ValueError(f"{len(ids)} ids, {len(zh)} zh and {len(en)} en sentences")
    columns: dict[str, list[Any]] = {ID: list(ids)}
    for lang, sentences in (("zh", zh), ("en", en)):
        columns[ann(lang, "text")] = [s.text for s in sentences]
        columns[ann(lang, "tokens")] = [list(s.tokens) for s in sentences]
        columns[ann(lang, "pos")] = [list(s.pos) for s in sentences]
        columns[ann(lang, "lemma")] = [list(s.lemmas) for s in sentences]
        columns[ann(lang, "head")] = [list(s.heads) for s in sentences]
        columns[ann(lang, "deprel")] = [list(s.deprels) for s in sentences]
        columns[ann(lang, "span_start")] = [[sp.start for sp in s.spans] for s in sentences]
        columns[ann(lang, "span_end")] = [[sp.end for sp in s.spans] for s in sentences]
        columns[ann(lang, "span_label")] = [[sp.label for sp in s.spans] for s in sentences]
    schema = annotation_schema()
    return pl.DataFrame(columns, schema=schema).select(list(schema))


def sentences_from_frame(df: pl.DataFrame, lang: Lang) -> list[AnnotatedSentence]:
    """Rebuild one language's AnnotatedSentences from an annotations frame."""
    cols = [ann(lang, f) for f in ("text", "tokens", "pos", "lemma", "head", "deprel",
                                   "span_start", "span_end", "span_label")]
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ConfigError(f"annotation frame lacks columns {', '.join(missing)}",
                          hint="pass a frame read from annotations.parquet")
    out = []
    for text, tokens, pos, lemma, head, deprel, starts, ends, labels in df.select(cols).iter_rows():
        spans = tuple(Span(s, e, label) for s, e, label in zip(starts or (), ends or (),
                                                              labels or ()))
        out.append(AnnotatedSentence(tuple(tokens or ()), tuple(pos or ()), spans,
                                     tuple(lemma or ()), tuple(head or ()), tuple(deprel or ()),
                                     text or ""))
    return out


# -- run-directory stage ----------------------------------------------------------------------
def _annotate_chunk(session: AnnotationSession, parallel: ParallelText | Path, start: int,
                    stop: int) -> pl.DataFrame:
    """Pairs ``[start, stop)`` of ``parallel`` (in memory, or the path of a staged input of
    which only these rows are read) annotated as an annotations frame."""
    if isinstance(parallel, Path):
        parallel, start, stop = read_staged_rows(parallel, start, stop), 0, stop - start
    zh = session.annotate("zh", parallel.zh[start:stop], pretokenized=parallel.pretokenized)
    en = session.annotate("en", parallel.en[start:stop], pretokenized=parallel.pretokenized)
    return frame_from_sentences(parallel.ids[start:stop], zh, en)


def annotate_stage(run: RunDir, parallel: ParallelText | ParallelSource,
                   settings: AnnotateSettings) -> Path:
    """Write ``annotations.parquet`` (+ ``rejected.jsonl``) into ``run``; resumable."""
    run_stages(run, "annotate", [Stage(STAGE, (), (ANNOTATIONS, REJECTED),
                                       lambda st: annotate_into(st, parallel, settings),
                                       chunked=True)], finish=False)
    return run.path(ANNOTATIONS)


def stage_annotate_input(stage: StageHandle, parallel: ParallelText | ParallelSource,
                         settings: AnnotateSettings) -> StagedInput:
    """Stream the input into the run directory (usable pairs + ``rejected.jsonl``)."""
    staged = stage_source(parallel, stage.run.path(STAGED_INPUT), stage.run.path(REJECTED),
                          batch_rows=settings.chunk_size)
    stage.count(REJECTED, staged.rejected)
    return staged


def annotate_into(stage: StageHandle, parallel: ParallelText | ParallelSource,
                  settings: AnnotateSettings, staged: StagedInput | None = None
                  ) -> StagedInput:
    """The annotate stage's body: the input is staged (streamed into the run directory,
    see :mod:`cppdb.annotate.staging`), then annotated in chunks of ``annotate.chunk_size``
    pairs, each read from the staged file and written atomically (an interrupted run
    resumes at the first missing chunk).  The runner puts the chunks on the run's engine:
    shipped as :func:`annotate_part` to one that runs them elsewhere, else here over the
    process pool."""
    run = stage.run
    with AnnotationSession(settings) as session:
        for lang in ("zh", "en"):
            info = session.describe(lang)
            run.record_backend(f"{lang}_annotator", info["annotator"])
            run.record_backend(f"{lang}_phrases", info["phrases"])
            if "converter" in info:
                run.record_backend("converter", info["converter"])
        staged = staged or stage_annotate_input(stage, parallel, settings)
        shipped = partial(annotate_part, str(staged.path), settings)
        with progress_bar(staged.pairs, "annotate") as advance:
            stage.run_parts(ANNOTATIONS, staged.pairs, settings.chunk_size,
                            lambda start, stop: _annotate_chunk(session, staged.path, start,
                                                                stop),
                            shipped=lambda: nullcontext(shipped), progress=advance)
        staged.path.unlink(missing_ok=True)
        stage.note("pretokenized", staged.pretokenized)
        stage.note("workers", stage.engine_name or session.workers)
    return staged


# -- every engine: the same chunk function, fed from the staged Parquet ---------------------------
def stage_input(parallel: ParallelText, path: Path) -> Path:
    """The usable pairs of an in-memory text as a staged Parquet (see
    :func:`cppdb.annotate.staging.stage_source` for the streamed form)."""
    sidecar = path.with_name(path.name + ".rejected.jsonl")
    stage_source(parallel, path, sidecar, batch_rows=max(1, len(parallel)))
    sidecar.unlink()
    return path


def annotate_part(staged: str, settings: AnnotateSettings, start: int, stop: int
                  ) -> pl.DataFrame:
    """Rows ``[start, stop)`` of the staged input, annotated in this process (a task uses
    one core; the annotators are loaded once per worker process and cached)."""
    with AnnotationSession(settings, workers=1) as session:
        return _annotate_chunk(session, Path(staged), start, stop)
