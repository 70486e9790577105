"""Human judgements of phrase/pattern pairs: reading them, matching them to a run, scoring
a ranking against them (ROC AUC, precision of the top 20 %), grouped cross-validation folds.

A judgement file is a TSV with a header and the columns ``type`` (phrase | pattern),
``source``, ``target`` (the run's space-joined token strings) and ``rating`` (1–5,
Callison-Burch); any further columns (origin, stratum, …) are kept.  The older
``source<TAB>target<TAB>score`` label files (data/labels/paraphrase_labels.tsv) are read too:
``score`` is the rating and the type is ``pattern`` when a side holds a slot ``[XX1]``.

A pair is *acceptable* when rated ≥ 3 (the paper's Table 5 threshold).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.errors import BadInputError
from cppdb.rank.pairs import join_key

RATING = "rating"
ACCEPTABLE = 3.0
TOP_SHARE = 0.2
JUDGED_TYPES = ("phrase", "pattern")
_SLOT = r"\[[A-Z$]+\d+\]"


def read_judgements(path: str | Path) -> pl.DataFrame:
    """The judgement file as (type, source, target, rating, …); BadInputError names the
    first bad row."""
    path = Path(path)
    if not path.is_file():
        raise BadInputError(f"judgement file {path} does not exist")
    frame = pl.read_csv(path, separator="\t", quote_char=None, infer_schema=False)
    if RATING not in frame.columns and "score" in frame.columns:
        frame = frame.rename({"score": RATING})
    missing = [c for c in (S.SOURCE, S.TARGET, RATING) if c not in frame.columns]
    if missing:
        raise BadInputError(f"{path} lacks column(s) {', '.join(missing)}",
                            hint="write a header: type, source, target, rating")
    if S.TYPE not in frame.columns:
        slot = pl.col(S.SOURCE).str.contains(_SLOT) | pl.col(S.TARGET).str.contains(_SLOT)
        frame = frame.with_columns(pl.when(slot).then(pl.lit("pattern")).otherwise(pl.lit("phrase"))
                                   .alias(S.TYPE))
    rating = pl.col(RATING).str.strip_chars().cast(pl.Float64, strict=False)
    frame = frame.with_columns(rating.alias(RATING), pl.col(S.TYPE).str.strip_chars())
    bad = frame.with_row_index("_line", offset=2).filter(
        pl.col(RATING).is_null() | ~pl.col(RATING).is_between(1, 5)
        | ~pl.col(S.TYPE).is_in(list(JUDGED_TYPES))
        | (pl.col(S.SOURCE).str.strip_chars() == "") | (pl.col(S.TARGET).str.strip_chars() == ""))
    if bad.height:
        line = bad.row(0, named=True)
        raise BadInputError(f"{path}: line {line['_line']} is not a judgement "
                            f"(type {line[S.TYPE]!r}, rating {line[RATING]!r})",
                            hint="type is phrase or pattern, rating a number from 1 to 5")
    return frame


def match_run_pairs(judgements: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    """The run's pair row of every judgement (same type and same text up to whitespace and
    NFKC), plus the judgement columns; a pair listed under several labels (NP, VP) keeps its
    best-supported row (highest count, then p(t|s)).  Unmatched judgements are dropped:
    compare the heights to count them."""
    keyed = pairs.with_columns(join_key(S.SOURCE).alias("_ks"), join_key(S.TARGET).alias("_kt"))
    keyed = (keyed.sort([S.COUNT, S.P_TGT_GIVEN_SRC, S.LHS], descending=[True, True, False],
                        nulls_last=True)
             .unique([S.TYPE, "_ks", "_kt"], keep="first", maintain_order=True))
    extra = [c for c in judgements.columns if c not in (S.SOURCE, S.TARGET, S.TYPE)]
    judged = judgements.with_columns(join_key(S.SOURCE).alias("_ks"),
                                     join_key(S.TARGET).alias("_kt")).select(
        S.TYPE, "_ks", "_kt", *[pl.col(c).alias(f"judged_{c}") if c in keyed.columns else c
                                for c in extra])
    out = judged.join(keyed, on=[S.TYPE, "_ks", "_kt"], how="inner", maintain_order="left")
    return out.drop("_ks", "_kt")


def roc_auc(scores: np.ndarray, positive: np.ndarray) -> float | None:
    """Mann–Whitney ROC AUC with average ranks for ties; None when one class is empty."""
    from scipy.stats import rankdata

    positive = np.asarray(positive, dtype=bool)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = rankdata(np.asarray(scores, dtype=np.float64))
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def top_precision(scores: np.ndarray, positive: np.ndarray, share: float = TOP_SHARE,
                  seed: int = 13) -> float | None:
    """Share of acceptable pairs among the best ``ceil(share · n)`` by score (ties broken
    by a seeded random order, so tied baselines get no free ordering)."""
    n = len(scores)
    if n == 0:
        return None
    tiebreak = np.random.default_rng(seed).permutation(n)
    order = np.lexsort((tiebreak, -np.asarray(scores, dtype=np.float64)))
    top = order[: math.ceil(share * n - 1e-9)]
    return float(np.asarray(positive, dtype=bool)[top].mean())


def metric_table(frame: pl.DataFrame, score_columns: list[str], *, resamples: int = 200,
                 seed: int = 13) -> pl.DataFrame:
    """Per type and scorer: n, acceptable share, ROC AUC and top-20 % precision with
    bootstrap standard errors.  ``frame`` needs ``type``, ``rating`` and the score columns
    (a null score ranks lowest)."""
    rows = []
    for pair_type in [t for t in JUDGED_TYPES if t in frame[S.TYPE].to_list()]:
        part = frame.filter(pl.col(S.TYPE) == pair_type)
        positive = (part[RATING] >= ACCEPTABLE).to_numpy()
        rng = np.random.default_rng(seed)
        samples = [rng.integers(0, part.height, part.height) for _ in range(resamples)]
        for column in score_columns:
            scores = part[column].cast(pl.Float64).fill_null(-np.inf).fill_nan(-np.inf).to_numpy()
            auc = [roc_auc(scores[i], positive[i]) for i in samples]
            top = [top_precision(scores[i], positive[i]) for i in samples]
            rows.append({
                "type": pair_type, "scorer": column, "pairs": part.height,
                "acceptable_share": float(positive.mean()),
                "roc_auc": roc_auc(scores, positive),
                "roc_auc_se": float(np.std([a for a in auc if a is not None])),
                "top20_precision": top_precision(scores, positive),
                "top20_precision_se": float(np.std([t for t in top if t is not None]))})
    return pl.DataFrame(rows)


def folds_by_source(sources: list[str], folds: int, seed: int = 13) -> np.ndarray:
    """A fold per row; rows with the same source phrase (up to whitespace) share a fold."""
    keys = [s.replace(" ", "") for s in sources]
    unique = list(dict.fromkeys(keys))
    order = np.random.default_rng(seed).permutation(len(unique))
    fold = {key: int(order[i]) % folds for i, key in enumerate(unique)}
    return np.array([fold[k] for k in keys], dtype=np.int64)
