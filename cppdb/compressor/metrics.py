"""Keep-label F1 of extractive compressions (Filippova et al. 2015; Zhao et al. 2022, Table 4).

Precision = kept tokens that the reference keeps / tokens kept; recall = kept tokens that the
reference keeps / tokens the reference keeps.  ``micro`` pools every token of the set;
``macro`` averages each sentence's F1 (a sentence where neither side keeps anything scores 1).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def _f1(tp: int, predicted: int, gold: int) -> float:
    if predicted == 0 and gold == 0:
        return 1.0
    return 2.0 * tp / (predicted + gold) if tp else 0.0


def keep_f1(predicted: Sequence[Sequence[int]], gold: Sequence[Sequence[int]]) -> dict[str, Any]:
    """Precision, recall and F1 (micro and macro) of kept tokens, with the counts."""
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predictions for {len(gold)} references")
    tps, preds, golds = [], [], []
    for number, (p, g) in enumerate(zip(predicted, gold)):
        p, g = np.asarray(p, dtype=bool), np.asarray(g, dtype=bool)
        if p.shape != g.shape:
            raise ValueError(f"sentence {number}: {p.size} predicted labels, {g.size} gold")
        tps.append(int((p & g).sum()))
        preds.append(int(p.sum()))
        golds.append(int(g.sum()))
    tp, kept, ref = sum(tps), sum(preds), sum(golds)
    macro = [_f1(t, k, r) for t, k, r in zip(tps, preds, golds)]
    return {"sentences": len(gold), "tokens": int(sum(len(g) for g in gold)),
            "precision": tp / kept if kept else 0.0, "recall": tp / ref if ref else 0.0,
            "f1": _f1(tp, kept, ref), "f1_macro": float(np.mean(macro)) if macro else 0.0,
            "f1_macro_se": float(np.std(macro, ddof=1) / np.sqrt(len(macro)))
            if len(macro) > 1 else 0.0,
            "kept_share": kept / sum(len(g) for g in gold) if gold else 0.0}
