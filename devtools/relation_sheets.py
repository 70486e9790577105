"""Blind sheets for judging PPDB 2.0's six relations, and the ratings joined back.

    python -m devtools.relation_sheets draw --run tatoeba=RUN --run long-zhen=RUN \\
        --out SHEETS --key KEY_DIR [--per-cell 140] [--overlap 200] [--sheet-size 250]
    python -m devtools.relation_sheets join --key KEY_DIR/key.parquet \\
        --ratings R1.tsv [--ratings R2.tsv ...] --second OVERLAP.tsv --out judgements.tsv
    python -m devtools.relation_sheets evaluate --key KEY_DIR/key.parquet \\
        --judgements judgements.tsv
    python -m devtools.relation_sheets rule --judgements data/labels/relation_judgements.tsv \\
        [--acceptability data/labels/bilingual_judgements.tsv ...]

``draw`` takes, from every ranked run (``NAME=DIR``; the name is the domain), a seeded
random sample of ``--per-cell`` phrase and pattern pairs per (type, tier) so that every tier
is present: the tiers are equal-sized strata, not the table's own mix, so a table-wide mix
weights each stratum by its ``stratum_pairs`` (kept in the key).  One direction per
unordered pair.  All domains are shuffled together, numbered ``r0001`` … in that order and
cut into sheets of ``--sheet-size`` rows: ``id<TAB>a<TAB>b`` with the two sides as a reader
writes them (slots kept) and nothing else.  ``--overlap`` ids (equal numbers per domain,
seeded) form ``overlap.tsv`` in another order, for a second judge (Cohen's κ).  The key —
domain, run, type, label, tier, score, rank, percentile, stratum size, the sheet, and every
``f_*`` feature of the run's ``features.parquet`` — goes to ``KEY_DIR/key.parquet`` (and the
same without features as ``key.tsv``), never next to the sheets.

``join`` reads the judges' ``id<TAB>relation<TAB>reason`` lines (unknown relations and
unknown or repeated ids are errors, listed), writes one row per judged pair with its key
columns (no features), and prints Cohen's κ on the overlap and the relation mix per domain,
type and tier.  ``evaluate`` measures :mod:`cppdb.rank.relations`' classifier on those
judgements (features from the key): grouped CV by source phrase and leave-one-domain-out;
and the ranker's Exclusion rule (:mod:`cppdb.rank.exclusion`) on every judged pair.
``rule`` measures the rule alone from the pairs' text (no key needed): its precision and
recall of the judges' Exclusion per domain and its hits per kind; on acceptability
judgements (``type``, ``source``, ``target``, ``rating``), how often the pairs it flags were
rated acceptable (≥ 3), per kind.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.errors import BadInputError
from cppdb.io import write_parquet_atomic, write_text_atomic
from cppdb.rank import exclusion, relation_cv, relations
from cppdb.rank.pairs import join_key
from cppdb.rank.pipeline import read_ranked
from cppdb.rank.relations import RELATIONS
from devtools.blind import surface_text

TYPES = ("phrase", "pattern")
KEY_COLUMNS = ("id", "domain", "run", "type", "lhs", "source", "target", "tier", "score",
               "rank", "percentile", "stratum_pairs", "sheet", "overlap")


def _one_direction(ranked: pl.DataFrame, seed: int) -> pl.DataFrame:
    """``ranked`` less one direction of each unordered pair (which one: seeded) and less
    repeats under other left-hand-side labels; order kept."""
    ks, kt = join_key(S.SOURCE), join_key(S.TARGET)
    keyed = ranked.with_columns(pl.when(ks <= kt).then(ks).otherwise(kt).alias("_lo"),
                                pl.when(ks <= kt).then(kt).otherwise(ks).alias("_hi"))
    order = np.random.default_rng(seed).permutation(keyed.height)
    kept = keyed[order].unique([S.TYPE, "_lo", "_hi"], keep="first", maintain_order=True)
    return ranked.join(kept.select(S.TYPE, S.LHS, S.SOURCE, S.TARGET),
                       on=[S.TYPE, S.LHS, S.SOURCE, S.TARGET], how="semi",
                       maintain_order="left")


def draw_domain(ranked: pl.DataFrame, per_cell: int, seed: int) -> pl.DataFrame:
    """``per_cell`` pairs per (type, tier) of one ranked table (all of a smaller stratum),
    with ``stratum_pairs`` = the stratum's size in the whole table."""
    sizes = ranked.group_by(S.TYPE, "tier").agg(pl.len().alias("stratum_pairs"))
    pool = _one_direction(ranked.filter(pl.col(S.TYPE).is_in(TYPES)), seed)
    parts = []
    for (pair_type, tier), stratum in sorted(pool.group_by(S.TYPE, "tier"),
                                             key=lambda item: item[0]):
        offset = TYPES.index(pair_type) * 100 + sum(map(ord, tier))
        parts.append(stratum.sample(min(per_cell, stratum.height), seed=seed + offset,
                                    shuffle=True))
    if not parts:
        raise BadInputError("the ranked table has no phrase or pattern pairs",
                            hint="rank a run that has phrase_pairs / pattern_pairs")
    drawn = pl.concat(parts, how="vertical_relaxed")
    return drawn.join(sizes, on=[S.TYPE, "tier"], how="left", maintain_order="left")


def _with_features(drawn: pl.DataFrame, run: Path) -> pl.DataFrame:
    """The drawn rows with every ``f_*`` column of the run's features table."""
    features = pl.scan_parquet(run / S.RANKING_DIR / S.FEATURES_FILE)
    on = [S.TYPE, S.LHS, S.SOURCE, S.TARGET]
    names = [c for c in features.collect_schema().names() if c.startswith("f_")]
    wanted = features.join(drawn.lazy().select(on), on=on, how="semi").select(*on, *names)
    table = wanted.collect().unique(on, keep="first", maintain_order=True)
    return drawn.join(table, on=on, how="left", maintain_order="left")


def number_and_cut(drawn: pl.DataFrame, sheet_size: int, overlap: int, seed: int,
                   first_id: int = 1, first_sheet: int = 1) -> pl.DataFrame:
    """Shuffle every domain together, number ``r0001`` … (from ``first_id``), cut into sheets
    (from ``first_sheet``: a later batch continues an earlier one), and mark ``overlap`` ids
    (equal shares per domain) for the second judge."""
    rng = np.random.default_rng(seed)
    mixed = drawn[rng.permutation(drawn.height)].with_row_index("_n")
    mixed = mixed.with_columns(
        pl.format("r{}", (pl.col("_n") + first_id).cast(pl.String).str.zfill(4)).alias("id"),
        pl.format("sheet-{}", (pl.col("_n") // sheet_size + first_sheet).cast(pl.String)
                  .str.zfill(2)).alias("sheet"))
    domains = sorted(mixed["domain"].unique().to_list())
    chosen: list[str] = []
    for index, domain in enumerate(domains):
        ids = mixed.filter(pl.col("domain") == domain)["id"].to_list()
        share = overlap // len(domains) + (1 if index < overlap % len(domains) else 0)
        chosen += list(rng.choice(ids, size=min(share, len(ids)), replace=False))
    return mixed.drop("_n").with_columns(pl.col("id").is_in(chosen).alias("overlap"))


def _sheet_text(rows: pl.DataFrame) -> str:
    shown = rows.select("id", surface_text(S.SOURCE).alias("a"), surface_text(S.TARGET)
                        .alias("b"))
    return "id\ta\tb\n" + "".join(f"{i}\t{a}\t{b}\n" for i, a, b in shown.iter_rows())


def write_sheets(key: pl.DataFrame, out: Path, seed: int, overlap_name: str = "overlap.tsv"
                 ) -> list[Path]:
    """One TSV per sheet (in id order) and the overlap sheet (its own seeded order)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for (sheet,), rows in sorted(key.group_by("sheet"), key=lambda item: item[0]):
        paths.append(out / f"{sheet}.tsv")
        write_text_atomic(paths[-1], _sheet_text(rows.sort("id")))
    shared = key.filter(pl.col("overlap")).sort("id")
    shared = shared[np.random.default_rng(seed + 1).permutation(shared.height)]
    paths.append(out / overlap_name)
    write_text_atomic(paths[-1], _sheet_text(shared))
    return paths


def cmd_draw(args: argparse.Namespace) -> None:
    parts = []
    for spec in args.run:
        domain, _, path = spec.partition("=")
        if not path:
            raise BadInputError(f"--run {spec!r} is not NAME=DIR", hint="--run tatoeba=RUN")
        ranked = read_ranked(Path(path))
        drawn = draw_domain(ranked, args.per_cell, args.seed)
        parts.append(_with_features(drawn, Path(path)).with_columns(
            pl.lit(domain).alias("domain"), pl.lit(str(Path(path).resolve())).alias("run")))
    drawn = pl.concat(parts, how="diagonal_relaxed")
    key = number_and_cut(drawn, args.sheet_size, args.overlap, args.seed, args.first_id,
                         args.first_sheet)
    key = key.select(*KEY_COLUMNS, *[c for c in key.columns if c.startswith("f_")])
    overlap_name = ("overlap.tsv" if args.first_sheet == 1
                    else f"overlap-from-sheet-{args.first_sheet:02d}.tsv")
    paths = write_sheets(key, Path(args.out), args.seed, overlap_name)
    key_dir = Path(args.key)
    key_dir.mkdir(parents=True, exist_ok=True)
    write_parquet_atomic(key_dir / "key.parquet", key)
    plain = key.select(KEY_COLUMNS)
    write_text_atomic(key_dir / "key.tsv", plain.write_csv(separator="\t"))
    print(f"{key.height} pairs, {int(key['overlap'].sum())} in the overlap; sheets: "
          + ", ".join(f"{p.name}" for p in paths))
    print(key.group_by("domain", S.TYPE, "tier").agg(pl.len().alias("drawn"),
                                                     pl.first("stratum_pairs"))
          .sort("domain", S.TYPE, "tier"))


def read_relations(path: Path) -> pl.DataFrame:
    """``id<TAB>relation<TAB>reason`` lines (a header line starting with ``id`` skipped);
    a bad relation, a repeated id or a short line is an error naming every bad line."""
    rows, bad = [], []
    for number, line in enumerate(Path(path).read_text("utf-8").splitlines(), 1):
        if not line.strip() or (number == 1 and line.startswith("id\t")):
            continue
        cells = line.split("\t")
        if len(cells) < 2 or cells[1].strip() not in RELATIONS:
            bad.append(f"line {number}: {line[:60]!r}")
            continue
        rows.append((cells[0].strip(), cells[1].strip(),
                     cells[2].strip() if len(cells) > 2 else ""))
    frame = pl.DataFrame(rows, schema=["id", "relation", "reason"], orient="row")
    repeated = frame.filter(pl.col("id").is_duplicated())["id"].unique().to_list()
    if bad or repeated:
        raise BadInputError(f"{path}: {len(bad)} bad line(s), {len(repeated)} repeated id(s)",
                            hint="; ".join(bad[:10] + [f"repeated {i}" for i in repeated[:10]]))
    return frame


def cohen_kappa(first: list[str], second: list[str]) -> float:
    """Cohen's κ of two judges' labels of the same items (1.0 when both use one label)."""
    labels = sorted(set(first) | set(second))
    index = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for a, b in zip(first, second, strict=True):
        table[index[a], index[b]] += 1
    n = table.sum()
    observed = np.trace(table) / n
    expected = float((table.sum(0) * table.sum(1)).sum()) / n ** 2
    return 1.0 if expected == 1.0 else (observed - expected) / (1.0 - expected)


def relation_mix(judged: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Share of each relation per group (columns: the groups, n, one share per relation)."""
    counts = judged.group_by(*by).agg(
        pl.len().alias("n"), *[(pl.col("relation") == r).mean().round(3).alias(r)
                               for r in RELATIONS])
    return counts.sort(by)


def cmd_join(args: argparse.Namespace) -> None:
    key = pl.concat([pl.read_parquet(k).select(KEY_COLUMNS) for k in args.key])
    first = pl.concat([read_relations(Path(p)).with_columns(pl.lit(Path(p).name)
                                                            .alias("ratings_file"))
                       for p in args.ratings])
    unknown = first.join(key, on="id", how="anti")["id"].to_list()
    if unknown or first["id"].is_duplicated().any():
        raise BadInputError(f"{len(unknown)} unknown id(s) or repeated ids across files",
                            hint=", ".join(unknown[:10]))
    judged = key.join(first, on="id", how="inner")
    if args.second:
        second = read_relations(Path(args.second)).select(
            "id", pl.col("relation").alias("relation_2"), pl.col("reason").alias("reason_2"))
        judged = judged.join(second, on="id", how="left")
        both = judged.filter(pl.col("relation_2").is_not_null())
        kappa = cohen_kappa(both["relation"].to_list(), both["relation_2"].to_list())
        agree = (both["relation"] == both["relation_2"]).mean()
        print(f"overlap: n={both.height}, raw agreement {agree:.3f}, Cohen's kappa {kappa:.3f}")
    judged = judged.sort("domain", S.TYPE, "tier", "id")
    write_text_atomic(args.out, judged.drop("overlap", "ratings_file")
                      .write_csv(separator="\t"))
    print(f"{judged.height} of {key.height} key pairs judged; wrote {args.out}")
    with pl.Config(tbl_rows=100, tbl_cols=20):
        print(relation_mix(judged, ["domain", S.TYPE, "tier"]))


def cmd_evaluate(args: argparse.Namespace) -> None:
    judged = pl.read_csv(args.judgements, separator="\t", infer_schema=False).select(
        "id", "relation")
    keys = pl.concat([pl.read_parquet(k) for k in args.key], how="diagonal_relaxed")
    frame = relations.relation_features(keys.join(judged, on="id"))
    if args.type:
        frame = frame.filter(pl.col(S.TYPE) == args.type)
    _print_rule(frame)
    fold = relation_cv.grouped_folds(frame, args.folds, args.seed)
    grouped = relation_cv.scores(frame["relation"].to_list(),
                               relation_cv.out_of_fold(frame, fold, args.seed))
    print(f"n={frame.height}, {len(relations.model_columns(frame))} features")
    with pl.Config(tbl_rows=20, tbl_cols=20, tbl_width_chars=200):
        print(f"grouped {args.folds}-fold CV (by source phrase): macro-F1 "
              f"{grouped.macro_f1:.3f}")
        print(grouped.per_class)
        print(grouped.confusion)
        for domain, held in relation_cv.leave_one_domain_out(frame, seed=args.seed).items():
            print(f"leave-one-domain-out, held out {domain}: macro-F1 {held.macro_f1:.3f}")
            print(held.per_class)
            print(held.confusion)


def cmd_rule(args: argparse.Namespace) -> None:
    judged = pl.read_csv(args.judgements, separator="\t", infer_schema=False, quote_char=None)
    _print_rule(judged.filter(pl.col(S.TYPE).is_in(TYPES)), by_kind=True)
    if not args.acceptability:
        return
    rated = pl.concat([pl.read_csv(path, separator="\t", infer_schema=False, quote_char=None)
                       .select(S.TYPE, S.SOURCE, S.TARGET, "rating")
                       for path in args.acceptability])
    rated = (rated.filter(pl.col(S.TYPE).is_in(TYPES)).unique(maintain_order=True)
             .with_columns(pl.col("rating").cast(pl.Int32)))
    flagged = rated.with_columns(exclusion.exclusion_evidence(rated)).filter(
        pl.col(S.RELATION_EVIDENCE).is_not_null())
    print(f"acceptability judgements: {rated.height} pairs, {flagged.height} flagged, "
          f"{(flagged['rating'] >= 3).sum()} of them rated acceptable")
    print(_by_kind(flagged, (pl.col("rating") >= 3).sum().alias("acceptable")))


def _by_kind(flagged: pl.DataFrame, *counts: pl.Expr) -> pl.DataFrame:
    kind = pl.col(S.RELATION_EVIDENCE).str.split(" ").list.first().alias("kind")
    return flagged.group_by(kind).agg(pl.len().alias("flagged"), *counts).sort("kind")


def _print_rule(frame: pl.DataFrame, by_kind: bool = False) -> None:
    """Precision and recall of Exclusion by the ranker's rule (cppdb.rank.exclusion: nothing
    fitted, so on every judged pair), per domain and in all."""
    judged = frame.with_columns(exclusion.exclusion_evidence(frame),
                                (pl.col("relation") == exclusion.EXCLUSION).alias("_gold"))
    for name, part in [("all", judged), *sorted(
            ((str(k[0]), g) for k, g in judged.group_by("domain")), key=lambda kv: kv[0])]:
        flagged = part.filter(pl.col(S.RELATION_EVIDENCE).is_not_null())
        hits, gold = flagged["_gold"].sum(), part["_gold"].sum()
        print(f"Exclusion rule, {name}: {flagged.height} flagged, {hits} judged Exclusion "
              f"(precision {hits / max(flagged.height, 1):.3f}), recall {hits}/{gold} = "
              f"{hits / max(gold, 1):.3f}")
    if by_kind:
        print(_by_kind(judged.filter(pl.col(S.RELATION_EVIDENCE).is_not_null()),
                       pl.col("_gold").sum().alias("judged Exclusion")))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    draw = sub.add_parser("draw", help="sample ranked runs; write blind sheets and the key")
    draw.add_argument("--run", action="append", required=True, help="NAME=RUN_DIR, repeatable")
    draw.add_argument("--out", required=True, help="folder for the blind sheets")
    draw.add_argument("--key", required=True, help="folder for the key (not with the sheets)")
    draw.add_argument("--per-cell", type=int, default=140, help="pairs per domain×type×tier")
    draw.add_argument("--overlap", type=int, default=200)
    draw.add_argument("--sheet-size", type=int, default=250)
    draw.add_argument("--seed", type=int, default=46)
    draw.add_argument("--first-id", type=int, default=1,
                      help="number ids from here (a later batch continues an earlier one)")
    draw.add_argument("--first-sheet", type=int, default=1, help="number sheets from here")
    join = sub.add_parser("join", help="ratings joined to the key; kappa and relation mix")
    join.add_argument("--key", action="append", required=True,
                      help="key.parquet written by draw (repeatable: batches)")
    join.add_argument("--ratings", action="append", required=True,
                      help="a first judge's id<TAB>relation<TAB>reason file, repeatable")
    join.add_argument("--second", default=None, help="the overlap judge's file")
    join.add_argument("--out", required=True)
    evaluate = sub.add_parser("evaluate", help="the relation classifier by grouped CV and "
                                               "leave-one-domain-out (a report only)")
    evaluate.add_argument("--key", action="append", required=True,
                          help="key.parquet written by draw (repeatable: batches)")
    evaluate.add_argument("--judgements", required=True, help="the TSV that join wrote")
    evaluate.add_argument("--type", choices=TYPES, default=None, help="one pair type only")
    evaluate.add_argument("--folds", type=int, default=5)
    evaluate.add_argument("--seed", type=int, default=46)
    rule = sub.add_parser("rule", help="the Exclusion rule alone, from the pairs' text")
    rule.add_argument("--judgements", required=True,
                      help="relation judgements (domain, type, source, target, relation)")
    rule.add_argument("--acceptability", action="append", default=[],
                      help="acceptability judgements (type, source, target, rating), repeatable")
    args = parser.parse_args(argv)
    {"draw": cmd_draw, "join": cmd_join, "evaluate": cmd_evaluate,
     "rule": cmd_rule}[args.command](args)


if __name__ == "__main__":
    main()
