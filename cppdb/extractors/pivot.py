"""Pivot: Chinese phrases (patterns) aligned to the same English one are paraphrases.

p(z2|z1) = Σ_e p(z2|e)·p(e|z1), both from relative frequencies of aligned occurrences
(SPEC §1.6).  The English pivot unit is (LHS, slot signature, English string): two Chinese
sides pair only if they share the Chinese label (LHS) and their slot labels agree slot by
slot through the English pattern.

The work is a sequence of relational steps over Parquet, each partitioned by a hash so that
memory depends on the partition size (``partition_rows``), not on the corpus:

1. occurrences → partitions by English side → units c(z,e), p(z|e), rank of z under e;
2. units → partitions by Chinese side → c(z), p(e|z);
3. units → partitions by English side → self-join (top ``max_per_pivot`` z per e) →
   contributions, written partitioned by (LHS, source);
4. per partition: sum contributions per pair, keep the top anchors, compose the word
   alignment z1→e→z2 through the best pivot.
"""
from __future__ import annotations

import math
import shutil
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from cppdb import schema as S
from cppdb.defaults import toml_defaults
from cppdb.text.function_words import ENGLISH_FUNCTION_WORDS, SLOT

_BILINGUAL = toml_defaults("bilingual")

SEED = 20240611
UNIT_KEYS = list(S.UNIT_KEYS)
PIVOT_KEYS = list(S.PIVOT_KEYS)
_SLOT_SWAP = r"(\[[^\]\s]+?)"
_PLACEHOLDER = "\ue000"


@dataclass(frozen=True)
class PivotSettings:
    max_per_pivot: int = _BILINGUAL["max_per_pivot"]
    max_anchors: int = _BILINGUAL["max_anchors"]
    partition_rows: int = _BILINGUAL["partition_rows"]
    # PPDB-style pruning of pivots (0 / False = off; docs/benchmarks/bilingual.md)
    #: English sides of only function words and slots; off here so that ``pivot()`` without
    #: settings prunes nothing (runs get ``bilingual.prune_function_pivots``, on)
    prune_function_pivots: bool = False
    prune_min_p_e_given_f: float = _BILINGUAL["prune_min_p_e_given_f"]   # p(e|z)
    prune_min_p_f_given_e: float = _BILINGUAL["prune_min_p_f_given_e"]   # p(z|e)
    prune_min_count: int = _BILINGUAL["prune_min_count"]                 # c(z, e)
    prune_max_pivots_per_phrase: int = _BILINGUAL["prune_max_pivots_per_phrase"]


#: the pruning rules in the order they apply, with the unit column that fails each
PRUNING_RULES = ("function_pivot", "min_p_e_given_f", "min_p_f_given_e", "min_count",
                 "max_pivots_per_phrase")


#: the threshold rules of the pivot, for every engine: (rule, the unit column it reads, the
#: comparison that prunes, the smallest value that switches it on); rule R's setting is
#: ``prune_R`` (the counts a run records are named by the rule)
THRESHOLD_RULES: tuple[tuple[str, str, str, float], ...] = (
    ("min_p_e_given_f", S.P_E_GIVEN_Z, "<", 0.0),
    ("min_p_f_given_e", S.P_Z_GIVEN_E, "<", 0.0),
    ("min_count", S.C_ZE, "<", 1.0),
    ("max_pivots_per_phrase", S.RANK_IN_Z, ">", 0.0),
)


def active_threshold_rules(settings: PivotSettings) -> list[tuple[str, str, str, float]]:
    """(rule, column, comparison, value) of every threshold rule the settings switch on."""
    return [(rule, column, op, getattr(settings, f"prune_{rule}"))
            for rule, column, op, off in THRESHOLD_RULES
            if getattr(settings, f"prune_{rule}") > off]


def pruning_masks(units: pl.DataFrame, settings: PivotSettings) -> dict[str, pl.Expr]:
    """One boolean expression per active rule: True where a unit (z, e) is pruned."""
    masks: dict[str, pl.Expr] = {}
    if settings.prune_function_pivots:
        words = sorted(ENGLISH_FUNCTION_WORDS)
        masks["function_pivot"] = pl.col(S.EN).str.split(" ").list.eval(
            pl.element().str.to_lowercase().is_in(words)
            | pl.element().str.contains(SLOT.pattern)).list.all()
    for rule, column, op, value in active_threshold_rules(settings):
        masks[rule] = pl.col(column) < value if op == "<" else pl.col(column) > value
    return masks


def _partition_sink(lf: pl.LazyFrame, base: Path, key: pl.Expr, n_parts: int) -> None:
    """Stream ``lf`` into ``base/part=<k>/*.parquet`` by ``hash(key) % n_parts``."""
    partition = getattr(pl, "PartitionBy", None) or getattr(pl, "PartitionByKey")
    lf = lf.with_columns(_part=(key.hash(seed=SEED) % n_parts).cast(pl.Int32))
    lf.sink_parquet(partition(base, key="_part", include_key=False), mkdir=True)


def _part_files(base: Path, k: int) -> list[Path]:
    return sorted(base.glob(f"*/_part={k}/*.parquet")) + sorted(base.glob(f"_part={k}/*.parquet"))


def _hash_key(*cols: str) -> pl.Expr:
    return pl.struct(cols) if len(cols) > 1 else pl.col(cols[0])


def _units_from_occurrences(occ: pl.LazyFrame) -> pl.DataFrame:
    """c(z,e) with the most frequent internal alignment; p(z|e); rank of z under e.

    The first aggregation streams, so memory follows the number of distinct
    (unit, alignment, POS) combinations, not the number of occurrences: a very frequent
    English phrase makes a partition long, not wide.
    """
    per_align = (occ.group_by(UNIT_KEYS + [S.ALIGN, S.ZH_POS]).agg(n=pl.len())
                 .collect(engine="streaming"))
    by_freq = dict(by=["n", S.ALIGN, S.ZH_POS], descending=[True, False, False])
    units = per_align.group_by(UNIT_KEYS).agg(
        pl.col("n").sum().alias(S.C_ZE), pl.col(S.ALIGN).sort_by(**by_freq).first(),
        pl.col(S.ZH_POS).sort_by(**by_freq).first())
    units = units.join(_unit_evidence(occ), on=UNIT_KEYS, how="left", nulls_equal=True)
    c_e = pl.col(S.C_ZE).sum().over(PIVOT_KEYS)
    # rank 1 = most frequent Chinese side of the pivot; ties broken by the string
    return units.sort([S.C_ZE, S.ZH, S.SWAPPED], descending=[True, False, False]).with_columns(
        (pl.col(S.C_ZE) / c_e).alias(S.P_Z_GIVEN_E),
        (pl.int_range(pl.len()).over(PIVOT_KEYS) + 1).cast(pl.Int64).alias(S.RANK_IN_E),
    )


#: the occurrence columns of a unit's place (zh span, en span), in :data:`S.PLACE` order
PLACE_SOURCES = ("zh_start", "zh_end", "en_start", "en_end")


def _unit_evidence(occ: pl.LazyFrame) -> pl.DataFrame:
    """Per unit: first/last sentence id, distinct sentences, and its one place (else null)."""
    spans = [agg for col in PLACE_SOURCES
             for agg in (pl.col(col).min().alias(f"_lo_{col}"), pl.col(col).max().alias(f"_hi_{col}"))]
    per_unit = (occ.group_by(UNIT_KEYS)
                .agg(pl.col(S.ID).min().alias(S.SENT_FIRST), pl.col(S.ID).max().alias(S.SENT_LAST),
                     pl.col(S.ID).n_unique().cast(pl.Int64).alias(S.N_SENT), *spans)
                .collect(engine="streaming"))
    one_place = pl.col(S.SENT_FIRST) == pl.col(S.SENT_LAST)
    for col in PLACE_SOURCES:
        one_place = one_place & (pl.col(f"_lo_{col}") == pl.col(f"_hi_{col}"))
    return per_unit.select(
        *UNIT_KEYS, S.SENT_FIRST, S.SENT_LAST, S.N_SENT,
        *[pl.when(one_place).then(pl.col(f"_lo_{col}")).cast(pl.Int32).alias(name)
          for col, name in zip(PLACE_SOURCES, S.PLACE, strict=True)])


def evidence_flags(side1: str = "1", side2: str = "2") -> list[pl.Expr]:
    """A contribution's evidence from the units of its two sides (columns ``<unit col><side>``):
    ``cross`` (two different sentences), ``nested`` (one place each, the same sentence and
    English span, one Chinese span inside the other) and ``joint_sent`` (the fewer distinct
    sentences).  The Spark pivot writes the same three in SQL."""
    def c(name: str, side: str) -> pl.Expr:
        return pl.col(name + side)

    zs, ze, es, ee = S.PLACE
    one_sentence = ((c(S.SENT_FIRST, side1) == c(S.SENT_LAST, side1))
                    & (c(S.SENT_FIRST, side2) == c(S.SENT_LAST, side2))
                    & (c(S.SENT_FIRST, side1) == c(S.SENT_FIRST, side2)))
    inside_12 = (c(zs, side1) >= c(zs, side2)) & (c(ze, side1) <= c(ze, side2))
    inside_21 = (c(zs, side2) >= c(zs, side1)) & (c(ze, side2) <= c(ze, side1))
    nested = (one_sentence & (c(es, side1) == c(es, side2)) & (c(ee, side1) == c(ee, side2))
              & (inside_12 | inside_21))
    return [(~one_sentence).alias(S.CROSS), nested.fill_null(False).alias(S.NESTED),
            pl.min_horizontal(c(S.N_SENT, side1), c(S.N_SENT, side2)).alias(S.JOINT_SENT)]


def _add_p_e_given_z(units: pl.DataFrame) -> pl.DataFrame:
    """c(z), p(e|z) and the rank of e among z's English sides (1 = most frequent)."""
    c_z = pl.col(S.C_ZE).sum().over([S.LHS, S.ZH])
    units = units.sort([S.C_ZE, S.EN, S.SLOT_SIG, S.SWAPPED],
                       descending=[True, False, False, False])
    return units.with_columns(c_z.alias(S.C_Z), (pl.col(S.C_ZE) / c_z).alias(S.P_E_GIVEN_Z),
                              (pl.int_range(pl.len()).over([S.LHS, S.ZH]) + 1)
                              .cast(pl.Int64).alias(S.RANK_IN_Z))


def prune_units(units: pl.DataFrame, settings: PivotSettings) -> tuple[pl.DataFrame, dict[str, int]]:
    """Drop pruned units; count the units each rule removes first (rules in
    :data:`PRUNING_RULES` order, so every pruned unit is counted once)."""
    masks = pruning_masks(units, settings)
    if not masks:
        return units, {}
    flags = units.select(**{name: mask.fill_null(False) for name, mask in masks.items()})
    counts, taken = {}, pl.lit(False)
    for name in masks:
        counts[name] = int(flags.select((pl.col(name) & ~taken).sum()).item())
        taken = taken | pl.col(name)
    keep = ~flags.select(pl.any_horizontal(list(masks)).alias("p")).to_series()
    return units.filter(keep), counts


def _swap_slot_indices(expr: pl.Expr) -> pl.Expr:
    """[X1] ↔ [X2] in a pattern string (used when two patterns order their slots differently)."""
    return (expr.str.replace_all(_SLOT_SWAP + r"1\]", "${1}" + _PLACEHOLDER + "]")
            .str.replace_all(_SLOT_SWAP + r"2\]", "${1}1]")
            .str.replace_all(_PLACEHOLDER, "2", literal=True))


#: the columns a contribution carries over from the self-join unchanged
CONTRIBUTION_CARRIED = (*S.PIVOT_KEYS, S.SOURCE, S.SOURCE_POS, S.TARGET_POS, S.SOURCE_COUNT,
                        S.TARGET_COUNT, S.ALIGN1, S.ALIGN2)


def _contributions(units: pl.DataFrame, max_per_pivot: int) -> pl.DataFrame:
    """Self-join of the Chinese sides of each English pivot."""
    kept = units.filter(pl.col(S.RANK_IN_E) <= max_per_pivot)

    def side(index: int) -> pl.DataFrame:
        return kept.select(PIVOT_KEYS + [pl.col(names[0]).alias(names[index])
                                         for names in S.CONTRIBUTION_SIDES]
                           + [pl.col(name).alias(f"{name}{index}") for name in S.UNIT_EVIDENCE])

    pairs = side(1).join(side(2), on=PIVOT_KEYS).filter(pl.col(S.SOURCE) != pl.col(S.TARGET_RAW))
    mismatch = pl.col(S.SWAP1) != pl.col(S.SWAP2)
    return pairs.select(
        *CONTRIBUTION_CARRIED, *evidence_flags(),
        pl.when(mismatch).then(_swap_slot_indices(pl.col(S.TARGET_RAW)))
        .otherwise(pl.col(S.TARGET_RAW)).alias(S.TARGET),
        (pl.col(S.P_Z2_E) * pl.col(S.P_E_Z1)).alias(S.FWD),
        (pl.col(S.P_Z1_E) * pl.col(S.P_E_Z2)).alias(S.BWD),
        pl.min_horizontal(S.C1, S.C2).alias(S.JOINT),
    )


def link_code(zh: int, en: int) -> int:
    """One word link as an int (zh·LINK_BASE + en): cheap to group, join and decode."""
    return zh * S.LINK_BASE + en


def compose_alignments(pairs: pl.DataFrame) -> pl.DataFrame:
    """Add align_src/align_tgt: z1→e links composed with e→z2 links, sorted by (z1, z2)."""
    rows = pairs.with_row_index("_row")

    def exploded(col: str, side: str) -> pl.DataFrame:
        codes = rows.select("_row", pl.col(col).alias("c")).explode("c").drop_nulls("c")
        return codes.select("_row", S.link_zh(pl.col("c")).alias(side),
                            S.link_en(pl.col("c")).alias("e"))

    # the two position lists straight from rows sorted by (z1, z2): 1.3-1.9× faster than
    # packing the composed links again and decoding them with list.eval (benchmarks/links.md)
    composed = (exploded(S.ALIGN1, "s").join(exploded(S.ALIGN2, "t"), on=["_row", "e"])
                .select("_row", "s", "t").unique().sort("_row", "s", "t")
                .group_by("_row", maintain_order=True)
                .agg(pl.col("s").alias(S.ALIGN_SRC), pl.col("t").alias(S.ALIGN_TGT)))
    empty = pl.lit([], dtype=pl.List(pl.Int32))
    return (rows.join(composed, on="_row", how="left")
            .with_columns([pl.col(c).cast(pl.List(pl.Int32)).fill_null(empty)
                           for c in (S.ALIGN_SRC, S.ALIGN_TGT)])
            .sort("_row").drop("_row", S.ALIGN1, S.ALIGN2))


def aggregate_pairs(contrib: pl.DataFrame, kind: str, max_anchors: int) -> pl.DataFrame:
    # one global sort (best pivot first) instead of a sort inside every group
    contrib = contrib.sort([S.FWD, S.EN], descending=[True, False])
    pairs = contrib.group_by([S.LHS, S.SOURCE, S.TARGET]).agg(
        pl.col(S.SOURCE_POS).first(), pl.col(S.TARGET_POS).first(),
        pl.col(S.FWD).sum().alias(S.P_TGT_GIVEN_SRC), pl.col(S.BWD).sum().alias(S.P_SRC_GIVEN_TGT),
        pl.col(S.JOINT).sum().cast(pl.Int64).alias(S.COUNT),
        pl.len().cast(pl.Int64).alias(S.N_PIVOTS),
        pl.col(S.EN).head(max_anchors).alias(S.PIVOTS),
        pl.col(S.ALIGN1).first(), pl.col(S.ALIGN2).first(),
        pl.col(S.SOURCE_COUNT).first().cast(pl.Int64),
        pl.col(S.TARGET_COUNT).first().cast(pl.Int64),
        pl.col(S.SLOT_SIG).first().alias(S.SLOT_SIGNATURE),
        pl.col(S.JOINT_SENT).sum().cast(pl.Int64).alias(S.N_SENTENCES),
        pl.col(S.CROSS).any().alias(S.CROSS_SENTENCE),
        pl.col(S.NESTED).all().alias(S.NESTED_ONLY),
    )
    pairs = compose_alignments(pairs)
    return pairs.with_columns(
        pl.col(S.SOURCE).str.split(" ").alias(S.SOURCE_TOKENS),
        pl.col(S.TARGET).str.split(" ").alias(S.TARGET_TOKENS),
        pl.col(S.SOURCE_POS).str.split(" "), pl.col(S.TARGET_POS).str.split(" "),
        pl.lit(kind).alias(S.TYPE), pl.lit("bilingual").alias(S.ORIGIN),
        pl.lit([], dtype=S.PAIR_COLUMNS[S.DOCUMENTS]).alias(S.DOCUMENTS))


def pair_table_columns() -> list[str]:
    return list(S.PAIR_COLUMNS) + list(S.BILINGUAL_PAIR_EXTRA)


def empty_pair_table() -> pl.DataFrame:
    return pl.DataFrame(schema={**S.PAIR_COLUMNS, **S.BILINGUAL_PAIR_EXTRA})


def finalise(frame: pl.DataFrame) -> pl.DataFrame:
    schema = empty_pair_table().schema
    return frame.select([pl.col(name).cast(dtype) for name, dtype in schema.items()])


def pivot(occurrences: pl.LazyFrame, kind: str, work_dir: str | Path,
          settings: PivotSettings = PivotSettings(),
          pruned_units: dict[str, int] | None = None) -> list[Path]:
    """Pivot one kind of occurrence (``phrase`` or ``pattern``); return the part files.

    ``occurrences`` needs the columns lhs, slot_sig, en, zh, swapped, zh_pos (space-joined
    tags) and align (list of :func:`link_code` ints, zh position first).  The result files have the pair-table columns
    (:func:`pair_table_columns`); ``work_dir`` holds the intermediate partitions.
    ``pruned_units``, if given, receives the number of (z, e) units each pruning rule removed.
    """
    work = Path(work_dir)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    n_occ = occurrences.select(pl.len()).collect().item()
    if pruned_units is None:
        pruned_units = {}
    if n_occ == 0:
        return []
    n_parts = max(1, math.ceil(n_occ / settings.partition_rows))
    _partition_sink(occurrences, work / "occ", pl.col(S.EN), n_parts)
    for k in range(n_parts):
        files = _part_files(work / "occ", k)
        if files:
            units = _units_from_occurrences(pl.scan_parquet(files))
            _partition_sink(units.lazy(), work / "units_e" / f"e{k}", _hash_key(S.LHS, S.ZH),
                            n_parts)
    for k in range(n_parts):
        files = _part_files(work / "units_e", k)
        if files:
            units, pruned = prune_units(_add_p_e_given_z(pl.read_parquet(files)), settings)
            for name, count in pruned.items():
                pruned_units[name] = pruned_units.get(name, 0) + count
            _partition_sink(units.lazy(), work / "units_z" / f"z{k}", pl.col(S.EN), n_parts)
    n_contrib = sum(_estimate_contributions(_part_files(work / "units_z", k),
                                            settings.max_per_pivot) for k in range(n_parts))
    # a contribution row weighs ~4× an occurrence row once aggregated and composed
    n_out = max(1, math.ceil(4 * n_contrib / settings.partition_rows))
    for k in range(n_parts):
        files = _part_files(work / "units_z", k)
        if files:
            contrib = _contributions(pl.read_parquet(files), settings.max_per_pivot)
            if contrib.height:
                _partition_sink(contrib.lazy(), work / "contrib" / f"c{k}",
                                _hash_key(S.LHS, S.SOURCE), n_out)
    outputs = []
    for k in range(n_out):
        files = _part_files(work / "contrib", k)
        if files:
            pairs = finalise(aggregate_pairs(pl.read_parquet(files), kind,
                                               settings.max_anchors))
            out = work / "pairs" / f"part-{k:05d}.parquet"
            out.parent.mkdir(parents=True, exist_ok=True)
            # target breaks ties: group_by order varies, the written order must not
            pairs.sort([S.LHS, S.SOURCE, S.P_TGT_GIVEN_SRC, S.TARGET],
                       descending=[False, False, True, False]).write_parquet(out)
            outputs.append(out)
    return outputs


def _estimate_contributions(files: list[Path], max_per_pivot: int) -> int:
    """Σ_e n_e·(n_e−1) over the pivots of one partition (n_e capped): its self-join size."""
    if not files:
        return 0
    return int(pl.scan_parquet(files).filter(pl.col(S.RANK_IN_E) <= max_per_pivot)
               .group_by(PIVOT_KEYS).agg(n=pl.len())
               .select((pl.col("n") * (pl.col("n") - 1)).sum()).collect().item() or 0)
