"""Word links and token sequences: packed ints / joined strings vs typed List columns.

    python -m bench.bench_links               # occurrences of 5,000 synthetic sentence pairs
    python -m bench.bench_links RUN_DIR       # a bilingual run's phrase_occurrences.parquet

The occurrence table packs each word link as zh·LINK_BASE + en (``align``, List(Int32)) and
joins tokens with spaces (``zh``, ``en``, ``zh_pos``) and slot labels with ``|``.  Every
consumer is timed on that and on the typed alternative — List(Struct{zh, en}) links,
List(String) tokens — interleaved (packed, typed, packed, …; medians of 3) on the same rows,
and the column sizes are compared.  docs/benchmarks/links.md has the numbers and the decision.
"""
from __future__ import annotations

import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from bench.common import record
from cppdb import schema as S
from cppdb.export import _pharaoh_expr
from cppdb.extractors import pivot as P

AREA = "links"
LINK = pl.Struct({"zh": pl.Int32, "en": pl.Int32})


def interleaved(packed: Callable[[], Any], typed: Callable[[], Any], reps: int = 3
                ) -> tuple[float, float]:
    """Median seconds of each, run alternately so load changes hit both alike."""
    times: dict[int, list[float]] = {0: [], 1: []}
    for _ in range(reps):
        for k, fn in enumerate((packed, typed)):
            gc.collect()
            start = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def as_struct(col: str) -> pl.Expr:
    """Packed links → List(Struct{zh, en})."""
    return pl.col(col).list.eval(pl.struct(S.link_zh(pl.element()).cast(pl.Int32).alias("zh"),
                                           S.link_en(pl.element()).cast(pl.Int32).alias("en"))
                                 ).cast(pl.List(LINK))


def typed_tables(occ: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The occurrences with struct links, and with struct links and list tokens."""
    links = occ.with_columns(as_struct(S.ALIGN))
    tokens = links.with_columns(pl.col(S.ZH).str.split(" "), pl.col(S.EN).str.split(" "),
                                pl.col(S.ZH_POS).str.split(" "), pl.col(S.SLOT_SIG).str.split("|"))
    return links, tokens


def units(frame: pl.DataFrame) -> Callable[[], pl.DataFrame]:
    """The pivot's first step: per unit, its most frequent internal alignment."""
    def run() -> pl.DataFrame:
        per = frame.lazy().group_by(P.UNIT_KEYS + [S.ALIGN, S.ZH_POS]).agg(n=pl.len()).collect()
        by = dict(by=["n", S.ALIGN, S.ZH_POS], descending=[True, False, False])
        return per.group_by(P.UNIT_KEYS).agg(pl.col(S.ALIGN).sort_by(**by).first())
    return run


def compose_struct(pairs: pl.DataFrame) -> pl.DataFrame:
    """:func:`cppdb.extractors.pivot.compose_alignments` on struct links."""
    rows = pairs.with_row_index("_row")

    def exploded(col: str, side: str) -> pl.DataFrame:
        return (rows.select("_row", pl.col(col).alias("c")).explode("c").drop_nulls("c")
                .unnest("c").rename({"zh": side, "en": "e"}))
    composed = (exploded(S.ALIGN1, "s").join(exploded(S.ALIGN2, "t"), on=["_row", "e"])
                .select("_row", code=pl.struct(pl.col("s").alias("zh"), pl.col("t").alias("en")))
                .unique().group_by("_row").agg(pl.col("code").sort()))
    return (rows.join(composed, on="_row", how="left")
            .with_columns(pl.col("code").fill_null(pl.lit([], dtype=pl.List(LINK))))
            .with_columns(
                pl.col("code").list.eval(pl.element().struct.field("zh")).alias(S.ALIGN_SRC),
                pl.col("code").list.eval(pl.element().struct.field("en")).alias(S.ALIGN_TGT))
            .sort("_row").drop("_row", "code", S.ALIGN1, S.ALIGN2))


def lexical_links(frame: pl.DataFrame, typed: bool) -> Callable[[], pl.DataFrame]:
    """The lexical weights' first step: per unit its most frequent alignment, as (zh, en)."""
    keys = [S.KIND, S.LHS, S.EN, S.ZH]

    def run() -> pl.DataFrame:
        per = (frame.lazy().select(*keys, S.ALIGN).with_columns(pl.col(S.ALIGN).list.sort())
               .group_by(keys + [S.ALIGN]).agg(n=pl.len()).collect())
        tie = S.ALIGN if typed else pl.col(S.ALIGN).cast(pl.List(pl.String)).list.join(",")
        best = (per.sort(["n", tie], descending=[True, False])
                .group_by(keys, maintain_order=True).agg(pl.col(S.ALIGN).first())
                .sort(keys).with_row_index("u").select("u", S.ALIGN).explode(S.ALIGN)
                .drop_nulls(S.ALIGN))
        if typed:
            return best.unnest(S.ALIGN)
        return best.select("u", zh=S.link_zh(pl.col(S.ALIGN)), en=S.link_en(pl.col(S.ALIGN)))
    return run


def pharaoh_zipped(pairs: pl.DataFrame) -> pl.DataFrame:
    """Pharaoh strings by zipping the two position lists (explode + group-by), no packing."""
    rows = pairs.select(S.ALIGN_SRC, S.ALIGN_TGT).with_row_index("_row")
    links = (rows.explode([S.ALIGN_SRC, S.ALIGN_TGT])
             .select("_row", l=pl.concat_str([pl.col(S.ALIGN_SRC).cast(pl.String), pl.lit("-"),
                                              pl.col(S.ALIGN_TGT).cast(pl.String)]))
             .group_by("_row", maintain_order=True).agg(pl.col("l").drop_nulls().str.join(" ")))
    return rows.join(links, on="_row", how="left", maintain_order="left")


def pivot_pairs(occ: pl.DataFrame, kind: str) -> pl.DataFrame:
    """(lhs, source, target, align1, align2) of one kind: compose_alignments' input."""
    units = P._add_p_e_given_z(P._units_from_occurrences(occ.filter(kind=kind).lazy()))
    contrib = P._contributions(units, P.PivotSettings().max_per_pivot)
    return (contrib.sort([S.FWD, S.EN], descending=[True, False])
            .group_by([S.LHS, S.SOURCE, S.TARGET])
            .agg(pl.col(S.ALIGN1).first(), pl.col(S.ALIGN2).first()))


def measure(occ: pl.DataFrame) -> dict[str, Any]:
    """Packed and typed seconds, and their ratio, of every consumer; column sizes in MB."""
    links, tokens = typed_tables(occ)
    out: dict[str, Any] = {}

    def put(name: str, packed: float, typed: float) -> None:
        out[name] = {"packed_ms": round(packed * 1e3, 1), "typed_ms": round(typed * 1e3, 1),
                     "typed_over_packed": round(typed / packed, 2)}
    put("pivot_units_struct_links", *interleaved(units(occ), units(links)))
    put("pivot_units_struct_links_list_tokens", *interleaved(units(occ), units(tokens)))
    keys = occ.select(P.PIVOT_KEYS + [S.ZH]).unique()
    list_keys = tokens.select(P.PIVOT_KEYS + [S.ZH]).unique()
    put("pivot_self_join_list_tokens", *interleaved(lambda: keys.join(keys, on=P.PIVOT_KEYS),
                                                    lambda: list_keys.join(list_keys,
                                                                           on=P.PIVOT_KEYS)))
    for kind in ("phrase", "pattern"):
        pairs = pivot_pairs(occ, kind)
        typed_pairs = pairs.with_columns(as_struct(S.ALIGN1), as_struct(S.ALIGN2))
        put(f"compose_alignments_{kind}", *interleaved(lambda: P.compose_alignments(pairs),
                                                       lambda: compose_struct(typed_pairs)))
        composed = P.compose_alignments(pairs)
        put(f"export_pharaoh_{kind}", *interleaved(
            lambda: composed.select(_pharaoh_expr()), lambda: pharaoh_zipped(composed)))
    put("lexical_weights_links", *interleaved(lexical_links(occ, False),
                                              lexical_links(links, True)))
    token_cols = (S.ZH, S.EN, S.ZH_POS, S.SLOT_SIG)
    out["size_mb"] = {
        "align_packed": round(occ[S.ALIGN].estimated_size() / 1e6, 2),
        "align_struct": round(links[S.ALIGN].estimated_size() / 1e6, 2),
        "tokens_joined": round(sum(occ[c].estimated_size() for c in token_cols) / 1e6, 2),
        "tokens_lists": round(sum(tokens[c].estimated_size() for c in token_cols) / 1e6, 2)}
    return out


def synthetic_occurrences(n: int) -> pl.DataFrame:
    from bench.bench_bilingual import synthetic_corpus
    from cppdb.extractors.occurrences import ExtractionSettings, extract_frame
    from cppdb.extractors.settings import BilingualSettings

    ann, align = synthetic_corpus(n)
    settings = ExtractionSettings.of(BilingualSettings())
    return extract_frame(ann, align, settings)[0]


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args:
        source = Path(args[0])
        occ = pl.read_parquet(source / S.OCCURRENCES_FILE)
    else:
        source, occ = Path("synthetic-5000"), synthetic_occurrences(5000)
    row = measure(occ)
    record(AREA, {"benchmark": "packed links / joined tokens vs List(Struct) / List(String)",
                  "source": source.name, "occurrences": occ.height,
                  "load_average": os.getloadavg()[0], **row})


if __name__ == "__main__":
    main()
