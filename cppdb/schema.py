"""Column names of the artifacts shared between stages (one place, no magic strings).

annotations.parquet (one row per input sentence pair; ``zh_`` and ``en_`` prefixes):
    id, zh_text, en_text, {lang}_tokens, {lang}_pos, {lang}_lemma, {lang}_head, {lang}_deprel,
    {lang}_span_start, {lang}_span_end, {lang}_span_label       (lists, parallel per sentence)

Pair tables (phrase_pairs / pattern_pairs / sentence_pairs .parquet): see PAIR_COLUMNS.
"""
from __future__ import annotations

import polars as pl

ID = "id"


def ann(lang: str, field: str) -> str:
    """Annotation column name, e.g. ``ann("zh", "tokens") == "zh_tokens"``."""
    return f"{lang}_{field}"


ANNOTATION_FIELDS = ("text", "tokens", "pos", "lemma", "head", "deprel",
                     "span_start", "span_end", "span_label")


def annotation_schema() -> dict[str, pl.DataType]:
    schema: dict[str, pl.DataType] = {ID: pl.Int64}
    for lang in ("zh", "en"):
        schema[ann(lang, "text")] = pl.String
        for name in ("tokens", "pos", "lemma", "deprel", "span_label"):
            schema[ann(lang, name)] = pl.List(pl.String)
        for name in ("head", "span_start", "span_end"):
            schema[ann(lang, name)] = pl.List(pl.Int32)
    return schema


#: one document of the monolingual pipeline, the typed key of units, documents, beads and
#: sentence pairs: a file of a version directory, or one chapter of a file cut into several.
#: PART is null for a whole file, so joins on the key pass ``nulls_equal=True``.
VERSION = "version"          # index of the version directory (0 = the first one given)
PATH = "path"                # the file, as read
PART = "part"                # k-th chapter of a file cut at headings or by content; null: all
DOC_KEY = (VERSION, PATH, PART)
DOC_KEY_SCHEMA: dict[str, pl.DataType] = {VERSION: pl.Int64, PATH: pl.String, PART: pl.Int64}


def doc_key(side: str) -> tuple[str, str, str]:
    """The key columns of one document of a pair: ``doc_key("src") == ("version_src",
    "path_src", "part_src")``."""
    return tuple(f"{column}_{side}" for column in DOC_KEY)  # type: ignore[return-value]


SRC_DOC, TGT_DOC = doc_key("src"), doc_key("tgt")
#: the two documents of a pair (beads, sentence pairs): version_src, path_src, part_src, ...
PAIR_DOC_SCHEMA: dict[str, pl.DataType] = {
    column: dtype for side in (SRC_DOC, TGT_DOC)
    for column, dtype in zip(side, DOC_KEY_SCHEMA.values())}


# -- pair tables (every granularity; produced by extractors, consumed by features/rank) ------
SOURCE = "source"            # space-joined tokens (phrase/pattern) or raw sentence text
TARGET = "target"
SOURCE_TOKENS = "source_tokens"   # list[str]
TARGET_TOKENS = "target_tokens"   # list[str]
TYPE = "type"                # "phrase" | "pattern" | "sentence"
LHS = "lhs"                  # phrase/slot label of the pair (NP, ADJP, ...; "S" for sentences)
SOURCE_POS = "source_pos"    # list[str] CTB tags ("" for slots)
TARGET_POS = "target_pos"
P_TGT_GIVEN_SRC = "p_t_given_s"   # pivot probability p(target|source); null for sentences
P_SRC_GIVEN_TGT = "p_s_given_t"
COUNT = "count"              # co-occurrence count through pivots (1 for sentence pairs)
N_PIVOTS = "n_pivots"
SOURCE_NORM = "source_norm"   # monolingual: the text with names in their canonical spelling
TARGET_NORM = "target_norm"
PIVOTS = "pivots"            # list[str]: the pair's English pivots, best first (bilingual;
                             #   [] for sentence pairs)
DOCUMENTS = "documents"      # list[DOCUMENT]: the documents the pair was aligned in, source
                             #   first (monolingual; [] for pivot pairs)
DOCUMENT = pl.Struct(DOC_KEY_SCHEMA)
ALIGN_SRC = "align_src"      # list[int32]: word alignment between source and target,
ALIGN_TGT = "align_tgt"      #   parallel lists (Pharaoh pairs src-tgt)
ORIGIN = "origin"            # "bilingual" | "ebook" | "subtitle" | ...

PAIR_COLUMNS: dict[str, pl.DataType] = {
    SOURCE: pl.String, TARGET: pl.String,
    SOURCE_TOKENS: pl.List(pl.String), TARGET_TOKENS: pl.List(pl.String),
    TYPE: pl.String, LHS: pl.String,
    SOURCE_POS: pl.List(pl.String), TARGET_POS: pl.List(pl.String),
    P_TGT_GIVEN_SRC: pl.Float64, P_SRC_GIVEN_TGT: pl.Float64,
    COUNT: pl.Int64, N_PIVOTS: pl.Int64, PIVOTS: pl.List(pl.String),
    DOCUMENTS: pl.List(DOCUMENT),
    ALIGN_SRC: pl.List(pl.Int32), ALIGN_TGT: pl.List(pl.Int32), ORIGIN: pl.String,
}

PAIR_TYPES = ("phrase", "pattern", "sentence")
#: columns of a ranked table: PPDB 2.0's relation ("Exclusion" where the evidence of
#: cppdb/rank/exclusion.py decides it, else the classifier's, cppdb/rank/relations.py; null:
#: not decided), and that evidence ("antonym increase/decrease")
RELATION = "relation"
RELATION_EVIDENCE = "relation_evidence"
#: the relation classifier's probability of ``relation`` (cppdb/rank/relations.py); null
#: where the Exclusion rule or no classifier gave it
RELATION_PROBABILITY = "relation_probability"

# -- the other run artifacts ------------------------------------------------------------------
#: lex_zh_given_en.parquet / lex_en_given_zh.parquet: the word aligner's lexical tables
ZH = "zh"                    # a Chinese string (word, phrase or pattern)
EN = "en"                    # an English string
LEX_SCHEMA: dict[str, pl.DataType] = {ZH: pl.String, EN: pl.String, "prob": pl.Float64}
#: alignment.parquet: word links per sentence pair (parallel lists, 0-based, zh first)
LINK_ZH = "link_zh"
LINK_EN = "link_en"
ALIGNMENT_SCHEMA: dict[str, pl.DataType] = {
    ID: pl.Int64, LINK_ZH: pl.List(pl.Int32), LINK_EN: pl.List(pl.Int32)}
#: phrase_occurrences.parquet: one aligned (zh phrase/pattern, en pivot) occurrence
KIND = "kind"                # "phrase" | "pattern"
EN_LABEL = "en_label"
ZH_POS = "zh_pos"            # space-joined CTB tags of the Chinese side
SLOT_SIG = "slot_sig"        # slot labels of a pattern joined by "|" ("" for phrases)
#: a token of a pattern that is a slot (non-terminal): [NP1], [ADJP2], [X1]
SLOT_TOKEN_PATTERN = r"^\[[A-Z$]+\d*\]$"
SWAPPED = "swapped"          # the two sides order their slots differently
ALIGN = "align"              # word links inside the pair, packed: zh·LINK_BASE + en
#: the one packing base of word links (occurrences, pivot, lexical weights): positions inside a
#: phrase or pattern stay far below it.  Packed ints, not List(Struct) links or List(String)
#: tokens: those were 2-4× slower to pivot, weigh and export, and 1.5-1.8× larger
#: (docs/benchmarks/links.md)
LINK_BASE = 65536


def link_zh(code: pl.Expr) -> pl.Expr:
    """The Chinese position of a packed word link (an element of :data:`ALIGN`)."""
    return code // LINK_BASE


def link_en(code: pl.Expr) -> pl.Expr:
    """The English position of a packed word link."""
    return code % LINK_BASE


OCCURRENCE_SCHEMA: dict[str, pl.DataType] = {
    ID: pl.Int64, KIND: pl.String, LHS: pl.String, EN_LABEL: pl.String,
    ZH: pl.String, EN: pl.String, ZH_POS: pl.String,
    SLOT_SIG: pl.String, SWAPPED: pl.Boolean,
    "zh_start": pl.Int32, "zh_end": pl.Int32, "en_start": pl.Int32, "en_end": pl.Int32,
    ALIGN: pl.List(pl.Int32),
}

# -- the pivot's intermediate tables (the same on the polars and the Spark engine) ----------
#: units: one row per (Chinese side z, English pivot e)
PIVOT_KEYS = (LHS, SLOT_SIG, EN)             # one English pivot
UNIT_KEYS = PIVOT_KEYS + (ZH, SWAPPED)       # one (z, e) unit
C_ZE = "c_ze"                # c(z, e)
C_Z = "c_z"                  # c(z)
P_Z_GIVEN_E = "p_z_given_e"
P_E_GIVEN_Z = "p_e_given_z"
RANK_IN_E = "rank_in_e"      # 1 = the most frequent Chinese side of the pivot
RANK_IN_Z = "rank_in_z"      # 1 = the most frequent English side of the Chinese side
#: contributions: the self-join of the units of one pivot, z1 (source) with z2 (target)
TARGET_RAW = "target_raw"    # z2 before its slots are renumbered to z1's order
SWAP1, SWAP2 = "swap1", "swap2"
C1, C2 = "c1", "c2"
P_Z1_E, P_Z2_E = "p_z1_e", "p_z2_e"
P_E_Z1, P_E_Z2 = "p_e_z1", "p_e_z2"
ALIGN1, ALIGN2 = "align1", "align2"
FWD = "fwd"                  # p(z2|e)·p(e|z1)
BWD = "bwd"                  # p(z1|e)·p(e|z2)
JOINT = "joint"              # min(c(z1, e), c(z2, e))
SOURCE_COUNT = "source_count"    # c(z1): extra columns of the bilingual pair tables
TARGET_COUNT = "target_count"
SLOT_SIGNATURE = "slot_signature"
#: the pivot's evidence per pair: Σ over pivots of the fewer distinct sentences of
#: its two sides; whether two different sentences ever support it; whether all its support is
#: two nested spans of one sentence linked to one English span (an echo, not a paraphrase)
N_SENTENCES = "n_sentences"
CROSS_SENTENCE = "cross_sentence"
NESTED_ONLY = "nested_only"
#: near_identity_pairs.parquet: the pair-table columns and why the pair left the table
NEAR_IDENTITY_PAIRS = "near_identity_pairs.parquet"
REASON = "reason"
#: unit columns behind the evidence: the first and last sentence id of the unit's
#: occurrences, its distinct sentences, and its spans when it occurs at one place only
SENT_FIRST, SENT_LAST, N_SENT = "sent_first", "sent_last", "n_sent"
PLACE = ("place_zh_start", "place_zh_end", "place_en_start", "place_en_end")
UNIT_EVIDENCE = (SENT_FIRST, SENT_LAST, N_SENT, *PLACE)
#: per contribution (one pivot of one pair): the evidence flags the pair aggregates
CROSS, NESTED, JOINT_SENT = "cross", "nested", "joint_sent"
#: unit column -> its name on the source side and on the target side of a contribution
CONTRIBUTION_SIDES: tuple[tuple[str, str, str], ...] = (
    (ZH, SOURCE, TARGET_RAW), (ZH_POS, SOURCE_POS, TARGET_POS), (SWAPPED, SWAP1, SWAP2),
    (C_ZE, C1, C2), (C_Z, SOURCE_COUNT, TARGET_COUNT), (P_Z_GIVEN_E, P_Z1_E, P_Z2_E),
    (P_E_GIVEN_Z, P_E_Z1, P_E_Z2), (ALIGN, ALIGN1, ALIGN2))
#: the bilingual pair tables: the pair columns and these
BILINGUAL_PAIR_EXTRA: dict[str, pl.DataType] = {
    SOURCE_COUNT: pl.Int64, TARGET_COUNT: pl.Int64, SLOT_SIGNATURE: pl.String,
    N_SENTENCES: pl.Int64, CROSS_SENTENCE: pl.Boolean, NESTED_ONLY: pl.Boolean}
#: beads.parquet (monolingual): sentence-alignment beads per document pair
BEAD_SCHEMA: dict[str, pl.DataType] = {
    "group": pl.Int64, **PAIR_DOC_SCHEMA, "bead": pl.Int64,
    "src": pl.List(pl.Int32), "tgt": pl.List(pl.Int32), "kind": pl.String,
    "cost": pl.Float64, "anchor": pl.Boolean,
    "confidence": pl.Float64}        # of a 1-1 bead being a correct pair; null for others
#: cue times of both lines of a monolingual pair (from units.parquet) and what they say
#: (cppdb/align/sentences/cue_times.py); null when a line has no cue times
SRC_START, SRC_END, TGT_START, TGT_END = "src_start_ms", "src_end_ms", "tgt_start_ms", "tgt_end_ms"
CUE_OFFSET = "cue_offset_ms"     # local offset of the two tracks (median of nearby pairs)
CUE_GAP = "cue_gap_ms"           # how far apart the two cues are after that offset (0: they meet)
CUE_OVERLAP = "cue_overlap"      # time on screen together / the shorter cue's duration
CUE_COLUMNS: dict[str, pl.DataType] = {
    CUE_OFFSET: pl.Float64, CUE_GAP: pl.Float64, CUE_OVERLAP: pl.Float64}
#: units.parquet (monolingual): one row per sentence/line of every version file
UNIT_SCHEMA: dict[str, pl.DataType] = {
    **DOC_KEY_SCHEMA, "kind": pl.String, "position": pl.Int64, "text": pl.String,
    "original": pl.String,
    "start_ms": pl.Int64, "end_ms": pl.Int64}
#: skipped.parquet (monolingual): files that could not be read, and why
SKIPPED_SCHEMA: dict[str, pl.DataType] = {"path": pl.String, "reason": pl.String}
#: documents.parquet (monolingual): each file's group (null: unpaired, with the reason)
DOCUMENT_SCHEMA: dict[str, pl.DataType] = {
    "group": pl.Int64, **DOC_KEY_SCHEMA, "score": pl.Float64, "method": pl.String,
    "reason": pl.String}
#: alignment_notes.parts/ (monolingual align, per chunk; collected into the manifest, deleted)
ALIGNMENT_NOTE_SCHEMA: dict[str, pl.DataType] = {"note": pl.String}
#: entities.parquet (monolingual): transliteration variant -> canonical name
ENTITY_SCHEMA: dict[str, pl.DataType] = {
    "canonical": pl.String, "variant": pl.String, "count": pl.Int64}
#: records.parquet (build-compression): one row per input pair, kept or rejected. The lines of
#: compressions.jsonl / rejected.jsonl are rebuilt from these columns
#: (``extractors/compression/records.py``); a column is null where the pair did not get that far
#: (no ``links`` if it was rejected before alignment, no ``tokens`` ... ``sentence_chars`` if
#: it was rejected before parsing).
#: one headline–sentence link (``Link.to_json``; ``matched`` only for paraphrase links)
COMPRESSION_LINK = pl.Struct({
    "headline": pl.String, "sentence": pl.String, "h_start": pl.Int32, "h_end": pl.Int32,
    "s_start": pl.Int32, "s_end": pl.Int32, "method": pl.String, "score": pl.Float64,
    "matched": pl.List(pl.String)})
#: one token the dependency-tree transformation added to the compression
DTT_ADDITION = pl.Struct({"token": pl.Int32, "word": pl.String, "head": pl.Int32,
                          "rule": pl.String, "deprel": pl.String})
#: one input field carried to the output unchanged: its values are whatever the user's JSON
#: held, so they stay JSON text (``name`` has ``input_`` prepended if it clashes with ours)
CARRIED_FIELD = pl.Struct({"name": pl.String, "json": pl.String})
COMPRESSION_RECORD_SCHEMA: dict[str, pl.DataType] = {
    "line": pl.Int64, "status": pl.String,            # "kept" | "rejected"
    "rule": pl.String, "detail": pl.String,           # the rule that rejected the pair ("" if kept)
    "headline": pl.String, "sentence": pl.String, "carried": pl.List(CARRIED_FIELD),
    "links": pl.List(COMPRESSION_LINK),
    "tokens": pl.List(pl.String), "upos": pl.List(pl.String), "heads": pl.List(pl.Int32),
    "deprels": pl.List(pl.String), "labels": pl.List(pl.Int8),   # heads: −1 = root; 1 = kept
    "compression": pl.String, "keywords": pl.List(pl.Int32), "dtt_added": pl.List(DTT_ADDITION),
    "compression_chars": pl.Int32, "headline_chars": pl.Int32, "sentence_chars": pl.Int32,
    # statistics for report.json (rates unrounded; the JSONL rounds them to 4 places)
    "link_methods": pl.List(pl.String), "link_h_tokens": pl.List(pl.Int32),
    "n_keywords": pl.Int32, "n_headline_content": pl.Int32, "n_headline_aligned": pl.Int32,
    "compression_rate": pl.Float64, "headline_ratio": pl.Float64,
    "dtt_rules": pl.List(pl.String),
}


# -- reports of rank and evaluate --------------------------------------------------------
#: ranking/tiers.parquet: one row per pair type and tier
TIERS_SCHEMA: dict[str, pl.DataType] = {
    "type": pl.String, "tier": pl.String, "share": pl.Float64, "pairs": pl.Int64,
    "score_cutoff": pl.Float64}
#: the automatic metrics of `cppdb evaluate` (Table 3/4), each with a bootstrap interval
EVALUATION_METRICS = ("edit_distance", "normalised_edit_distance", "template_edit_distance",
                      "template_normalised_edit_distance", "containment",
                      "containment_in_order", "cosine",
                      "cosine_second")
EVALUATION_TABLE_SCHEMA: dict[str, pl.DataType] = {
    "type": pl.String, "top": pl.String, "pairs": pl.Int64,
    "edit_distance": pl.Float64, "normalised_edit_distance": pl.Float64,
    "template_edit_distance": pl.Float64, "template_normalised_edit_distance": pl.Float64,
    "containment": pl.Float64, "containment_in_order": pl.Float64,
    "embedded": pl.Int64, "cosine": pl.Float64, "cosine_second": pl.Float64,
    **{f"{m}_{end}": pl.Float64 for m in EVALUATION_METRICS for end in ("low", "high")}}
#: the acceptability table of rated sheets (Table 5/6)
ACCEPTABILITY_SCHEMA: dict[str, pl.DataType] = {
    "type": pl.String, "top": pl.String, "pairs": pl.Int64, "rated": pl.Int64,
    "share_5": pl.Float64, "share_4_or_more": pl.Float64, "share_3_or_more": pl.Float64,
    "share_3_low": pl.Float64, "share_3_high": pl.Float64,
    "estimated_acceptable": pl.Int64, "not_extrapolated": pl.String}


# -- artifact files -------------------------------------------------------------------------
# The one table of the file names stages exchange through a run directory (and that readers
# of a run look for); modules import these names instead of spelling the files.
ANNOTATIONS_FILE = "annotations.parquet"           # annotate (bilingual, cppdb annotate)
REJECTED_FILE = "rejected.jsonl"                   # input lines refused (annotate, compression)
ALIGNMENT_FILE = "alignment.parquet"               # bilingual align
LEX_EN_GIVEN_ZH_FILE = "lex_en_given_zh.parquet"   # bilingual align: lexical tables
LEX_ZH_GIVEN_EN_FILE = "lex_zh_given_en.parquet"
OCCURRENCES_FILE = "phrase_occurrences.parquet"    # bilingual extract
PHRASE_PAIRS_FILE = "phrase_pairs.parquet"         # bilingual pivot
PATTERN_PAIRS_FILE = "pattern_pairs.parquet"
UNITS_FILE = "units.parquet"                       # monolingual read
SKIPPED_FILE = "skipped.parquet"
DOCUMENTS_FILE = "documents.parquet"               # monolingual documents
BEADS_FILE = "beads.parquet"                       # monolingual align
ENTITIES_FILE = "entities.parquet"                 # monolingual entities
SENTENCE_PAIRS_FILE = "sentence_pairs.parquet"     # monolingual pairs
PAIR_TABLE_FILES = (PHRASE_PAIRS_FILE, PATTERN_PAIRS_FILE, SENTENCE_PAIRS_FILE)
RANKING_DIR = "ranking"                            # cppdb rank's sub-run
FILTERED_FILE = "filtered_pairs.parquet"           # rank filter: rejected pairs, with a reason
FEATURES_FILE = "features.parquet"                 # rank features
RANKED_FILE = "ranked_pairs.parquet"               # rank score
PRUNED_FILE = "pruned_pairs.parquet"               # rank score: low-ranked unrelated pairs
TIERS_FILE = "tiers.parquet"
COMPRESSIONS_FILE = "compressions.jsonl"           # build-compression write
COMPRESSION_REPORT_FILE = "report.json"
ARTIFACT_FILES = (ANNOTATIONS_FILE, REJECTED_FILE, ALIGNMENT_FILE, LEX_EN_GIVEN_ZH_FILE,
                  LEX_ZH_GIVEN_EN_FILE, OCCURRENCES_FILE, *PAIR_TABLE_FILES, UNITS_FILE,
                  SKIPPED_FILE, DOCUMENTS_FILE, BEADS_FILE, ENTITIES_FILE, FEATURES_FILE,
                  RANKED_FILE, PRUNED_FILE, TIERS_FILE, COMPRESSIONS_FILE,
                  NEAR_IDENTITY_PAIRS)


# -- write order ----------------------------------------------------------------------------
# Every artifact that a group-by or a worker pool can produce in varying row order is written
# sorted by these keys (then by its remaining scalar columns, so ties cannot reorder), which
# makes two identical runs byte-identical and keeps downstream stages (the ranker) stable.
PAIR_SORT_KEY = (TYPE, LHS, SOURCE, TARGET, SLOT_SIGNATURE)
SORT_KEYS: dict[str, tuple[str, ...]] = {
    PHRASE_PAIRS_FILE: PAIR_SORT_KEY,
    PATTERN_PAIRS_FILE: PAIR_SORT_KEY,
    NEAR_IDENTITY_PAIRS: PAIR_SORT_KEY,
}


def sort_for_write(artifact: str, frame: pl.DataFrame | pl.LazyFrame
                   ) -> pl.DataFrame | pl.LazyFrame:
    """``frame`` in the declared write order of ``artifact`` (unchanged if it has none)."""
    key = SORT_KEYS.get(artifact)
    if key is None:
        return frame
    schema = frame.collect_schema() if isinstance(frame, pl.LazyFrame) else frame.schema
    first = [c for c in key if c in schema]
    rest = [c for c, dtype in schema.items() if c not in first
            and not isinstance(dtype, (pl.List, pl.Array, pl.Struct))]
    return frame.sort(first + rest, nulls_last=True, maintain_order=True) if first else frame
