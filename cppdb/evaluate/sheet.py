"""Human evaluation: a stratified annotation sheet and the acceptability table read back.

The ranking of each pair type is cut into *bands* by the evaluation shares (default
0–20 %, 20–60 %, 60–100 %).  ``write_annotation_sheet`` samples the same number of pairs
from every band (``--sample N`` = pairs per type, split evenly) and writes a TSV with an
empty ``rating`` column for the Callison-Burch scale:

    5 all meaning kept, nothing added · 4 meaning kept, something added ·
    3 some meaning lost, main meaning kept · 2 very different · 1 unrelated

``acceptability_table`` reads the filled sheet and estimates, for each type and top share
(top 20 % = band 1; top 60 % = bands 1–2; …), the share of pairs rated 5, ≥ 4 and ≥ 3 as
the band-size-weighted mean of the band shares (a stratified estimate, so oversampling
the small top band does not bias the larger tiers), and the estimated number of acceptable
(≥ 3) pairs = share ≥ 3 × pairs in the tier.  Unrated rows are ignored and counted.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.errors import BadInputError
from cppdb.io import write_text_atomic
from cppdb.rank.tiers import in_top

SHEET_COLUMNS = ("item", "type", "band", "band_low", "band_high", "band_pairs", "source",
                 "target", "rating")
SCALE_HELP = ("rating: 5 all meaning kept, nothing added; 4 meaning kept, something added; "
              "3 some meaning lost, main meaning kept; 2 very different; 1 unrelated")


def _bands(tops: tuple[float, ...]) -> list[tuple[int, float, float]]:
    edges = [0.0, *tops]
    return [(i + 1, edges[i], edges[i + 1]) for i in range(len(tops))]


def sample_sheet(ranked: pl.DataFrame, n_per_type: int, tops: tuple[float, ...] = (0.2, 0.6, 1.0),
                 seed: int = 13) -> pl.DataFrame:
    """The sheet's rows (ratings empty): an equal random sample from every band."""
    if n_per_type < len(tops):
        raise BadInputError(f"--sample {n_per_type} is smaller than the {len(tops)} bands",
                            hint=f"sample at least {len(tops)} pairs")
    parts = []
    for pair_type in ranked[S.TYPE].unique(maintain_order=True).to_list():
        part = ranked.filter(pl.col(S.TYPE) == pair_type)
        for band, low, high in _bands(tops):
            members = part.filter(in_top(high) & ~in_top(low))
            take = min(members.height, n_per_type // len(tops))
            chosen = members.sample(take, seed=seed + band) if take else members.clear()
            parts.append(chosen.select(
                pl.col(S.TYPE).alias("type"), pl.lit(band).alias("band"),
                pl.lit(low).alias("band_low"), pl.lit(high).alias("band_high"),
                pl.lit(members.height).alias("band_pairs"), S.SOURCE, S.TARGET))
    sheet = pl.concat(parts, how="vertical_relaxed")
    order = np.random.default_rng(seed).permutation(sheet.height)  # raters see mixed bands
    sheet = sheet[order].with_row_index("item", offset=1)
    return sheet.with_columns(pl.lit("").alias("rating")).select(SHEET_COLUMNS)


def write_annotation_sheet(ranked: pl.DataFrame, path: str | Path, n_per_type: int,
                           tops: tuple[float, ...] = (0.2, 0.6, 1.0), seed: int = 13) -> int:
    sheet = sample_sheet(ranked, n_per_type, tops, seed)
    lines = ["\t".join(SHEET_COLUMNS)]
    for row in sheet.iter_rows():
        lines.append("\t".join("" if v is None else str(v).replace("\t", " ") for v in row))
    write_text_atomic(path, "\n".join(lines) + "\n")
    return sheet.height


def read_annotation_sheet(path: str | Path) -> pl.DataFrame:
    """A filled sheet; ratings must be integers 1–5 or empty (unrated)."""
    path = Path(path)
    if not path.is_file():
        raise BadInputError(f"annotation sheet {path} does not exist")
    lines = path.read_text("utf-8").splitlines()
    if not lines or tuple(lines[0].split("\t")) != SHEET_COLUMNS:
        raise BadInputError(f"{path} is not an annotation sheet (header must be "
                            f"{' '.join(SHEET_COLUMNS)})",
                            hint="write one with `cppdb evaluate RUN --sample N`")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) == len(SHEET_COLUMNS) - 1:
            fields.append("")  # an editor dropped the empty trailing field
        if len(fields) != len(SHEET_COLUMNS):
            raise BadInputError(f"{path}: line {number} has {len(fields)} fields, "
                                f"expected {len(SHEET_COLUMNS)}")
        rating = fields[-1].strip()
        if rating and rating not in {"1", "2", "3", "4", "5"}:
            raise BadInputError(f"{path}: line {number}: rating {rating!r} is not 1–5",
                                hint=SCALE_HELP)
        rows.append(fields[:-1] + [int(rating) if rating else None])
    return pl.DataFrame(rows, schema={"item": pl.Int64, "type": pl.String, "band": pl.Int64,
                                      "band_low": pl.Float64, "band_high": pl.Float64,
                                      "band_pairs": pl.Int64, "source": pl.String,
                                      "target": pl.String, "rating": pl.Int64}, orient="row")


def acceptability_table(sheet: pl.DataFrame) -> pl.DataFrame:
    """Per type and top share: rated pairs, shares of 5 / ≥4 / ≥3, estimated acceptable pairs."""
    rated = sheet.filter(pl.col("rating").is_not_null())
    bands = (rated.group_by("type", "band", "band_high", "band_pairs")
             .agg(pl.len().alias("rated"), (pl.col("rating") == 5).mean().alias("p5"),
                  (pl.col("rating") >= 4).mean().alias("p4"),
                  (pl.col("rating") >= 3).mean().alias("p3"))
             .sort("type", "band"))
    sizes = sheet.unique(["type", "band"]).select("type", "band_high", "band_pairs")
    rows = []
    for pair_type in bands["type"].unique(maintain_order=True).to_list():
        part = bands.filter(pl.col("type") == pair_type)
        for high in part["band_high"].to_list():
            top = part.filter(pl.col("band_high") <= high)
            weights = top["band_pairs"].to_numpy().astype(float)
            total = int(sizes.filter((pl.col("type") == pair_type)
                                     & (pl.col("band_high") <= high))["band_pairs"].sum())
            weight_sum = weights.sum()
            share = {k: float((top[k].to_numpy() * weights).sum() / weight_sum)
                     if weight_sum else None
                     for k in ("p5", "p4", "p3")}
            rows.append({"type": pair_type, "top": f"{round(high * 100)}%",
                         "pairs": total, "rated": int(top["rated"].sum()),
                         "share_5": share["p5"], "share_4_or_more": share["p4"],
                         "share_3_or_more": share["p3"],
                         "estimated_acceptable": round(share["p3"] * total)
                         if share["p3"] is not None else None})
    return pl.DataFrame(rows, schema={"type": pl.String, "top": pl.String, "pairs": pl.Int64,
                                      "rated": pl.Int64, "share_5": pl.Float64,
                                      "share_4_or_more": pl.Float64,
                                      "share_3_or_more": pl.Float64,
                                      "estimated_acceptable": pl.Int64})


def unrated_count(sheet: pl.DataFrame) -> int:
    return int(sheet["rating"].is_null().sum())
