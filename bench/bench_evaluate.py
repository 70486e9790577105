"""How long `cppdb evaluate`'s table takes on many pairs (edit distances, containment, intervals).

    python -m bench.bench_evaluate --run RUN [--times 20] [--cosines]

Takes a ranked run's pairs, repeats them ``--times`` times (each copy ranked after the
previous one, so every tier grows with it) and times
:func:`cppdb.evaluate.tables.evaluation_table` with the default settings — without the
encoder unless ``--cosines`` (the cosine sample is capped per cell, so its cost does not grow
with the run).  Prints pairs, seconds and pairs per second.
"""
from __future__ import annotations

import argparse
import time

import polars as pl

from cppdb import schema as S


def repeated(ranked: pl.DataFrame, times: int) -> pl.DataFrame:
    """``times`` copies of the ranking, copy k ranked after copy k − 1 within each type."""
    base = ranked.select(S.TYPE, S.SOURCE, S.TARGET, "rank")
    size = pl.len().over(S.TYPE)
    copies = [base.with_columns((pl.col("rank") + k * size).alias("rank")) for k in range(times)]
    return pl.concat(copies).sort(S.TYPE, "rank")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a ranked run directory")
    parser.add_argument("--times", type=int, default=20)
    parser.add_argument("--cosines", action="store_true")
    args = parser.parse_args(argv)
    from cppdb.config import load_config, resolve
    from cppdb.evaluate.api import _encoders
    from cppdb.evaluate.settings import EvaluateRun
    from cppdb.evaluate.tables import evaluation_table
    from cppdb.rank.pipeline import read_ranked

    settings = resolve(EvaluateRun, load_config())
    section = settings.evaluate
    encoder = _encoders(settings, args.run)[0] if args.cosines else None
    frame = repeated(read_ranked(args.run), args.times)
    started = time.perf_counter()
    table = evaluation_table(frame, section.tops, encoder=encoder,
                             max_embedded=section.max_embedded_pairs, seed=section.seed,
                             bootstrap_max=section.bootstrap_max_items)
    seconds = time.perf_counter() - started
    print(table.select("type", "top", "pairs", "normalised_edit_distance", "containment",
                       "containment_in_order"))
    print(f"{frame.height} pairs in {seconds:.1f} s ({frame.height / seconds:,.0f} pairs/s)")


if __name__ == "__main__":
    main()
