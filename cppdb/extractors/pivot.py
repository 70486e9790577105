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
from cppdb.text.function_words import ENGLISH_FUNCTION_WORDS, SLOT

SEED = 20240611
# unit columns (internal to the pivot)
UNIT_KEYS = ["lhs", "slot_sig", "en", "zh", "swapped"]
PIVOT_KEYS = ["lhs", "slot_sig", "en"]
_SLOT_SWAP = r"(\[[^\]\s]+?)"
_PLACEHOLDER = "\ue000"
LINK_BASE = 65536


@dataclass(frozen=True)
class PivotSettings:
    max_per_pivot: int = 100
    max_anchors: int = 10
    partition_rows: int = 2_000_000
    # PPDB-style pruning of pivots (0 / False = off; docs/benchmarks/bilingual.md)
    skip_function_pivots: bool = False   # English sides of only function words and slots
    min_p_e_given_f: float = 0.0         # p(e|z) of the Chinese side's translation
    min_p_f_given_e: float = 0.0         # p(z|e)
    min_count: int = 1                   # c(z, e)
    max_pivots_per_phrase: int = 0       # the most frequent English sides of each Chinese one


#: the pruning rules in the order they apply, with the unit column that fails each
PRUNING_RULES = ("function_pivot", "min_p_e_given_f", "min_p_f_given_e", "min_count",
                 "max_pivots_per_phrase")


#: the threshold rules of the pivot, for every engine: (rule = setting name, the unit column it
#: reads, the comparison that prunes, the smallest setting value that switches it on)
THRESHOLD_RULES: tuple[tuple[str, str, str, float], ...] = (
    ("min_p_e_given_f", "p_e_given_z", "<", 0.0),
    ("min_p_f_given_e", "p_z_given_e", "<", 0.0),
    ("min_count", "c_ze", "<", 1.0),
    ("max_pivots_per_phrase", "rank_in_z", ">", 0.0),
)


def active_threshold_rules(settings: PivotSettings) -> list[tuple[str, str, str, float]]:
    """(rule, column, comparison, value) of every threshold rule the settings switch on."""
    return [(rule, column, op, getattr(settings, rule))
            for rule, column, op, off in THRESHOLD_RULES if getattr(settings, rule) > off]


def pruning_masks(units: pl.DataFrame, settings: PivotSettings) -> dict[str, pl.Expr]:
    """One boolean expression per active rule: True where a unit (z, e) is pruned."""
    masks: dict[str, pl.Expr] = {}
    if settings.skip_function_pivots:
        words = sorted(ENGLISH_FUNCTION_WORDS)
        masks["function_pivot"] = pl.col("en").str.split(" ").list.eval(
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
    per_align = (occ.group_by(UNIT_KEYS + ["align", "zh_pos"]).agg(n=pl.len())
                 .collect(engine="streaming"))
    by_freq = dict(by=["n", "align", "zh_pos"], descending=[True, False, False])
    units = per_align.group_by(UNIT_KEYS).agg(
        c_ze=pl.col("n").sum(), align=pl.col("align").sort_by(**by_freq).first(),
        zh_pos=pl.col("zh_pos").sort_by(**by_freq).first())
    c_e = pl.col("c_ze").sum().over(PIVOT_KEYS)
    # rank 1 = most frequent Chinese side of the pivot; ties broken by the string
    return units.sort(["c_ze", "zh", "swapped"], descending=[True, False, False]).with_columns(
        p_z_given_e=pl.col("c_ze") / c_e,
        rank_in_e=(pl.int_range(pl.len()).over(PIVOT_KEYS) + 1).cast(pl.Int64),
    )


def _add_p_e_given_z(units: pl.DataFrame) -> pl.DataFrame:
    """c(z), p(e|z) and the rank of e among z's English sides (1 = most frequent)."""
    c_z = pl.col("c_ze").sum().over(["lhs", "zh"])
    units = units.sort(["c_ze", "en", "slot_sig", "swapped"], descending=[True, False, False, False])
    return units.with_columns(c_z=c_z, p_e_given_z=pl.col("c_ze") / c_z,
                              rank_in_z=(pl.int_range(pl.len()).over(["lhs", "zh"]) + 1)
                              .cast(pl.Int64))


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


def _contributions(units: pl.DataFrame, max_per_pivot: int) -> pl.DataFrame:
    """Self-join of the Chinese sides of each English pivot."""
    kept = units.filter(pl.col("rank_in_e") <= max_per_pivot)
    left = kept.select(PIVOT_KEYS + [
        pl.col("zh").alias("source"), pl.col("zh_pos").alias("source_pos"), pl.col("swapped").alias("swap1"),
        pl.col("c_ze").alias("c1"), pl.col("c_z").alias("source_count"),
        pl.col("p_z_given_e").alias("p_z1_e"), pl.col("p_e_given_z").alias("p_e_z1"),
        pl.col("align").alias("align1")])
    right = kept.select(PIVOT_KEYS + [
        pl.col("zh").alias("target_raw"), pl.col("zh_pos").alias("target_pos"), pl.col("swapped").alias("swap2"),
        pl.col("c_ze").alias("c2"), pl.col("c_z").alias("target_count"),
        pl.col("p_z_given_e").alias("p_z2_e"), pl.col("p_e_given_z").alias("p_e_z2"),
        pl.col("align").alias("align2")])
    pairs = left.join(right, on=PIVOT_KEYS).filter(pl.col("source") != pl.col("target_raw"))
    mismatch = pl.col("swap1") != pl.col("swap2")
    return pairs.select(
        "lhs", "slot_sig", "en", "source", "source_pos", "target_pos",
        "source_count", "target_count", "align1", "align2",
        target=pl.when(mismatch).then(_swap_slot_indices(pl.col("target_raw")))
        .otherwise(pl.col("target_raw")),
        fwd=pl.col("p_z2_e") * pl.col("p_e_z1"),
        bwd=pl.col("p_z1_e") * pl.col("p_e_z2"),
        joint=pl.min_horizontal("c1", "c2"),
    )


def link_code(zh: int, en: int) -> int:
    """One word link as an int (zh·65536 + en): cheap to group, join and decode."""
    return zh * LINK_BASE + en


def compose_alignments(pairs: pl.DataFrame) -> pl.DataFrame:
    """Add align_src/align_tgt: z1→e links composed with e→z2 links (int link codes)."""
    rows = pairs.with_row_index("_row")

    def exploded(col: str, side: str) -> pl.DataFrame:
        codes = rows.select("_row", pl.col(col).alias("c")).explode("c").drop_nulls("c")
        return codes.select("_row", (pl.col("c") // LINK_BASE).alias(side),
                            (pl.col("c") % LINK_BASE).alias("e"))

    composed = (exploded("align1", "s").join(exploded("align2", "t"), on=["_row", "e"])
                .select("_row", code=pl.col("s") * LINK_BASE + pl.col("t")).unique()
                .group_by("_row").agg(pl.col("code").sort()))
    empty = pl.lit([], dtype=pl.List(pl.Int64))
    return (rows.join(composed, on="_row", how="left")
            .with_columns(pl.col("code").fill_null(empty))
            .with_columns(
                pl.col("code").list.eval(pl.element() // LINK_BASE).cast(pl.List(pl.Int32))
                .alias(S.ALIGN_SRC),
                pl.col("code").list.eval(pl.element() % LINK_BASE).cast(pl.List(pl.Int32))
                .alias(S.ALIGN_TGT))
            .sort("_row").drop("_row", "code", "align1", "align2"))


def _aggregate_pairs(contrib: pl.DataFrame, kind: str, max_anchors: int) -> pl.DataFrame:
    # one global sort (best pivot first) instead of a sort inside every group
    contrib = contrib.sort(["fwd", "en"], descending=[True, False])
    pairs = contrib.group_by(["lhs", "source", "target"]).agg(
        pl.col("source_pos").first(), pl.col("target_pos").first(),
        pl.col("fwd").sum().alias(S.P_TGT_GIVEN_SRC), pl.col("bwd").sum().alias(S.P_SRC_GIVEN_TGT),
        pl.col("joint").sum().cast(pl.Int64).alias(S.COUNT),
        pl.len().cast(pl.Int64).alias(S.N_PIVOTS),
        pl.col("en").head(max_anchors).alias(S.ANCHORS),
        pl.col("align1").first(), pl.col("align2").first(),
        pl.col("source_count").first().cast(pl.Int64),
        pl.col("target_count").first().cast(pl.Int64),
        pl.col("slot_sig").first().alias("slot_signature"),
    )
    pairs = compose_alignments(pairs)
    return pairs.with_columns(
        pl.col("source").str.split(" ").alias(S.SOURCE_TOKENS),
        pl.col("target").str.split(" ").alias(S.TARGET_TOKENS),
        pl.col("source_pos").str.split(" "), pl.col("target_pos").str.split(" "),
        pl.lit(kind).alias(S.TYPE), pl.lit("bilingual").alias(S.ORIGIN))


def pair_table_columns() -> list[str]:
    return list(S.PAIR_COLUMNS) + ["source_count", "target_count", "slot_signature"]


def empty_pair_table() -> pl.DataFrame:
    schema = dict(S.PAIR_COLUMNS)
    schema.update(source_count=pl.Int64, target_count=pl.Int64, slot_signature=pl.String)
    return pl.DataFrame(schema=schema)


def _finalise(frame: pl.DataFrame) -> pl.DataFrame:
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
    _partition_sink(occurrences, work / "occ", pl.col("en"), n_parts)
    for k in range(n_parts):
        files = _part_files(work / "occ", k)
        if files:
            units = _units_from_occurrences(pl.scan_parquet(files))
            _partition_sink(units.lazy(), work / "units_e" / f"e{k}", _hash_key("lhs", "zh"),
                            n_parts)
    for k in range(n_parts):
        files = _part_files(work / "units_e", k)
        if files:
            units, pruned = prune_units(_add_p_e_given_z(pl.read_parquet(files)), settings)
            for name, count in pruned.items():
                pruned_units[name] = pruned_units.get(name, 0) + count
            _partition_sink(units.lazy(), work / "units_z" / f"z{k}", pl.col("en"), n_parts)
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
                                _hash_key("lhs", "source"), n_out)
    outputs = []
    for k in range(n_out):
        files = _part_files(work / "contrib", k)
        if files:
            pairs = _finalise(_aggregate_pairs(pl.read_parquet(files), kind,
                                               settings.max_anchors))
            out = work / "pairs" / f"part-{k:05d}.parquet"
            out.parent.mkdir(parents=True, exist_ok=True)
            # target breaks ties: group_by order varies, the written order must not
            pairs.sort(["lhs", "source", S.P_TGT_GIVEN_SRC, S.TARGET],
                       descending=[False, False, True, False]).write_parquet(out)
            outputs.append(out)
    return outputs


def _estimate_contributions(files: list[Path], max_per_pivot: int) -> int:
    """Σ_e n_e·(n_e−1) over the pivots of one partition (n_e capped): its self-join size."""
    if not files:
        return 0
    return int(pl.scan_parquet(files).filter(pl.col("rank_in_e") <= max_per_pivot)
               .group_by(PIVOT_KEYS).agg(n=pl.len())
               .select((pl.col("n") * (pl.col("n") - 1)).sum()).collect().item() or 0)
