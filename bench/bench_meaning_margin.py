"""Meaning margin of sentence pairs (cppdb/align/sentences/meaning.py): which threshold the
judged pairs support, and how fast the margins are.

    python -m bench.bench_meaning_margin judged RUN [--labels FILE] [--only SAMPLE_TAG]
    python -m bench.bench_meaning_margin [speed] [--pairs N]     (bench/run_all.py runs this)

``judged``: RUN is an ``extract-monolingual`` run made with the check on (its pair tables carry
``meaning_margin``).  The 1-1 pairs the other checks keep are joined with the blind ratings of
``data/labels/monolingual_judgements.tsv`` (acceptable = rating >= 3) and, for a range of
thresholds, the bench reports the share of the run's pairs dropped, how many judged pairs stay,
how many of them are unacceptable and how many acceptable ones are lost; plus the ROC AUC of
the margin and of the bead cost as predictors of "unacceptable".  ``--only``
restricts the ratings to rows whose ``data`` column contains the tag (e.g. the development
samples, to keep a later test sample out of the choice).
``speed``: margins for N synthetic pairs in 100 document pairs from random 384-d vectors
(the encoder's time is the encoder benchmark's), seconds and peak memory.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl

from bench.common import peak_rss_mb, record, timer
from cppdb import schema
from cppdb.align.sentences.meaning import MEANING_MARGIN, meaning_margins

LABELS = Path(__file__).resolve().parents[1] / "data" / "labels" / "monolingual_judgements.tsv"
THRESHOLDS = (0.94, 0.95, 0.955, 0.96, 0.965, 0.97, 0.98)


def _run_pairs(run: Path) -> pl.DataFrame:
    kept = pl.read_parquet(run / "sentence_pairs.parquet").with_columns(
        pl.lit("", pl.String).alias("reason"))
    low = pl.read_parquet(run / "low_confidence_pairs.parquet")
    pairs = pl.concat([kept, low.select(kept.columns)])
    if pairs[MEANING_MARGIN].null_count() == pairs.height:
        raise SystemExit(f"{run} has no meaning margins: run extract-monolingual with "
                         "monolingual.min_meaning_margin > 0")
    # the pairs the other checks keep: the population this check acts on
    other = pl.col("reason").str.contains("confidence ") | pl.col("reason").str.contains("cues ")
    return pairs.filter(~other)


def _auc(bad: np.ndarray, score: np.ndarray) -> float:
    """P(score of an unacceptable pair < score of an acceptable one), ties half."""
    bad_scores, good_scores = score[bad], score[~bad]
    if not len(bad_scores) or not len(good_scores):
        return float("nan")
    below = (bad_scores[:, None] < good_scores[None, :]).mean()
    ties = (bad_scores[:, None] == good_scores[None, :]).mean()
    return float(below + ties / 2)


def judged(run: Path, labels: Path, only: str | None) -> dict:
    pairs = _run_pairs(run)
    ratings = pl.read_csv(labels, separator="\t", quote_char=None)
    if only:
        ratings = ratings.filter(pl.col("data").str.contains(only, literal=True))
    ratings = ratings.group_by(schema.SOURCE, schema.TARGET).agg(pl.col("rating").min())
    rated = pairs.join(ratings, on=[schema.SOURCE, schema.TARGET], how="inner")
    bad = (rated["rating"] < 3).to_numpy()
    margin = rated[MEANING_MARGIN].to_numpy()
    rows = []
    for threshold in THRESHOLDS:
        keep = margin >= threshold
        rows.append({"threshold": threshold,
                     "run_dropped_share": round(float((pairs[MEANING_MARGIN] < threshold)
                                                      .mean()), 3),
                     "judged_kept": int(keep.sum()), "unacceptable_kept": int((keep & bad).sum()),
                     "acceptable_kept_share": round(float(1 - bad[keep].mean()), 3)
                     if keep.any() else None,
                     "acceptable_lost": int((~keep & ~bad).sum())})
    return {"run": str(run), "pairs": pairs.height, "judged": rated.height,
            "unacceptable": int(bad.sum()), "auc_margin": round(_auc(bad, margin), 3),
            "auc_bead_cost": round(_auc(bad, -rated["cost"].to_numpy()), 3),
            "thresholds": rows}


def speed(n_pairs: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    docs = 100
    per_doc = max(1, n_pairs // docs)
    texts = [f"t{i}" for i in range(2 * docs * per_doc)]
    vectors = rng.normal(size=(len(texts), 384)).astype(np.float32)
    row = {t: i for i, t in enumerate(texts)}
    doc_of = np.repeat(np.arange(2 * docs), per_doc)
    units = pl.DataFrame({schema.VERSION: doc_of // docs,
                          schema.PATH: (doc_of % docs).astype(str),
                          schema.PART: [None] * len(texts), "text": texts},
                         schema_overrides=schema.DOC_KEY_SCHEMA)
    src = np.repeat(np.arange(docs), per_doc)
    pairs = pl.DataFrame({"version_src": 0, "path_src": src.astype(str), "part_src": None,
                          "version_tgt": 1, "path_tgt": src.astype(str), "part_tgt": None,
                          "source": texts[:docs * per_doc], "target": texts[docs * per_doc:]},
                         schema_overrides=schema.PAIR_DOC_SCHEMA)
    with timer() as clock:
        margins = meaning_margins(pairs, units, lambda ts: vectors[[row[t] for t in ts]], 4)
    return {"pairs": pairs.height, "documents": docs, "seconds": clock["seconds"],
            "pairs_per_second": round(pairs.height / max(clock["seconds"], 1e-9)),
            "peak_rss_mb": peak_rss_mb(), "mean_margin": round(float(margins.mean()), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", nargs="?", default="speed", choices=("judged", "speed"))
    parser.add_argument("run", nargs="?", type=Path)
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--only", default=None)
    parser.add_argument("--pairs", type=int, default=200_000)
    args = parser.parse_args()
    if args.mode == "judged":
        if args.run is None:
            parser.error("judged needs RUN")
        result = judged(args.run, args.labels, args.only)
    else:
        result = {size: speed(size) for size in (args.pairs // 10, args.pairs)}
    record("meaning_margin", {"mode": args.mode, **({"result": result})})


if __name__ == "__main__":
    main()
