"""Confidence of 1-1 sentence pairs: fit the shipped model on development cases, measure it
on held-out ones.

    python -m bench.bench_confidence fit      [--work DIR] [--out FILE]
    python -m bench.bench_confidence evaluate [--work DIR] [--model FILE]

Cases (developer machines, ``../shared``): Old Testament books in two Chinese versions made
hard by ``../shared/tools/bible_pair.py`` (merged verses, deleted verses, an omitted block per
side; gold = verse ids) and, for evaluation only, two subtitle tracks of one film (silver
gold from cue-time overlap).  Development books and seeds never overlap the held-out ones
(``bench_align_sentences.HELDOUT_CASES``).  Every case is aligned with the default settings
(char-lsa, BAM soft anchors, omission re-alignment; development cases also without the
omission pass, for more wrong beads); a 1-1 bead is correct when the gold has exactly that
bead.  ``evaluate`` reports calibration (per confidence band: n, mean
confidence, share correct) and, per threshold, the precision and recall of the kept 1-1
pairs; ``docs/benchmarks/align_sentences.md`` has the table.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.bench_align_sentences import HELDOUT_CASES, make_cases
from bench.common import record
from cppdb.align.sentences.align import AlignSettings, align_sentences, load_alignment_encoder
from cppdb.align.sentences.beads import read_beads
from cppdb.align.sentences.confidence import (FEATURES, MODEL_FILE, ConfidenceModel,
                                              bead_features)
from cppdb.config import load_config, resolve
from cppdb.embed.settings import EmbedSettings

DEV_CASES = ([("cuv1", "ccb", book, 31) for book in ("Ecc", "Ezr", "Hos", "Zec", "Lam", "Amo",
                                                     "Mic", "Oba", "Rut", "Jon")]
             + [("cuv1", "wenl", book, 32) for book in ("Ecc", "Hos", "Lam", "Amo", "Rut")])
BANDS = (0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0001)
THRESHOLDS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def case_rows(case: Path, settings: AlignSettings, encoder) -> tuple[np.ndarray, np.ndarray]:
    """Features and correctness of the 1-1 beads of one case (aligned with the defaults)."""
    a = (case / "a.txt").read_text("utf-8").splitlines()
    b = (case / "b.txt").read_text("utf-8").splitlines()
    beads = align_sentences(a, b, settings, encoder).beads
    gold = {(g.src, g.tgt) for g in read_beads(case / "gold") if g.is_one_to_one}
    feats = bead_features(beads, [len(s) for s in a], [len(t) for t in b])
    ones = [k for k, bead in enumerate(beads) if bead.is_one_to_one]
    labels = np.array([(beads[k].src, beads[k].tgt) in gold for k in ones], dtype=np.float64)
    return feats[ones], labels


def collect(cases: list[Path], omission_modes: tuple[str, ...] = ("realign",)
            ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    config = load_config()
    section = resolve(AlignSettings, config)
    encoder, _ = load_alignment_encoder(section, resolve(EmbedSettings, config))
    out = {}
    for mode in omission_modes:
        settings = replace(section, omission_mode=mode)
        for case in cases:
            name = case.name if mode == "realign" else f"{case.name}/{mode}"
            out[name] = case_rows(case, settings, encoder)
            print(f"{name:28s} {len(out[name][1]):5d} 1-1 beads, "
                  f"{out[name][1].mean():.3f} correct", flush=True)
    return out


def fit(work: Path, out: Path) -> ConfidenceModel:
    from sklearn.linear_model import LogisticRegression

    # why also without the omission pass: it leaves few wrong beads to learn from; the
    # shifted beads of an unrepaired omission are the errors a confidence must catch
    rows = collect(make_cases(work / "dev", DEV_CASES, subtitles=False), ("realign", "off"))
    x = np.concatenate([f for f, _ in rows.values()])
    y = np.concatenate([label for _, label in rows.values()])
    reg = LogisticRegression(C=1.0, max_iter=1000).fit(x, y)
    model = ConfidenceModel(
        round(float(reg.intercept_[0]), 6), tuple(round(float(w), 6) for w in reg.coef_[0]),
        provenance=(f"logistic regression on {len(y)} 1-1 beads ({int(y.sum())} correct) of "
                    f"{len(rows)} perturbed Bible cases: "
                    + ", ".join(f"{va}-{vb}-{book}-seed{seed}" for va, vb, book, seed in DEV_CASES)
                    + "; aligned with the default settings, and again with "
                    "omission_mode=off for more wrong beads; bench/bench_confidence.py fit"))
    out.write_text(json.dumps(model.to_json(), ensure_ascii=False, indent=1) + "\n", "utf-8")
    print(dict(zip(FEATURES, model.weights)), "intercept", model.intercept)
    return model


def _table(model: ConfidenceModel, x: np.ndarray, y: np.ndarray) -> dict:
    p = model.predict(x)
    bands = []
    for lo, hi in zip(BANDS, BANDS[1:]):
        inside = (p >= lo) & (p < hi)
        if inside.any():
            bands.append({"band": f"{lo:.1f}-{min(hi, 1.0):.1f}", "n": int(inside.sum()),
                          "mean_confidence": round(float(p[inside].mean()), 3),
                          "share_correct": round(float(y[inside].mean()), 3)})
    cuts = []
    for t in THRESHOLDS:
        kept = p >= t
        precision = float(y[kept].mean()) if kept.any() else float("nan")
        cuts.append({"threshold": t, "kept": round(float(kept.mean()), 3),
                     "precision": round(precision, 4),
                     "recall_of_correct": round(float(y[kept].sum() / max(1, y.sum())), 4),
                     "wrong_dropped": round(float((~kept & (y == 0)).sum()
                                                  / max(1, (y == 0).sum())), 3)})
    ece = sum(b["n"] * abs(b["mean_confidence"] - b["share_correct"]) for b in bands) / len(y)
    return {"n": len(y), "share_correct": round(float(y.mean()), 4), "ece": round(ece, 4),
            "bands": bands, "thresholds": cuts}


def evaluate(work: Path, model_path: Path) -> dict:
    model = ConfidenceModel.from_json(json.loads(model_path.read_text("utf-8")))
    rows = collect(make_cases(work / "heldout", HELDOUT_CASES, subtitles=True))
    bible = [k for k in rows if not k.startswith("sub-")]
    subs = [k for k in rows if k.startswith("sub-")]
    result = {}
    for name, keys in (("bible_heldout", bible), ("subtitles", subs)):
        if keys:
            result[name] = _table(model, np.concatenate([rows[k][0] for k in keys]),
                                  np.concatenate([rows[k][1] for k in keys]))
            print(name, json.dumps(result[name], indent=1))
    record("confidence", result)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("fit", "evaluate"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/cppdb-bench-confidence"))
    parser.add_argument("--out", type=Path, default=MODEL_FILE)
    parser.add_argument("--model", type=Path, default=MODEL_FILE)
    args = parser.parse_args()
    if args.action == "fit":
        fit(args.work, args.out)
    else:
        evaluate(args.work, args.model)


if __name__ == "__main__":
    main()
