"""PPDB's lexical weighting features lex(t|s), lex(s|t) for phrase and pattern pairs.

A bilingual run writes the word translation tables ``lex_en_given_zh.parquet`` (p(e|f)) and
``lex_zh_given_en.parquet`` (p(f|e)) and the aligned occurrences
``phrase_occurrences.parquet`` (Chinese side, English pivot, word links inside the pair).
These features read them; everything is polars joins and group-bys, no per-row Python.

**Per unit** (a Chinese side z and an English pivot e under one label), Koehn/Thrax lexical
weighting over the unit's most frequent internal alignment a::

    lex(e|z) = Π_j  w_j,   w_j = mean_{i:(i,j)∈a} p(e_j|z_i),   or NULL_PROBABILITY if e_j
                                                               has no link

taken as a geometric mean per word (the product ** 1/|e|) so that phrases of different
lengths are comparable; slots ([NP1]) are not words and are skipped; a (word, word) cell
missing from the table counts as :data:`cppdb.align.words.lexical.FLOOR`.  lex(z|e) is the
same with the roles exchanged and the p(f|e) table.  The tables carry no NULL row, so an
unaligned word gets the constant :data:`NULL_PROBABILITY` (about p(e|NULL) of a function
word).

**Per pair** (s, t) the pivots are chained as PPDB chains probabilities:
lex(t|s) through e is lex(e|s)·lex(t|e), and lex(s|t) through e is lex(e|t)·lex(s|e).  Two
aggregates over the pair's listed pivots (``pivots``: the best ``max_anchors`` pivots by
their share of p(t|s), which carry most of the mass):

* ``f_lex_t_given_s`` / ``f_lex_s_given_t``: the mean of the chains weighted by each
  pivot's contribution to p(t|s) (p(e|s)·p(t|e)) / to p(s|t).  A weighted *mean*, not
  PPDB's sum, because the sum grows with the number of pivots, which is a feature of its
  own (``f_n_pivots``): the mean says how word-for-word the translations behind the pair's
  probability mass are.
* ``f_lex_best``: the best single pivot, max_e min(chain t|s, chain s|t): a pair is
  well supported when at least one English phrase translates both sides word for word,
  even if the probability mass sits on a loose pivot.

Features a pair cannot have are null: sentence pairs (no pivots), runs without the tables
(a Pharaoh alignment was given), pairs scored from raw text.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from cppdb import schema as S
from cppdb.align.words.lexical import FLOOR

LEX_EN_GIVEN_ZH, LEX_ZH_GIVEN_EN = S.LEX_EN_GIVEN_ZH_FILE, S.LEX_ZH_GIVEN_EN_FILE
OCCURRENCES = S.OCCURRENCES_FILE
#: p(word | NULL) for a word without an alignment link (the tables have no NULL row)
NULL_PROBABILITY = 0.05
_SLOT = S.SLOT_TOKEN_PATTERN
_SLOT_SWAP = r"(\[[^\]\s]+?)"
_MARK = "\ue000"

LEX_FEATURES = ("f_lex_t_given_s", "f_lex_s_given_t", "f_lex_best")
#: the columns of a unit table (:func:`unit_weights`)
WEIGHT_UNIT_KEYS = [S.KIND, S.LHS, S.EN, S.ZH]   # per pair type, not per slot signature


def _side_weights(links: pl.DataFrame, tokens: pl.DataFrame, table: pl.DataFrame,
                  own: str, other: str) -> pl.DataFrame:
    """Per unit: the geometric-mean lexical weight of side ``own`` given side ``other``.

    ``links``: (u, zh_i, en_j); ``tokens``: (u, side, pos, word); ``table``: columns own,
    other, prob = p(own | other)."""
    own_pos, other_pos = f"{own}_pos", f"{other}_pos"
    words = tokens.filter((pl.col("side") == own) & ~pl.col("word").str.contains(_SLOT))
    others = tokens.filter(pl.col("side") == other).select(
        "u", pl.col("pos").alias(other_pos), pl.col("word").alias(other))
    linked = (links.join(words.select("u", pl.col("pos").alias(own_pos), pl.col("word").alias(own)),
                         on=["u", own_pos])
              .join(others, on=["u", other_pos])
              .join(table, on=[own, other], how="left")
              .group_by("u", own_pos).agg(pl.col("prob").fill_null(FLOOR).mean().alias("w")))
    per_word = (words.select("u", pl.col("pos").alias(own_pos))
                .join(linked, on=["u", own_pos], how="left")
                .with_columns(pl.col("w").fill_null(NULL_PROBABILITY)))
    return per_word.group_by("u").agg(pl.col("w").log().mean().exp().alias(f"lex_{own}"))


def unit_weights(occurrences: pl.LazyFrame, lex_en_given_zh: pl.DataFrame,
                 lex_zh_given_en: pl.DataFrame) -> pl.DataFrame:
    """One row per unit (kind, lhs, en, zh): counts, p(e|z), p(z|e), lex(e|z), lex(z|e).

    ``lex_en`` is lex(e|z) (English words given the Chinese side), ``lex_zh`` is lex(z|e)."""
    per_align = (occurrences.select(S.KIND, S.LHS, S.EN, S.ZH, S.ALIGN)
                 .with_columns(pl.col(S.ALIGN).list.sort())
                 .group_by(WEIGHT_UNIT_KEYS + [S.ALIGN]).agg(pl.len().alias("n"))
                 .collect(engine="streaming"))
    align_key = pl.col(S.ALIGN).cast(pl.List(pl.String)).list.join(",")
    units = (per_align.sort(["n", align_key], descending=[True, False])
             .group_by(WEIGHT_UNIT_KEYS, maintain_order=True)
             .agg(pl.col("n").sum().alias(S.C_ZE), pl.col(S.ALIGN).first())
             .sort(WEIGHT_UNIT_KEYS).with_row_index("u"))
    units = units.with_columns(
        (pl.col(S.C_ZE) / pl.col(S.C_ZE).sum().over(S.KIND, S.LHS, S.ZH)).alias(S.P_E_GIVEN_Z),
        (pl.col(S.C_ZE) / pl.col(S.C_ZE).sum().over(S.KIND, S.LHS, S.EN)).alias(S.P_Z_GIVEN_E))
    tokens = pl.concat([
        units.select("u", pl.lit(side).alias("side"), pl.col(side).str.split(" ").alias("word"))
        .with_columns(pl.int_ranges(0, pl.col("word").list.len(), dtype=pl.Int64).alias("pos"))
        .explode("word", "pos") for side in (S.ZH, S.EN)])
    links = (units.select("u", pl.col(S.ALIGN).alias("code")).explode("code").drop_nulls("code")
             .select("u", S.link_zh(pl.col("code")).cast(pl.Int64).alias("zh_pos"),
                     S.link_en(pl.col("code")).cast(pl.Int64).alias("en_pos")))
    en_given_zh = lex_en_given_zh.select(S.ZH, S.EN, pl.col("prob").cast(pl.Float64))
    zh_given_en = lex_zh_given_en.select(S.ZH, S.EN, pl.col("prob").cast(pl.Float64))
    lex_en = _side_weights(links, tokens, en_given_zh, S.EN, S.ZH)
    lex_zh = _side_weights(links, tokens, zh_given_en, S.ZH, S.EN)
    return (units.drop(S.ALIGN).join(lex_en, on="u", how="left").join(lex_zh, on="u", how="left")
            .drop("u"))


def swap_slot_indices(expr: pl.Expr) -> pl.Expr:
    """[X1] ↔ [X2] (the pivot writes a pattern's target with swapped slots when the two
    sides order their slots differently through the English pattern)."""
    return (expr.str.replace_all(_SLOT_SWAP + r"1\]", "${1}" + _MARK + "]")
            .str.replace_all(_SLOT_SWAP + r"2\]", "${1}1]")
            .str.replace_all(_MARK, "2", literal=True))


def _side_units(units: pl.DataFrame, prefix: str) -> pl.DataFrame:
    return units.select(S.KIND, S.LHS, S.EN, pl.col(S.ZH).alias("_zh"),
                        *[pl.col(c).alias(f"{prefix}_{c}") for c in
                          (S.P_E_GIVEN_Z, S.P_Z_GIVEN_E, "lex_en", "lex_zh")])


def pair_weights(pairs: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """``pairs`` plus :data:`LEX_FEATURES` (null where a row has no matching pivot unit)."""
    rows = pairs.with_row_index("_row")
    pivots = (rows.filter(pl.col(S.TYPE).is_in(["phrase", "pattern"]))
              .select("_row", pl.col(S.TYPE).alias(S.KIND), S.LHS, S.SOURCE, S.TARGET,
                      pl.col(S.PIVOTS).alias(S.EN))
              .explode(S.EN).drop_nulls(S.EN))
    src, tgt = _side_units(units, "s"), _side_units(units, "t")
    tgt_cols = [c for c in tgt.columns if c.startswith("t_")]
    matched = pivots.join(src, left_on=[S.KIND, S.LHS, S.EN, S.SOURCE],
                          right_on=[S.KIND, S.LHS, S.EN, "_zh"], how="inner")
    direct = matched.join(tgt, left_on=[S.KIND, S.LHS, S.EN, S.TARGET],
                          right_on=[S.KIND, S.LHS, S.EN, "_zh"], how="left", maintain_order="left")
    swapped = (matched.with_columns(swap_slot_indices(pl.col(S.TARGET)).alias("_swapped"))
               .join(tgt, left_on=[S.KIND, S.LHS, S.EN, "_swapped"],
                     right_on=[S.KIND, S.LHS, S.EN, "_zh"], how="left",
                     maintain_order="left"))
    both = direct.with_columns([pl.coalesce(pl.col(c), swapped[c]).alias(c) for c in tgt_cols])
    chains = both.drop_nulls("t_lex_en").with_columns(
        (pl.col("s_lex_en") * pl.col("t_lex_zh")).alias("chain_fwd"),
        (pl.col("t_lex_en") * pl.col("s_lex_zh")).alias("chain_bwd"),
        (pl.col("s_p_e_given_z") * pl.col("t_p_z_given_e")).alias("w_fwd"),
        (pl.col("t_p_e_given_z") * pl.col("s_p_z_given_e")).alias("w_bwd"))
    per_pair = chains.group_by("_row").agg(
        ((pl.col("w_fwd") * pl.col("chain_fwd")).sum() / pl.col("w_fwd").sum())
        .alias("f_lex_t_given_s"),
        ((pl.col("w_bwd") * pl.col("chain_bwd")).sum() / pl.col("w_bwd").sum())
        .alias("f_lex_s_given_t"),
        pl.min_horizontal("chain_fwd", "chain_bwd").max().alias("f_lex_best"))
    out = rows.drop([c for c in LEX_FEATURES if c in rows.columns])
    return (out.join(per_pair, on="_row", how="left", maintain_order="left")
            .with_columns([pl.col(c).cast(pl.Float64) for c in LEX_FEATURES]).drop("_row"))


def null_weights() -> list[pl.Expr]:
    """The lexical-weight columns as typed nulls (pairs without a run behind them)."""
    return [pl.lit(None, dtype=pl.Float64).alias(c) for c in LEX_FEATURES]


def run_inputs(run_dir: str | Path) -> tuple[Path, Path, Path]:
    """The files of a bilingual run that :func:`run_units` reads (a stage declares them)."""
    return tuple(Path(run_dir) / name  # type: ignore[return-value]
                 for name in (LEX_EN_GIVEN_ZH, LEX_ZH_GIVEN_EN, OCCURRENCES))


def run_units(run_dir: str | Path) -> pl.DataFrame | None:
    """The unit table of a bilingual run, or ``None`` when it lacks the lexical tables
    (a Pharaoh alignment was given) or the occurrences (not a bilingual run).  A stage that
    calls this declares :func:`run_inputs` as an optional input, so the absence is shown in
    its plan and recorded in the manifest."""
    paths = run_inputs(run_dir)
    if not all(p.exists() for p in paths):
        return None
    return unit_weights(pl.scan_parquet(paths[2]), pl.read_parquet(paths[0]),
                        pl.read_parquet(paths[1]))


def add_run_weights(frame: pl.DataFrame, run_dir: str | Path) -> pl.DataFrame:
    """``frame`` with :data:`LEX_FEATURES` from the run's tables (null where unavailable)."""
    return add_unit_weights(frame, run_units(run_dir))


def add_unit_weights(frame: pl.DataFrame, units: pl.DataFrame | None) -> pl.DataFrame:
    """``frame`` with :data:`LEX_FEATURES` from a :func:`run_units` table (read once, used
    for every chunk)."""
    if units is None or S.PIVOTS not in frame.columns:
        return frame.with_columns(null_weights())
    return pair_weights(frame, units)
