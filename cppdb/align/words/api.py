"""Python API of word alignment: ``align_tokenized`` (what the bilingual extractor calls).

Steps: screen pairs (empty / overlong → rejected, with a reason) → build the configured
aligners (unusable ones skipped and reported, or an error with ``strict = true``) → train the
statistical ones on train + input pairs → one matrix per pair and aligner → ensemble → links.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from cppdb import schema
from cppdb.align.words.base import CHUNK_PAIRS, TokenPair, WordAligner, check_pairs
from cppdb.align.words.ensemble import EnsembleParams, combine, decode, load_params
from cppdb.align.words.matrices import RejectedPair, chunk_matrices
from cppdb.align.words.pool import FixedAlignerPool
from cppdb.align.words.settings import AlignWordsSettings
from cppdb.errors import BadInputError, ConfigError, CppdbError, RunStateError
from cppdb.progress import console
from cppdb.registry import CAPABILITIES, create_backend
from cppdb.workers import resolve_workers

SECTION = "align_words"
LEX_SCHEMA = schema.LEX_SCHEMA
_STATISTICAL = ("thot", "eflomal")


@dataclass(frozen=True)
class SkippedAligner:
    name: str
    reason: str


@dataclass(frozen=True)
class WordAlignment:
    """Links per input pair (zh index, en index; 0-based) and what produced them."""

    links: list[list[tuple[int, int]]]
    aligners_used: tuple[str, ...]
    lex_en_given_zh: pl.DataFrame   # columns zh, en, prob = p(en | zh)
    lex_zh_given_en: pl.DataFrame   # columns zh, en, prob = p(zh | en)
    params: EnsembleParams | None = None
    rejected: tuple[RejectedPair, ...] = ()
    skipped_aligners: tuple[SkippedAligner, ...] = ()
    signatures: tuple[str, ...] = ()
    #: pairs aligned without one aligner's votes because it failed on them (they have links)
    degraded: tuple[RejectedPair, ...] = ()
    matrices: dict[str, list[np.ndarray]] = field(default_factory=dict, compare=False,
                                                  repr=False)


def ensemble_params(settings: AlignWordsSettings) -> EnsembleParams:
    """Weights/decoding from the tuned file when configured, else from the settings."""
    if settings.tuned_file:
        return load_params(settings.tuned_file)
    _check_names(settings.aligners)
    weights = tuple((name, settings.weights.get(name, 0.0)) for name in settings.aligners)
    return EnsembleParams(weights, settings.threshold, settings.decode, settings.sure_threshold)


def _check_names(names: Sequence[str]) -> None:
    known = CAPABILITIES["word_aligner"].backends
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"unknown aligner(s) {', '.join(unknown)} in align_words.aligners",
                          hint=f"choose from: {', '.join(known)}")
    if not names:
        raise ConfigError("align_words.aligners is empty", hint='e.g. ["thot", "dictionary"]')


def build_aligners(settings: AlignWordsSettings, names: Sequence[str] | None = None
                   ) -> tuple[dict[str, WordAligner], tuple[SkippedAligner, ...]]:
    """Instantiate and check the aligners; unusable ones are skipped (reported) or raise."""
    names = list(names if names is not None else settings.aligners)
    _check_names(names)
    aligners: dict[str, WordAligner] = {}
    skipped: list[SkippedAligner] = []
    for name in names:
        options = settings.options(name)
        try:
            backend = create_backend("word_aligner", name, **options)
            backend.check()
        except CppdbError as exc:
            if settings.strict:
                raise
            skipped.append(SkippedAligner(name, exc.message))
            console().print(f"[yellow]word aligner '{name}' skipped:[/yellow] {exc.message}"
                            + (f" ({exc.hint})" if exc.hint else ""))
            continue
        aligners[name] = backend  # type: ignore[assignment]
    if not aligners:
        raise ConfigError("none of the configured word aligners is usable: "
                          + "; ".join(f"{s.name}: {s.reason}" for s in skipped),
                          hint="run `cppdb doctor` to see how to enable them")
    return aligners, tuple(skipped)


def screen_pairs(zh: Sequence[Sequence[str]], en: Sequence[Sequence[str]], max_tokens: int
                 ) -> tuple[list[int], list[RejectedPair]]:
    """Indices of pairs to align, and the rejected ones with their reason."""
    if len(zh) != len(en):
        raise BadInputError(f"{len(zh)} Chinese sentences but {len(en)} English sentences",
                            hint="pass one English token list per Chinese token list")
    kept, rejected = [], []
    for k, (z, e) in enumerate(zip(zh, en)):
        if len(z) == 0 or len(e) == 0:
            side = "zh" if len(z) == 0 else "en"
            rejected.append(RejectedPair(k, f"empty {side} side"))
        elif max(len(z), len(e)) > max_tokens:
            rejected.append(RejectedPair(
                k, f"too long: {len(z)} zh / {len(e)} en tokens > max_tokens={max_tokens}"))
        else:
            kept.append(k)
    return kept, rejected


def _train_all(aligners: dict[str, WordAligner], pairs: Sequence[TokenPair],
               train_pairs: Sequence[TokenPair]) -> int:
    """Train the statistical aligners on train + input pairs; return where the input starts."""
    for aligner in aligners.values():
        if aligner.needs_training:
            aligner.train(list(train_pairs) + list(pairs))
    return len(train_pairs)


def compute_matrices(aligners: dict[str, WordAligner], pairs: Sequence[TokenPair],
                     train_pairs: Sequence[TokenPair] = (),
                     en_lemmas: Sequence[Sequence[str]] | None = None
                     ) -> dict[str, list[np.ndarray]]:
    """All matrices of all pairs from every aligner (statistical ones trained first) — for
    tuning on dev sets; ``align_tokenized`` streams chunks instead."""
    offset = _train_all(aligners, pairs, train_pairs)
    return chunk_matrices(aligners, pairs, en_lemmas, offset)


def _stream_links(aligners: dict[str, WordAligner], pairs: Sequence[TokenPair],
                  lemmas: Sequence[Sequence[str]] | None, offset: int, params: EnsembleParams,
                  keep: dict[str, list[np.ndarray]] | None,
                  failed: list[RejectedPair], pool: FixedAlignerPool | None = None
                  ) -> list[list[tuple[int, int]]]:
    """Matrices → ensemble → links chunk by chunk: memory stays bounded by the chunk.  With
    ``pool``, its aligners' matrices come from its workers, one chunk ahead of the decoding
    here; the trained aligners' matrices are computed here."""
    here = {name: a for name, a in aligners.items() if pool is None or name not in pool.names}
    starts = list(range(0, len(pairs), CHUNK_PAIRS))

    def send(start: int) -> Any:
        if pool is None:
            return None
        return pool.submit(pairs[start:start + CHUNK_PAIRS],
                           None if lemmas is None else lemmas[start:start + CHUNK_PAIRS])

    links: list[list[tuple[int, int]]] = []
    ahead = send(starts[0]) if starts else None
    for number, start in enumerate(starts):
        sent, ahead = ahead, send(starts[number + 1]) if number + 1 < len(starts) else None
        chunk = pairs[start:start + CHUNK_PAIRS]
        chunk_lemmas = None if lemmas is None else lemmas[start:start + CHUNK_PAIRS]
        chunk_failed: list[RejectedPair] = []
        mats = chunk_matrices(here, chunk, chunk_lemmas, offset + start, chunk_failed)
        if pool is not None:
            pooled, pooled_failed = pool.collect(sent)
            chunk_failed += [RejectedPair(first + f.index, f.reason) for first, f in pooled_failed]
            mats = {name: mats[name] if name in mats else pooled[name] for name in aligners}
        failed.extend(RejectedPair(start + f.index, f.reason) for f in chunk_failed)
        links.extend(decode(combine(mats, params), params))
        if keep is not None:
            for name, chunk_mats in mats.items():
                keep.setdefault(name, []).extend(chunk_mats)
    return links


def configured_workers(settings: AlignWordsSettings) -> int:
    """The processes ``align_words.workers`` asks for (0 = all cores)."""
    return resolve_workers(settings.workers, f"{SECTION}.workers")


def _fixed_pool(aligners: dict[str, WordAligner], workers: int) -> FixedAlignerPool | None:
    """Worker processes for the aligners that need no training, when ``workers`` > 1 and
    both kinds are present (with no statistical aligner every pair is aligned alike in
    chunks elsewhere: ``train_ensemble`` / ``align_with``)."""
    fixed = {name: a for name, a in aligners.items() if not a.needs_training}
    if workers <= 1 or not fixed or len(fixed) == len(aligners):
        return None
    return FixedAlignerPool(fixed, workers)


def lexical_frames(aligners: dict[str, WordAligner]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """p(e|f), p(f|e) from the first statistical aligner used (empty frames if none)."""
    for name in _STATISTICAL:
        if name in aligners:
            return aligners[name].lexical_frames()  # type: ignore[attr-defined]
    empty = pl.DataFrame(schema=LEX_SCHEMA)
    return empty, empty


def _screen_train(train: tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]] | None,
                  max_tokens: int) -> list[TokenPair]:
    if train is None:
        return []
    zh, en = train
    kept, rejected = screen_pairs(zh, en, max_tokens)
    if rejected:
        console().print(f"[yellow]{len(rejected)} training pair(s) left out of statistical "
                        f"training[/yellow] (first: pair {rejected[0].index + 1}, "
                        f"{rejected[0].reason})")
    return [(zh[k], en[k]) for k in kept]


def align_tokenized(zh: Sequence[Sequence[str]], en: Sequence[Sequence[str]],
                    settings: AlignWordsSettings,
                    *, train: tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]] | None = None,
                    zh_pos: Sequence[Sequence[str]] | None = None,
                    en_pos: Sequence[Sequence[str]] | None = None,
                    en_lemmas: Sequence[Sequence[str]] | None = None,
                    keep_matrices: bool = False, workers: int = 1) -> WordAlignment:
    """Align tokenised zh–en pairs with the configured ensemble.

    ``train`` adds parallel text used only to train the statistical models.  POS tags are
    accepted for interface stability (checked for length; current aligners do not use them);
    ``en_lemmas`` (e.g. spaCy lemmas) improve dictionary matching.  Empty and overlong pairs
    get no links and are listed in ``rejected``.  ``workers`` > 1: the aligners that need no
    training run in that many processes (:mod:`cppdb.align.words.pool`) while the statistical
    one trains and then reuses its training alignments here.
    """
    for name, extra in (("zh_pos", zh_pos), ("en_pos", en_pos), ("en_lemmas", en_lemmas)):
        if extra is not None:
            ref = zh if name == "zh_pos" else en
            if len(extra) != len(ref) or any(len(a) != len(b) for a, b in zip(extra, ref)):
                raise BadInputError(f"{name} must have one entry per token of every sentence")
    kept, rejected = screen_pairs(zh, en, settings.max_tokens)
    pairs = [(list(zh[k]), list(en[k])) for k in kept]
    check_pairs(pairs)
    train_pairs = _screen_train(train, settings.max_tokens)
    params = ensemble_params(settings)
    aligners, skipped = build_aligners(settings, params.names)
    params = params.restricted(tuple(aligners))
    lemmas = [list(en_lemmas[k]) for k in kept] if en_lemmas is not None else None
    links: list[list[tuple[int, int]]] = [[] for _ in zh]
    matrices: dict[str, list[np.ndarray]] = {}
    failed: list[RejectedPair] = []
    if pairs:
        pool = _fixed_pool(aligners, workers)
        try:
            offset = _train_all(aligners, pairs, train_pairs)
            pair_links = _stream_links(aligners, pairs, lemmas, offset, params,
                                       matrices if keep_matrices else None, failed, pool)
        finally:
            if pool is not None:
                pool.shutdown()
        for k, one in zip(kept, pair_links):
            links[k] = one
    lex_e_f, lex_f_e = (lexical_frames(aligners) if pairs else
                        (pl.DataFrame(schema=LEX_SCHEMA), pl.DataFrame(schema=LEX_SCHEMA)))
    return WordAlignment(links=links, aligners_used=tuple(aligners), lex_en_given_zh=lex_e_f,
                         lex_zh_given_en=lex_f_e, params=params, rejected=tuple(rejected),
                         skipped_aligners=skipped,
                         signatures=tuple(a.signature() for a in aligners.values()),
                         matrices=matrices,
                         degraded=tuple(sorted((RejectedPair(kept[f.index], f.reason)
                                                for f in failed),
                                               key=lambda f: (f.index, f.reason))))


# -- train once, align in chunks (bounded memory; the same model on every partition) ------------
@dataclass
class TrainedEnsemble:
    """Aligners whose statistical models were trained (on a sample) and are now fixed."""

    aligners: dict[str, WordAligner]
    params: EnsembleParams
    skipped: tuple[SkippedAligner, ...]
    max_tokens: int
    trained_pairs: int

    @property
    def signatures(self) -> tuple[str, ...]:
        return tuple(a.signature() for a in self.aligners.values())

    def lexical_frames(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        return lexical_frames(self.aligners)


def train_ensemble(zh: Sequence[Sequence[str]], en: Sequence[Sequence[str]],
                   settings: AlignWordsSettings) -> TrainedEnsemble:
    """Build the configured aligners and train the statistical ones on ``zh``/``en`` only
    (the training sample); :func:`align_with` then aligns any pairs with the fixed models."""
    max_tokens = settings.max_tokens
    train_pairs = _screen_train((zh, en), max_tokens)
    params = ensemble_params(settings)
    aligners, skipped = build_aligners(settings, params.names)
    for aligner in aligners.values():
        if aligner.needs_training:
            if not train_pairs:
                raise BadInputError("no usable pair to train the statistical word aligner on",
                                    hint="check the input, or raise align_words.train_sample")
            aligner.train(train_pairs)
    return TrainedEnsemble(aligners, params.restricted(tuple(aligners)), tuple(skipped),
                           max_tokens, len(train_pairs))


def align_with(ensemble: TrainedEnsemble, zh: Sequence[Sequence[str]],
               en: Sequence[Sequence[str]], en_lemmas: Sequence[Sequence[str]] | None = None,
               prefetched: tuple[dict[str, list[np.ndarray]], list[RejectedPair]] | None = None
               ) -> tuple[list[list[tuple[int, int]]], list[RejectedPair]]:
    """Links of every pair (empty for rejected ones) decoded with the fixed models.
    ``prefetched``: matrices some aligners already computed for the kept pairs
    (:mod:`cppdb.align.words.prefetch`), and the pairs they failed on."""
    kept, rejected = screen_pairs(zh, en, ensemble.max_tokens)
    pairs = [(list(zh[k]), list(en[k])) for k in kept]
    check_pairs(pairs)
    lemmas = [list(en_lemmas[k]) for k in kept] if en_lemmas is not None else None
    links: list[list[tuple[int, int]]] = [[] for _ in zh]
    ready, failed = ({}, []) if prefetched is None else (prefetched[0], list(prefetched[1]))
    if any(len(m) != len(pairs) for m in ready.values()):
        raise RunStateError("prefetched word-alignment matrices do not match their slice",
                            hint="delete the run's .align-prefetch folder and run again")
    here = {name: a for name, a in ensemble.aligners.items() if name not in ready}
    for start in range(0, len(pairs), CHUNK_PAIRS):
        chunk = pairs[start:start + CHUNK_PAIRS]
        chunk_lemmas = None if lemmas is None else lemmas[start:start + CHUNK_PAIRS]
        mats = chunk_matrices(here, chunk, chunk_lemmas, None, failed)
        mats = {name: mats[name] if name in mats else ready[name][start:start + CHUNK_PAIRS]
                for name in ensemble.aligners}
        for k, one in zip(kept[start:start + CHUNK_PAIRS],
                          decode(combine(mats, ensemble.params), ensemble.params)):
            links[k] = one
    if failed:
        console().print(f"[yellow]{len(failed)} pair(s) aligned without one aligner's votes"
                        f"[/yellow] (first: {failed[0].reason})")
    return links, rejected
