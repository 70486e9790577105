"""Quality like the paper: Tatoeba end to end, a blind judging sheet, Table 5 shares.

    python -m devtools.judge sheet --cmn cmn.txt --out DIR [--exclude labels.tsv]
    python -m devtools.judge sheet --zh t.zh --en t.en --out DIR
    python -m devtools.judge sheet --run RUN --out DIR        # an extracted run
    python -m devtools.judge score --key DIR/key.jsonl --ratings ratings.tsv
    python -m devtools.judge change-sheet --before RUN_A --after RUN_B --out DIR
    python -m devtools.judge change-score --key DIR/key.jsonl --ratings ratings.tsv

``sheet`` runs ``extract-bilingual`` and ``rank`` with the defaults into ``DIR/run`` (or
ranks ``--run`` when it has no ranking yet), then draws ``--per-cell`` (60) pairs per type
(phrase, pattern) × cell: ``top20`` (the best 20 % of the type's ranking) and ``all``
(every ranked pair of the type), seeded, as many from each tenth of the ranking as the cell
allows (:mod:`devtools.blind`), leaving out every pair of ``--exclude`` label files (type +
text up to whitespace) so that the judged sample is fresh.  A pair drawn in both cells is
judged once.  It writes

* ``sheet.jsonl`` — what the judge sees: ``id``, ``type``, ``a``, ``b`` (the two sides,
  spaces between words removed), in a shuffled order; no score, rank or cell;
* ``key.jsonl`` — one row per (id, cell) with the pair, its score, rank, percentile and tenth;
* ``automatic.json`` — the paper's Table 3/4 metrics (edit distance, ED ÷ length, the
  containment share, cosine, each with a 95 % bootstrap interval) at the top 20 / 60 /
  100 % and their signature (:mod:`cppdb.evaluate.tables`, what ``cppdb evaluate`` prints).

``score`` joins a ratings file (``id<TAB>rating``, 1–5, an optional header) to the key and
prints the share rated ≥ 3 per cell (each tenth weighted by its size) with n and ±1.96·SE
(normal approximation, SE = √(p(1−p)/n_eff)) next to the paper's Table 5, and beside it
diversity: the judged sample's own ED ÷ length and containment share (and the share
acceptable *and* not a containment pair), and the whole tier's ED, ED ÷ length, containment
share and cosine with their intervals — from ``automatic.json`` next to the key, or computed
afresh with ``--run RUN``.
``--out`` writes it all as JSON.

``change-sheet`` and ``change-score`` judge a ranking change where it changed: the pairs that
enter and leave each type's top 20 % between two ranked runs (``--before``, ``--after``: run
directories, or two copies of one run ranked with other settings), ``--per-set`` (50) of each,
in a blind sheet like ``sheet``'s; ``change-score`` prints each set's acceptable share and the
tier's change in points with its 95 % interval (:mod:`devtools.tier_change`: far
tighter than two tier samples, and it sees the entering pairs that earlier judgements rarely
cover).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import polars as pl

from cppdb.io import write_json_atomic
from devtools.blind import (
    draw_cells,
    excluded_keys,
    format_shares,
    read_ratings,
    shares,
    sheet_and_key,
    with_tier_metrics,
    write_jsonl,
)
from devtools.prepare_corpus import tatoeba_inputs


def _ranked_run(args: argparse.Namespace, out: Path) -> Path:
    from cppdb.config import load_config
    from cppdb.extractors.bilingual import extract_bilingual
    from cppdb.rank.pipeline import RANK_DIR, RANKED, rank_run

    config = load_config(args.config)
    run = Path(args.run) if args.run else out / "run"
    if not args.run:
        if args.cmn:
            zh, en = tatoeba_inputs(Path(args.cmn), out / "input")
        else:
            zh, en = Path(args.zh), Path(args.en)
        extract_bilingual(zh, en, run, config)
    if args.rerank or not (run / RANK_DIR / RANKED).exists():
        rank_run(run, config, fresh=args.rerank)
    return run


def cmd_sheet(args: argparse.Namespace) -> None:
    from cppdb.config import load_config
    from cppdb.evaluate.api import evaluate_run_signed
    from cppdb.rank.pipeline import read_ranked

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    run = _ranked_run(args, out)
    ranked = read_ranked(run)
    keys = draw_cells(ranked, args.per_cell, excluded_keys([Path(p) for p in args.exclude]),
                      args.seed)
    sheet, key = sheet_and_key(keys, args.seed)
    write_jsonl(sheet, out / "sheet.jsonl")
    write_jsonl(key, out / "key.jsonl")
    print(f"wrote {out / 'sheet.jsonl'} ({sheet.height} pairs to judge) and {out / 'key.jsonl'}")
    if not args.no_automatic:
        table, signed = evaluate_run_signed(run, load_config(args.config))
        write_json_atomic(out / "automatic.json",
                          {"run": str(run), "signature": signed, "rows": table.to_dicts()})
        print(table)


def _tier_metrics(args: argparse.Namespace) -> tuple[pl.DataFrame | None, str | None]:
    """The run's evaluation table and signature: ``--run`` evaluated now, else the
    ``automatic.json`` that ``sheet`` wrote next to the key (None when neither exists)."""
    if args.run:
        from cppdb.config import load_config
        from cppdb.evaluate.api import evaluate_run_signed

        return evaluate_run_signed(args.run, load_config(args.config))
    saved = Path(args.key).parent / "automatic.json"
    if not saved.exists():
        return None, None
    data = json.loads(saved.read_text("utf-8"))
    return pl.DataFrame(data["rows"]), data.get("signature")


def cmd_score(args: argparse.Namespace) -> None:
    key = pl.read_ndjson(args.key)
    table = shares(key, read_ratings(Path(args.ratings)))
    automatic, signed = _tier_metrics(args)
    if automatic is not None and "containment" in automatic.columns:
        table = with_tier_metrics(table, automatic)
    else:
        print("(no tier metrics: run `sheet` without --no-automatic, or give --run RUN)")
    print(format_shares(table))
    if signed:
        print(f"tier metrics signature: {signed}")
    if args.out:
        write_json_atomic(args.out, {"key": str(args.key), "ratings": str(args.ratings),
                                     "tier_signature": signed, "rows": table.to_dicts()})


def cmd_change_sheet(args: argparse.Namespace) -> None:
    from devtools.tier_change import draw_tier_changes
    from cppdb.rank.pipeline import read_ranked

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    exclude = excluded_keys([Path(p) for p in args.exclude]) if args.exclude else None
    keys = draw_tier_changes(read_ranked(Path(args.before)), read_ranked(Path(args.after)),
                             args.per_set, exclude, args.seed)
    sheet, key = sheet_and_key(keys, args.seed)
    write_jsonl(sheet, out / "sheet.jsonl")
    write_jsonl(key, out / "key.jsonl")
    print(f"wrote {out / 'sheet.jsonl'} ({sheet.height} pairs to judge) and {out / 'key.jsonl'}")
    if keys.is_empty():
        print("nothing to judge: the two rankings have the same top 20 % of every type, or "
              "every pair that changed was judged before (--exclude)")
    else:
        print(keys.unique(["type", "cell"]).sort("type", "cell")
              .select("type", "cell", "set_size", "tier_before", "tier_after"))


def cmd_change_score(args: argparse.Namespace) -> None:
    from devtools.tier_change import format_tier_change, tier_change

    table = tier_change(pl.read_ndjson(args.key), read_ratings(Path(args.ratings)))
    print(format_tier_change(table))
    if args.out:
        write_json_atomic(args.out, {"key": str(args.key), "ratings": str(args.ratings),
                                     "rows": table.to_dicts()})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sheet = sub.add_parser("sheet", help="run, rank, and write the blind sheet + key")
    source = sheet.add_mutually_exclusive_group(required=True)
    source.add_argument("--cmn", help="Tatoeba cmn.txt (en<TAB>zh<TAB>attribution)")
    source.add_argument("--zh", help="Chinese side (with --en)")
    source.add_argument("--run", help="an extracted bilingual run directory")
    sheet.add_argument("--en")
    sheet.add_argument("--out", required=True)
    sheet.add_argument("--exclude", action="append", default=[],
                       help="label/judgement TSV whose pairs must not be drawn (repeatable)")
    sheet.add_argument("--per-cell", type=int, default=60)
    sheet.add_argument("--seed", type=int, default=13)
    sheet.add_argument("--config", default=None, help="TOML config (default: the defaults)")
    sheet.add_argument("--rerank", action="store_true", help="rank the run again (fresh)")
    sheet.add_argument("--no-automatic", action="store_true",
                       help="skip the Table 3/4 metrics (they embed up to 2,000 pairs/type)")
    score = sub.add_parser("score", help="join ratings to the key; Table 5 shares")
    score.add_argument("--key", required=True)
    score.add_argument("--ratings", required=True)
    score.add_argument("--out", default=None)
    score.add_argument("--run", default=None,
                       help="ranked run whose tier metrics go next to each row (default: the "
                            "automatic.json next to --key)")
    score.add_argument("--config", default=None, help="TOML config for --run's evaluation")
    change = sub.add_parser("change-sheet", help="a blind sheet of the pairs that enter and "
                                                  "leave the top 20 %% between two rankings")
    change.add_argument("--before", required=True, help="ranked run before the change")
    change.add_argument("--after", required=True, help="ranked run after the change")
    change.add_argument("--out", required=True)
    change.add_argument("--per-set", type=int, default=50)
    change.add_argument("--seed", type=int, default=13)
    change.add_argument("--exclude", action="append", default=[],
                        help="label/judgement TSV whose pairs must not be drawn (repeatable)")
    change_score = sub.add_parser("change-score", help="the tier's change in acceptable "
                                                       "share, from a change-sheet's ratings")
    change_score.add_argument("--key", required=True)
    change_score.add_argument("--ratings", required=True)
    change_score.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    if args.command == "sheet" and args.zh and not args.en:
        parser.error("--zh needs --en")
    {"sheet": cmd_sheet, "score": cmd_score, "change-sheet": cmd_change_sheet,
     "change-score": cmd_change_score}[args.command](args)


if __name__ == "__main__":
    main()
