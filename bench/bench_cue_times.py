"""Cue times of subtitle pairs (cppdb/align/sentences/cue_times.py): what the drop rule removes
from a real run, checked against blind judgements, and how fast it is.

    python -m bench.bench_cue_times judged RUN [--labels FILE]
    python -m bench.bench_cue_times [speed] [--pairs N]       (bench/run_all.py runs this)

``judged``: RUN is an ``extract-monolingual`` run of two subtitle tracks made with the
current code (its pair tables carry the cue columns and the reasons).  It reports the 1-1
pairs the confidence keeps, how many of those the cue rule drops, the blind ratings of the
judged pairs on each side of the rule (``data/labels/monolingual_judgements.tsv``: acceptable
= rating >= 3), and, as a check that needs no judge, how often the time test alone (without
the shared-character exception) would drop pairs whose text shows they are the same line
(shared characters >= 0.6).  ``speed``: the cue columns and the rule on N synthetic pairs
(100 document pairs), seconds and peak memory.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl

from bench.common import record, timer
from cppdb import schema
from cppdb.align.sentences.cue_times import (CueSettings, cue_agreement, cue_mismatch,
                                             shared_characters)
from cppdb.config import load_config

LABELS = Path(__file__).resolve().parents[1] / "data" / "labels" / "monolingual_judgements.tsv"
SAME_LINE = 0.6


def _run_pairs(run: Path) -> pl.DataFrame:
    kept = pl.read_parquet(run / "sentence_pairs.parquet").with_columns(
        pl.lit(None, pl.String).alias("reason"))
    low = pl.read_parquet(run / "low_confidence_pairs.parquet")
    pairs = pl.concat([kept, low.select(kept.columns)])
    if schema.CUE_GAP not in pairs.columns:
        raise SystemExit(f"{run} has no cue columns: run extract-monolingual with this version")
    return pairs.with_columns(
        pl.col("reason").fill_null("").str.contains("confidence ").alias("unsure"),
        pl.col("reason").fill_null("").str.contains("cues ").alias("apart"),
        shared_characters(schema.SOURCE, schema.TARGET).alias("shared"))


def judged(run: Path, labels: Path) -> dict:
    pairs = _run_pairs(run)
    sure = pairs.filter(~pl.col("unsure"))
    ratings = (pl.read_csv(labels, separator="\t", quote_char=None)
               .group_by(schema.SOURCE, schema.TARGET).agg(pl.col("rating").min()))
    rated = sure.join(ratings, on=[schema.SOURCE, schema.TARGET], how="inner")
    max_gap = int(load_config().section("monolingual")["cue_max_gap_ms"])
    same_line = pairs.filter(pl.col("shared") >= SAME_LINE, pl.col(schema.CUE_GAP).is_not_null())

    def split(frame: pl.DataFrame) -> dict:
        return {"n": frame.height, "acceptable": int((frame["rating"] >= 3).sum())}

    row = {
        "run": str(run), "one_to_one": pairs.height, "timed": int(pairs[schema.CUE_GAP]
                                                                  .is_not_null().sum()),
        "kept_by_confidence": sure.height, "dropped_by_cues": int(sure["apart"].sum()),
        "kept": int((~sure["apart"]).sum()),
        "judged_dropped": split(rated.filter("apart")),
        "judged_kept": split(rated.filter(~pl.col("apart"))),
        "same_line_pairs": same_line.height,
        "same_line_apart_by_time_alone": int((same_line[schema.CUE_GAP] > max_gap).sum()),
    }
    return record("cue_times", row)


def _synthetic(n: int, documents: int = 100, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    per = n // documents
    start = np.tile(np.arange(per) * 2500, documents) + rng.integers(-300, 300, per * documents)
    shift = np.repeat(rng.integers(-5000, 5000, documents), per)
    wrong = rng.random(per * documents) < 0.03       # 3 % paired with the next line's cue
    src_start = start + np.where(wrong, 2500, 0)
    return pl.DataFrame({
        "version_src": 0, "path_src": np.repeat([f"a/{d}.srt" for d in range(documents)], per),
        "part_src": None,
        "version_tgt": 1, "path_tgt": np.repeat([f"b/{d}.srt" for d in range(documents)], per),
        "part_tgt": None,
        "bead": np.tile(np.arange(per), documents),
        schema.SOURCE: np.where(wrong, "佢嚟咗", "救命！"), schema.TARGET: "救命呀！",
        schema.SRC_START: src_start, schema.SRC_END: src_start + 1500,
        schema.TGT_START: start + shift, schema.TGT_END: start + shift + 1500})


def speed(n: int) -> dict:
    pairs = _synthetic(n)
    settings = CueSettings()
    with timer() as took:
        out = cue_agreement(pairs, settings.cue_offset_window).with_columns(
            cue_mismatch(settings, schema.SOURCE, schema.TARGET).alias("apart"))
    return record("cue_times", {"pairs": pairs.height, "seconds": took["seconds"],
                                "pairs_per_second": round(pairs.height / max(took["seconds"],
                                                                             1e-9)),
                                "dropped": int(out["apart"].sum())})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", nargs="?", default="speed", choices=("judged", "speed"))
    parser.add_argument("run", nargs="?", type=Path)
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--pairs", type=int, default=1_000_000)
    args = parser.parse_args()
    if args.action == "judged":
        if args.run is None:
            parser.error("judged needs the run directory of an extract-monolingual run")
        judged(args.run, args.labels)
    else:
        speed(args.pairs)


if __name__ == "__main__":
    main()
