"""In-domain and leave-one-domain-out ROC AUC of the phrase/pattern ranker recipe.

    python -m bench.bench_domains --domain tatoeba=LABELS.tsv:RUN[:RUN…] \\
                                  --domain news=LABELS.tsv:RUN [--out result.json]

Each domain is a judgement file (type, source, target, rating) and the run(s) its pairs were
drawn from (the first run holding a pair gives its evidence, as in
:mod:`devtools.train_bilingual`).  For every type and domain it reports

* ``in_domain``: grouped k-fold CV within the domain (pairs sharing a source stay together);
* ``leave_one_domain_out``: the recipe trained on every *other* domain, scored on this one;
* ``both``: grouped k-fold CV over the union (what a model trained on all domains reaches
  on this domain's held-out pairs),

each with its bootstrap standard error, next to the cosine alone and the shipped model.
Positive = rating ≥ 3.  The recipe and features are the shipped model's
(:func:`devtools.train_bilingual.ranker_settings`, ``bilingual_features``).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import polars as pl

from cppdb import schema as S
from cppdb.config import load_config
from cppdb.rank import judged
from cppdb.rank.ranker import Ranker, usable_features
from devtools.train_bilingual import (
    _fit,
    bilingual_features,
    cross_validated_scores,
    default_model_path,
    judged_features,
    ranker_settings,
)

DOMAIN = "domain"


def _parse(spec: str) -> tuple[str, Path, list[Path]]:
    name, _, rest = spec.partition("=")
    labels, *runs = rest.split(":")
    if not name or not labels or not runs:
        raise SystemExit(f"--domain {spec!r}: expected NAME=LABELS.tsv:RUN[:RUN…]")
    return name, Path(labels), [Path(r) for r in runs]


def _auc(scores: np.ndarray, ratings: np.ndarray) -> tuple[float | None, float | None]:
    positive = ratings >= judged.ACCEPTABLE
    auc = judged.roc_auc(scores, positive)
    if auc is None:
        return None, None
    rng = np.random.default_rng(13)
    draws = []
    for _ in range(200):
        pick = rng.integers(0, len(scores), len(scores))
        value = judged.roc_auc(scores[pick], positive[pick])
        if value is not None:
            draws.append(value)
    return auc, float(np.std(draws)) if draws else None


def domain_table(domains: list[tuple[str, Path, list[Path]]]) -> pl.DataFrame:
    config = load_config()
    settings = ranker_settings(config)
    frames = []
    for name, labels, runs in domains:
        frame, _ = judged_features(runs, labels, config)
        frames.append(frame.with_columns(pl.lit(name).alias(DOMAIN)))
    every = pl.concat(frames, how="diagonal_relaxed")
    names = usable_features(every, bilingual_features())
    shipped = Ranker.load(default_model_path())
    rows = []
    for pair_type in ("phrase", "pattern"):
        typed = every.filter(pl.col(S.TYPE) == pair_type)
        union_scores = cross_validated_scores(typed, names, settings)
        typed = typed.with_columns(pl.Series("_union", union_scores))
        for name, _, _ in domains:
            mine = typed.filter(pl.col(DOMAIN) == name)
            others = typed.filter(pl.col(DOMAIN) != name)
            if mine.height < 20:
                continue
            ratings = mine[judged.RATING].to_numpy()
            scorers = {
                "in_domain": cross_validated_scores(mine, names, settings),
                "both": mine["_union"].to_numpy(),
                "f_cosine": mine["f_cosine"].fill_null(0).to_numpy(),
                "shipped_model": shipped.predict(mine, config.section("rank")["threads"]),
            }
            if others.height >= 20:
                model = _fit(others, names, settings)
                scorers["leave_one_domain_out"] = model.predict(
                    mine, config.section("rank")["threads"])
            for scorer, scores in scorers.items():
                auc, se = _auc(np.asarray(scores, dtype=float), ratings)
                rows.append({"type": pair_type, "domain": name, "scorer": scorer,
                             "pairs": mine.height,
                             "acceptable": float((ratings >= judged.ACCEPTABLE).mean()),
                             "roc_auc": auc, "roc_auc_se": se})
    return pl.DataFrame(rows)


def format_table(table: pl.DataFrame) -> str:
    lines = ["| type | domain | scorer | n | acceptable | ROC AUC |", "|---|---|---|---|---|---|"]
    for r in table.iter_rows(named=True):
        auc = "–" if r["roc_auc"] is None else f"{r['roc_auc']:.3f} ± {r['roc_auc_se']:.3f}"
        lines.append(f"| {r['type']} | {r['domain']} | {r['scorer']} | {r['pairs']} | "
                     f"{r['acceptable']:.1%} | {auc} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", action="append", required=True,
                        help="NAME=LABELS.tsv:RUN[:RUN…] (repeat, at least two)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    domains = [_parse(spec) for spec in args.domain]
    table = domain_table(domains)
    print(format_table(table))
    if args.out:
        args.out.write_text(json.dumps(table.to_dicts(), indent=1), "utf-8")


if __name__ == "__main__":
    main()
