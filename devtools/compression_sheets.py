"""Blind judging of a compression corpus (readability, informativeness, acceptable).

    python -m devtools.compression_sheets sheet --sample kept.jsonl --config NAME \
        --out DIR --judges 4 --seed 7
    python -m devtools.compression_sheets score --dir DIR [--dir DIR2 …]

``sheet`` shuffles the kept pairs (``pair_id``, ``headline``, ``sentence``, ``compression``:
a uniformly random sample of a build's kept pairs; a row's own ``config`` overrides
``--config``, so samples of several builds can share the sheets and the judges — each pair in
one build only), gives each an id that reveals nothing and
splits them into one sheet per judge (``sheet-K.txt``: the rubric's items only, no
configuration, no scores); ``key.jsonl`` keeps what the judge must not see.  A judge writes
``ratings-K.tsv``: ``id<TAB>readability<TAB>informativeness<TAB>acceptable(y/n)<TAB>why``.
``score`` joins the ratings back and prints, per configuration, the means with ±1.96·SE, the
acceptable share with ±1.96·SE, n, and writes ``judged.tsv`` (the joined rows) to each DIR.
"""
from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

FIELDS = ("id", "readability", "informativeness", "acceptable", "why")


def _sheet_text(items: list[dict]) -> str:
    lines = []
    for item in items:
        lines += [f"## {item['id']}", f"H: {item['headline']}", f"S: {item['sentence']}",
                  f"C: {item['compression']}", ""]
    return "\n".join(lines)


def make_sheets(sample: Path, config: str, out: Path, judges: int, seed: int) -> None:
    rows = [json.loads(line) for line in sample.read_text("utf-8").splitlines() if line.strip()]
    rng = random.Random(seed)
    rng.shuffle(rows)
    ids = rng.sample(range(10_000, 100_000), len(rows))
    out.mkdir(parents=True, exist_ok=True)
    key, sheets = [], [[] for _ in range(judges)]
    for k, (row, number) in enumerate(zip(rows, ids)):
        item = {"id": f"c{number}", **{f: row[f] for f in ("headline", "sentence",
                                                             "compression")}}
        sheets[k % judges].append(item)
        key.append({"id": item["id"], "config": row.get("config", config),
                    "pair_id": row["pair_id"],
                    "judge": k % judges})
    for k, items in enumerate(sheets):
        (out / f"sheet-{k}.txt").write_text(_sheet_text(items), "utf-8")
    (out / "key.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                                           for r in key), "utf-8")
    print(f"{len(rows)} items in {judges} sheets under {out}")


def _read_ratings(directory: Path) -> dict[str, dict]:
    ratings = {}
    for path in sorted(directory.glob("ratings-*.tsv")):
        for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
            parts = line.split("\t")
            if not line.strip() or parts[0] == "id":
                continue
            if len(parts) < 4:
                raise SystemExit(f"{path}:{number}: expected {len(FIELDS)} tab-separated fields")
            ratings[parts[0]] = {"readability": int(parts[1]), "informativeness": int(parts[2]),
                                 "acceptable": parts[3].strip().lower().startswith("y"),
                                 "why": parts[4] if len(parts) > 4 else ""}
    return ratings


def _mean_ci(values: list[float]) -> str:
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return f"{mean:.2f} ± {1.96 * sd / math.sqrt(n):.2f}"


def _summary(config: str, joined: list[dict], asked: int) -> None:
    n = len(joined)
    share = sum(r["acceptable"] for r in joined) / n
    se = math.sqrt(share * (1 - share) / n)
    print(f"{config}: n = {n} of {asked}; readability "
          f"{_mean_ci([r['readability'] for r in joined])}; informativeness "
          f"{_mean_ci([r['informativeness'] for r in joined])}; acceptable "
          f"{sum(r['acceptable'] for r in joined)} = {share:.1%} ± {1.96 * se:.1%}")


def score(directories: list[Path]) -> None:
    for directory in directories:
        key = [json.loads(line) for line in (directory / "key.jsonl").read_text("utf-8")
               .splitlines() if line.strip()]
        ratings = _read_ratings(directory)
        unknown = set(ratings) - {row["id"] for row in key}
        if unknown:
            raise SystemExit(f"{directory}: ratings for ids not in the key: {sorted(unknown)[:5]}")
        joined = [{**row, **ratings[row["id"]]} for row in key if row["id"] in ratings]
        if not joined:
            raise SystemExit(f"{directory}: no ratings yet")
        for config in sorted({r["config"] for r in joined}):
            _summary(config, [r for r in joined if r["config"] == config],
                     sum(1 for r in key if r["config"] == config))
        columns = ("id", "config", "pair_id", "judge", "readability", "informativeness",
                   "acceptable", "why")
        lines = ["\t".join(columns)] + ["\t".join(str(r[c]) for c in columns) for r in joined]
        (directory / "judged.tsv").write_text("\n".join(lines) + "\n", "utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sheet = sub.add_parser("sheet")
    sheet.add_argument("--sample", type=Path, required=True)
    sheet.add_argument("--config", required=True)
    sheet.add_argument("--out", type=Path, required=True)
    sheet.add_argument("--judges", type=int, default=4)
    sheet.add_argument("--seed", type=int, default=7)
    scored = sub.add_parser("score")
    scored.add_argument("--dir", type=Path, action="append", required=True)
    args = parser.parse_args(argv)
    if args.what == "sheet":
        make_sheets(args.sample, args.config, args.out, args.judges, args.seed)
    else:
        score(args.dir)


if __name__ == "__main__":
    main()
