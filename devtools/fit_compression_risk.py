"""Fit the compression risk model (``cppdb/extractors/compression/risk.py``) on blind
judgements made with ``devtools.compression_sheets``.

    python -m devtools.fit_compression_risk --dir JUDGED1 --dir JUDGED2 … \
        --out cppdb/resources/compression_risk.json

Each DIR holds ``sheet-K.txt`` (H, S, C of each item) and ``judged.tsv`` (``score``'s joined
ratings).  Every judged pair is rebuilt with today's defaults (no paraphrase table, as the judged builds)
and the risk check off; only
items whose rebuilt compression equals the judged one are used, so the features are exactly
those the build computes.  Prints leave-one-directory-out AUC and the acceptable share left
after rejecting each risk level, then fits on every directory.
"""
from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np

from cppdb.extractors.compression.pipeline import (CompressionSettings, kept_compression,
                                                   load_pipeline)
from cppdb.extractors.compression.reader import NewsPair
from cppdb.extractors.compression.risk import RiskModel, feature_matrix, risk_features
from cppdb.extractors.compression.settings import compression_toml

PARAMS = {"objective": "binary", "learning_rate": 0.05, "num_leaves": 8,
          "min_data_in_leaf": 30, "feature_fraction": 0.8, "bagging_fraction": 0.8,
          "bagging_freq": 1, "lambda_l2": 1.0, "seed": 7, "deterministic": True,
          "num_threads": 1, "verbose": -1}
ROUNDS = 100


def read_judged(directory: Path) -> list[dict]:
    texts: dict[str, dict[str, str]] = {}
    for sheet in sorted(directory.glob("sheet-*.txt")):
        current = None
        for line in sheet.read_text("utf-8").splitlines():
            if line.startswith("## "):
                current = texts.setdefault(line[3:].strip(), {})
            elif current is not None and line[:3] in ("H: ", "S: ", "C: "):
                current[line[0]] = line[3:]
    with (directory / "judged.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [{"group": directory.name, "id": r["id"], **texts[r["id"]],
             "unacceptable": r["acceptable"] != "True"} for r in rows]


def rebuilt(items: list[dict]) -> list[tuple[dict, KeptCompression]]:
    """The items whose compression today's defaults (risk check off) reproduce."""
    methods = [m for m in compression_toml({}).methods if m != "paraphrase"]   # no table
    settings = CompressionSettings.from_config(compression_toml({"max_risk": 0.0,
                                                                 "methods": methods}))
    pipeline = load_pipeline(settings, None)
    pairs = [NewsPair(k + 1, item["H"], item["S"]) for k, item in enumerate(items)]
    out = []
    for start in range(0, len(pairs), 256):
        for item, outcome in zip(items[start:start + 256],
                                 pipeline.process(pairs[start:start + 256])):
            if outcome.status == "kept" and outcome.compression == item["C"]:
                out.append((item, kept_compression(outcome)))
    return out


def _fit(rows: list[dict[str, float]], y: np.ndarray, names: list[str]):
    import lightgbm as lgb

    return lgb.train(PARAMS, lgb.Dataset(feature_matrix(rows, names), y), ROUNDS)


def _auc(y: np.ndarray, p: np.ndarray) -> float:
    order = np.argsort(p)
    ranks = np.empty(len(p))
    ranks[order] = np.arange(1, len(p) + 1)
    pos = y.sum()
    return float((ranks[y == 1].sum() - pos * (pos + 1) / 2) / (pos * (len(y) - pos)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, action="append", required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    items = [item for d in args.dir for item in read_judged(d)]
    pairs = rebuilt(items)
    print(f"{len(pairs)} of {len(items)} judged compressions rebuilt identically")
    features = [risk_features(kept) for _, kept in pairs]
    names = sorted({name for row in features for name in row})
    y = np.array([int(item["unacceptable"]) for item, _ in pairs])
    groups = np.array([item["group"] for item, _ in pairs])
    held = np.zeros(len(y))
    for group in sorted(set(groups)):
        train = groups != group
        model = RiskModel(_fit([f for f, t in zip(features, train) if t], y[train], names)
                          .model_to_string(), names)
        held[~train] = model.booster.predict(
            model.matrix([k for (_, k), t in zip(pairs, train) if not t]))
    print(f"leave-one-directory-out AUC {_auc(y, held):.3f}; acceptable at base "
          f"{1 - y.mean():.1%} (n = {len(y)})")
    for group in [None, *sorted(set(groups))]:
        chosen = groups == group if group else np.ones(len(y), bool)
        print(f"{group or 'all'} (n = {chosen.sum()}, acceptable {1 - y[chosen].mean():.1%}):")
        for level in (0.5, 0.4, 0.35, 0.3, 0.25, 0.2):
            keep = chosen & (held <= level)
            print(f"  max_risk {level:.2f}: keeps {keep.sum() / chosen.sum():.0%}, acceptable "
                  f"{1 - y[keep].mean():.1%} (n = {keep.sum()})")
    final = _fit(features, y, names)
    model = RiskModel(final.model_to_string(), names)
    args.out.write_text(json.dumps(model.to_json(), ensure_ascii=False) + "\n", "utf-8")
    print(f"model ({len(names)} features, {len(y)} judged pairs) -> {args.out}")


if __name__ == "__main__":
    main()
