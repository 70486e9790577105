"""Blind judging of a ranking like the paper's Table 5: draw, write a sheet, score it back.

Cells: per pair type (phrase, pattern), ``top20`` = the best 20 % of the type's ranking,
``all`` = every ranked pair of the type.  Pairs of given label files are left out (type +
text up to whitespace, both directions) so that a reported sample is fresh.  Each cell is
drawn by tenths of the ranking (``stratum`` 0 = the best tenth), the same number from each,
and scored with each tenth weighted by its size, so that a sample stands for the whole cell
even where the pairs of the label files (left out) crowd the top of the ranking: on
long-zhen they hold 91 % of the best tenth of patterns and 22 % of the worst, and a uniform
draw of the rest would stand mostly for the bottom.  A
pair drawn in both cells is judged once.  The sheet holds only ``id``, ``type`` and the two
sides ``a``, ``b`` as a reader writes them (no space beside a Chinese character or a slot,
one between two Latin words: ``用 multipart MIME [NN1]`` → ``用multipart MIME[NN1]``),
shuffled; the key holds the rest.  ``devtools/judge.py`` is the command around it.

Shares are the fraction rated ≥ 3 (each rated pair weighted by its tenth's size over the
tenth's rated pairs) with a normal-approximation 95 % interval ± 1.96·√(p(1−p)/n_eff), n_eff
= (Σw)²/Σw² (n when every tenth gave as many pairs; a key without strata: weights 1).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.errors import BadInputError
from cppdb.io import write_text_atomic
from cppdb.rank.judged import ACCEPTABLE
from cppdb.rank.pairs import join_key
from cppdb.rank.tiers import PERCENTILE, RANK, SCORE, in_top
from cppdb.text.normalize import CJK_CHARACTER

#: the paper's Table 5: share judged acceptable (≥ 3)
PAPER = {("phrase", "top20"): 0.87, ("phrase", "all"): 0.58,
         ("pattern", "top20"): 0.86, ("pattern", "all"): 0.61}
CELLS = (("top20", 0.2), ("all", 1.0))
TYPES = ("phrase", "pattern")


def excluded_keys(paths: list[Path]) -> pl.DataFrame:
    """(type, source key, target key) of every pair in the files (both directions).  A file
    is a TSV with a header holding ``source`` and ``target`` (``type`` optional: a side
    with a slot makes a pattern); ratings and other columns are ignored."""
    frames = []
    for path in paths:
        frame = pl.read_csv(path, separator="\t", quote_char=None, infer_schema=False)
        if S.SOURCE not in frame.columns or S.TARGET not in frame.columns:
            raise BadInputError(f"{path} has no source/target header",
                                hint="write a header: type, source, target[, rating]")
        if S.TYPE not in frame.columns:
            slot = (pl.col(S.SOURCE).str.contains(r"\[[A-Z$]+\d+\]")
                    | pl.col(S.TARGET).str.contains(r"\[[A-Z$]+\d+\]"))
            frame = frame.with_columns(pl.when(slot).then(pl.lit("pattern"))
                                       .otherwise(pl.lit("phrase")).alias(S.TYPE))
        frames.append(frame.select(S.TYPE, join_key(S.SOURCE).alias("_ks"),
                                   join_key(S.TARGET).alias("_kt")))
    if not frames:
        return pl.DataFrame(schema={S.TYPE: pl.String, "_ks": pl.String, "_kt": pl.String})
    keys = pl.concat(frames)
    return pl.concat([keys, keys.select(S.TYPE, pl.col("_kt").alias("_ks"),
                                        pl.col("_ks").alias("_kt"))]).unique()


def without_excluded(pairs: pl.DataFrame, exclude: pl.DataFrame) -> pl.DataFrame:
    """``pairs`` (type, source, target, …) less those of ``exclude`` (:func:`excluded_keys`),
    in their order."""
    keyed = pairs.with_columns(join_key(S.SOURCE).alias("_ks"), join_key(S.TARGET).alias("_kt"))
    return (keyed.join(exclude, on=[S.TYPE, "_ks", "_kt"], how="anti", maintain_order="left")
            .drop("_ks", "_kt"))


#: a cell is drawn and scored by tenths of the type's ranking
STRATA = 10
STRATUM, STRATUM_SHARE = "stratum", "stratum_share"


def _strata(part: pl.DataFrame) -> pl.DataFrame:
    """``part`` (one type's full ranking) with ``stratum``: its tenth of the ranking by rank
    (0: the best tenth)."""
    return part.with_columns(((pl.col(RANK) - 1) * STRATA // pl.len()).clip(0, STRATA - 1)
                             .cast(pl.Int64).alias(STRATUM))


def draw_cells(ranked: pl.DataFrame, per_cell: int, exclude: pl.DataFrame,
               seed: int = 13) -> pl.DataFrame:
    """The key rows: ``per_cell`` pairs per type × cell, none of ``exclude``, as many from
    each of the cell's tenths as ``per_cell`` allows (seeded tenths take the remainder);
    ``stratum_share`` is a tenth's share of the cell's pairs (what :func:`shares` weights
    by).  A tenth with fewer fresh pairs gives them all."""
    parts = []
    for t_index, pair_type in enumerate(TYPES):
        # tenths and cells are defined on the full ranking; exclusion only removes candidates
        part = _strata(ranked.filter(pl.col(S.TYPE) == pair_type)).with_columns(
            [(in_top(share) if share < 1.0 else pl.lit(True)).alias(f"_in_{cell}")
             for cell, share in CELLS])
        pool = without_excluded(part, exclude)
        for c_index, (cell, _) in enumerate(CELLS):
            sizes = part.filter(pl.col(f"_in_{cell}")).group_by(STRATUM).len().sort(STRATUM)
            total = int(sizes["len"].sum())
            # which tenths take the remainder is drawn too, so none is favoured
            extra = np.random.default_rng(seed + 10 * t_index + c_index).permutation(
                sizes.height)[:per_cell % sizes.height]
            for s_index, (stratum, size) in enumerate(sizes.iter_rows()):
                want = per_cell // sizes.height + int(s_index in extra)
                candidates = pool.filter(pl.col(f"_in_{cell}") & (pl.col(STRATUM) == stratum))
                chosen = candidates.sample(min(want, candidates.height), shuffle=True,
                                           seed=seed + 10 * t_index + c_index + 100 * stratum)
                parts.append(chosen.with_columns(pl.lit(cell).alias("cell"),
                                                 pl.lit(size / total).alias(STRATUM_SHARE)))
    keys = pl.concat(parts, how="vertical_relaxed")
    columns = ["cell", S.TYPE, S.LHS, S.SOURCE, S.TARGET, SCORE, RANK, PERCENTILE, STRATUM,
               STRATUM_SHARE]
    return keys.select([c for c in columns if c in keys.columns])


def surface_text(column: str) -> pl.Expr:
    """A side's words as a reader writes them: no space beside a Chinese character,
    punctuation or a slot bracket, one space between two Latin words or numbers (the judge
    must see ``multipart MIME``, not ``multipartMIME``)."""
    glue = f"(?:{CJK_CHARACTER}|[\\[\\]])"
    return (pl.col(column).str.replace_all(r"\s+", " ").str.strip_chars()
            .str.replace_all(f"({glue}) ", "$1").str.replace_all(f" ({glue})", "$1"))


def sheet_and_key(keys: pl.DataFrame, seed: int = 13) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A blind sheet (one row per distinct pair, shuffled; id, type, a, b) and the key
    (every drawn row with its id)."""
    pairs = keys.select(S.TYPE, S.SOURCE, S.TARGET).unique(maintain_order=True)
    order = np.random.default_rng(seed).permutation(pairs.height)
    pairs = pairs[order].with_row_index("_n", offset=1).with_columns(
        pl.format("q{}", pl.col("_n").cast(pl.String).str.zfill(4)).alias("id")).drop("_n")
    sheet = pairs.select("id", S.TYPE, surface_text(S.SOURCE).alias("a"),
                         surface_text(S.TARGET).alias("b"))
    key = keys.join(pairs, on=[S.TYPE, S.SOURCE, S.TARGET], how="left", maintain_order="left")
    return sheet, key.select("id", *[c for c in key.columns if c != "id"]).sort("id", "cell")


def write_jsonl(frame: pl.DataFrame, path: Path) -> None:
    lines = [json.dumps(row, ensure_ascii=False) for row in frame.iter_rows(named=True)]
    write_text_atomic(path, "\n".join(lines) + ("\n" if lines else ""))


def read_ratings(path: Path) -> pl.DataFrame:
    """``id<TAB>rating`` lines (a header line starting with ``id`` is skipped)."""
    rows = []
    for number, line in enumerate(Path(path).read_text("utf-8").splitlines(), start=1):
        fields = line.strip().split("\t")
        if not line.strip() or (number == 1 and fields[0].lower() == "id"):
            continue
        if len(fields) < 2 or fields[1].strip() not in {"1", "2", "3", "4", "5"}:
            raise BadInputError(f"{path}: line {number} is not id<TAB>rating (1–5): {line!r}")
        rows.append((fields[0].strip(), int(fields[1])))
    frame = pl.DataFrame(rows, schema={"id": pl.String, "rating": pl.Int64}, orient="row")
    dupes = frame.filter(pl.col("id").is_duplicated())
    if dupes.height:
        raise BadInputError(f"{path}: id {dupes['id'][0]} is rated twice")
    return frame


def join_ratings(key: pl.DataFrame, ratings: pl.DataFrame) -> pl.DataFrame:
    """The key with each row's ``rating`` (null: not rated); a rating whose id the key
    lacks is an error (ratings of another sheet)."""
    unknown = ratings.join(key.select("id").unique(), on="id", how="anti")
    if unknown.height:
        raise BadInputError(f"rating for id {unknown['id'][0]} which is not in the key",
                            hint="use the key.jsonl written with this sheet")
    return key.join(ratings, on="id", how="left")


def shares(key: pl.DataFrame, ratings: pl.DataFrame) -> pl.DataFrame:
    """Per type × cell: drawn, rated, share ≥ 3 weighted by tenth (:func:`cell_share`),
    ±1.96·SE, and the paper's value."""
    joined = join_ratings(key, ratings)
    rows = []
    for pair_type in TYPES:
        for cell, _ in CELLS:
            part = joined.filter((pl.col(S.TYPE) == pair_type) & (pl.col("cell") == cell))
            rated = part.filter(pl.col("rating").is_not_null())
            n = rated.height
            p, half, covered = cell_share(rated) if n else (None, None, 0.0)
            rows.append({"type": pair_type, "cell": cell, "drawn": part.height, "rated": n,
                         "share_acceptable": p, "ci95_half_width": half, "covered": covered,
                         "mean_rating": float(rated["rating"].mean()) if n else None,
                         "paper": PAPER[(pair_type, cell)], **_sample_diversity(rated)})
    return pl.DataFrame(rows)


def cell_share(rated: pl.DataFrame) -> tuple[float, float, float]:
    """The share of ``rated`` (one cell's rated rows, ``rating``) rated ≥ 3, its 95 %
    half-width, and the share of the cell it stands for: each row weighted by its tenth's
    ``stratum_share`` over the tenth's rated rows, renormalised over the tenths that have
    one (a tenth with no fresh pair left is not covered; without strata: weights 1, 1.0)."""
    if STRATUM in rated.columns and STRATUM_SHARE in rated.columns:
        w = rated.select(pl.col(STRATUM_SHARE) / pl.len().over(STRATUM)).to_series().to_numpy()
        covered = min(1.0, round(float(rated.unique(STRATUM)[STRATUM_SHARE].sum()), 9))
    else:
        w, covered = np.ones(rated.height), 1.0
    good = (rated["rating"] >= ACCEPTABLE).to_numpy()
    p = float((w * good).sum() / w.sum())
    n_eff = w.sum() ** 2 / (w ** 2).sum()
    return p, 1.96 * math.sqrt(p * (1 - p) / n_eff), covered


def _sample_diversity(rated: pl.DataFrame) -> dict[str, float | None]:
    """The judged sample's own diversity: mean ED ÷ length, the containment share, and the
    share both acceptable and not a containment pair (different AND good)."""
    if rated.height == 0:
        return {"sample_ned": None, "sample_contained": None, "acceptable_not_contained": None}
    from cppdb.evaluate.tables import containment, edit_distances

    sources, targets = rated[S.SOURCE].to_list(), rated[S.TARGET].to_list()
    _, ned = edit_distances(sources, targets)
    inside = containment(sources, targets)
    good = (rated["rating"] >= ACCEPTABLE).to_numpy()
    return {"sample_ned": float(ned.mean()), "sample_contained": float(inside.mean()),
            "acceptable_not_contained": float((good & (inside == 0)).mean())}


#: the whole tier's automatic metrics (cppdb evaluate) shown next to each judged cell
TIER_METRICS = ("edit_distance", "normalised_edit_distance", "template_normalised_edit_distance",
                "containment", "containment_in_order", "cosine")


def with_tier_metrics(table: pl.DataFrame, automatic: pl.DataFrame) -> pl.DataFrame:
    """``table`` (:func:`shares`) with the run's evaluation table (type × top,
    :func:`cppdb.evaluate.tables.evaluation_table`) joined to each cell's tier:
    ``tier_<metric>``, ``tier_<metric>_low`` / ``_high``; null where the tier or the metric
    is missing."""
    columns = [f"{m}{end}" for m in TIER_METRICS for end in ("", "_low", "_high")]
    # a table saved before a metric existed (an older automatic.json) leaves its cells null
    tiers = automatic.select("type", pl.col("top").alias("_top"),
                             *[(pl.col(c) if c in automatic.columns
                                else pl.lit(None, dtype=pl.Float64)).alias(f"tier_{c}")
                               for c in columns])
    cell_top = pl.col("cell").replace_strict({c: f"{round(share * 100)}%" for c, share in CELLS},
                                             default=None)
    return (table.with_columns(cell_top.alias("_top"))
            .join(tiers, on=["type", "_top"], how="left", maintain_order="left").drop("_top"))


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _tier_cell(r: dict, metric: str, percent: bool = False) -> str:
    mean, low, high = (r.get(f"tier_{metric}{end}") for end in ("", "_low", "_high"))
    if mean is None:
        return "–"
    half = max(mean - low, high - mean) if low is not None and high is not None else 0.0
    if percent:
        return f"{mean:.1%} ± {half:.1%}"
    return f"{_num(mean)} ± {_num(half)}"


def format_shares(table: pl.DataFrame) -> str:
    """Table 5 rows (``n (of 90%)``: the rated pairs stand for that share of the cell only, a
    tenth having had no fresh pair) with the judged sample's own diversity and, when the table
    carries them (:func:`with_tier_metrics`), the whole tier's Table 3/4 columns with 95 %
    intervals."""
    tiers = "tier_edit_distance" in table.columns
    head = ("| type | cell | n | share ≥ 3 | ± 1.96·SE | mean rating | paper (Table 5) "
            "| sample ED÷len | sample contained | acceptable & not contained |")
    if tiers:
        head += (" tier ED | tier ED÷len | tier ED÷len (words) | tier contained "
                 "| tier in order | tier cosine |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in table.iter_rows(named=True):
        covers = ("" if r.get("covered", 1.0) >= 1.0 or not r["rated"]
                  else f" (of {_pct(r['covered'])})")
        line = (f"| {r['type']} | {r['cell']} | {r['rated']}{covers} "
                f"| {_pct(r['share_acceptable'])} "
                f"| {_pct(r['ci95_half_width'])} | {_num(r['mean_rating'], 2)} "
                f"| {r['paper']:.0%} | {_num(r.get('sample_ned'))} "
                f"| {_pct(r.get('sample_contained'))} "
                f"| {_pct(r.get('acceptable_not_contained'))} |")
        if tiers:
            line += (f" {_tier_cell(r, 'edit_distance')} "
                     f"| {_tier_cell(r, 'normalised_edit_distance')} "
                     f"| {_tier_cell(r, 'template_normalised_edit_distance')} "
                     f"| {_tier_cell(r, 'containment', percent=True)} "
                     f"| {_tier_cell(r, 'containment_in_order', percent=True)} "
                     f"| {_tier_cell(r, 'cosine')} |")
        lines.append(line)
    return "\n".join(lines)
