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

The share ≥ 3 has a 95 % interval from a stratified bootstrap (each band's ratings resampled
within the band, seeded).  A tier that takes in a band with no rating at all is **not**
extrapolated: its shares are null and ``not_extrapolated`` names the empty bands (scaling the
rated bands up to the whole tier would claim knowledge of pairs nobody looked at).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.errors import BadInputError
from cppdb.stats import LEVEL, RESAMPLES
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


ACCEPTABILITY_SCHEMA = S.ACCEPTABILITY_SCHEMA


def _stratified_interval(ratings: list[np.ndarray], weights: np.ndarray, seed: int,
                         resamples: int = RESAMPLES) -> tuple[float, float]:
    """Bootstrap interval of the band-weighted share ≥ 3, resampling within each band."""
    rng = np.random.default_rng(seed)
    total = np.zeros(resamples)
    for band, weight in zip(ratings, weights):
        picks = rng.integers(0, band.size, size=(resamples, band.size))
        total += weight * (band[picks] >= 3).mean(axis=1)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(total / weights.sum(), [tail, 100 - tail])
    return float(low), float(high)


def acceptability_table(sheet: pl.DataFrame, seed: int = 13) -> pl.DataFrame:
    """Per type and top share: rated pairs, shares of 5 / ≥4 / ≥3 (with an interval for ≥ 3),
    estimated acceptable pairs; null where a band of the tier has no rating."""
    rated = sheet.filter(pl.col("rating").is_not_null())
    bands = sheet.unique(["type", "band"]).select("type", "band", "band_low", "band_high",
                                                   "band_pairs").sort("type", "band")
    rows = []
    for pair_type in bands["type"].unique(maintain_order=True).to_list():
        part = bands.filter(pl.col("type") == pair_type)
        for high in part["band_high"].to_list():
            tier = part.filter(pl.col("band_high") <= high)
            ratings = [rated.filter((pl.col("type") == pair_type) & (pl.col("band") == b))
                       ["rating"].to_numpy() for b in tier["band"].to_list()]
            empty = [f"{round(lo * 100)}–{round(hi * 100)}%" for (lo, hi), r in
                     zip(tier.select("band_low", "band_high").rows(), ratings) if r.size == 0]
            row = {"type": pair_type, "top": f"{round(high * 100)}%",
                   "pairs": int(tier["band_pairs"].sum()),
                   "rated": int(sum(r.size for r in ratings)),
                   "not_extrapolated": ("no ratings in band " + ", ".join(empty)) if empty
                   else None}
            if not empty:
                weights = tier["band_pairs"].to_numpy().astype(float)
                share = {k: float(sum(w * (r >= k).mean() for r, w in zip(ratings, weights))
                                  / weights.sum()) for k in (5, 4, 3)}
                row.update(share_5=share[5], share_4_or_more=share[4],
                           share_3_or_more=share[3],
                           estimated_acceptable=round(share[3] * row["pairs"]))
                row["share_3_low"], row["share_3_high"] = _stratified_interval(ratings, weights,
                                                                               seed)
            rows.append(row)
    return pl.DataFrame(rows, schema=ACCEPTABILITY_SCHEMA)
