"""Selective encoding: run simalign-e5 only on the pairs the fast aligners are unsure about.

    python -m bench.bench_e5_tokens gate --gold-dir DIR --tatoeba PATH

Protocol of ``bench_e5_tokens aer`` (NIST02 gold, thot trained on Tatoeba + the dev pairs,
the same 5 folds, ``tune`` per training fold).  For every uncertainty score — computed from
thot and the dictionary only — and share q of pairs to encode, the threshold is the
(1 − q)-quantile of the score on the training folds; test pairs at or above it get the full
ensemble's links (params tuned on the training folds, all pairs encoded), the others the fast
ensemble's (thot + dictionary tuned on the training folds).  The realised share on the test
folds is reported next to q.  ``nested`` rows choose the score per fold on the training
folds only.
"""
from __future__ import annotations

import pickle
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bench.common import record

AREA = "e5_tokens"
SHARES = (0.0, 0.2, 0.35, 0.5, 0.65, 0.8, 1.0)
TARGET_AER = 0.156
SIM_LAYER = 7
#: the gated-mix variant (full params tuned on the encoded training pairs only) is run for
#: the scores that did best with params tuned on all pairs, at the shares that matter
RETUNED_SCORES = ("length", "thot_directions")
RETUNED_SHARES = (0.5, 0.65)
#: score rows that are controls, never chosen by the nested selection
NOT_GATES = ("random", "oracle (gold)")


# -- uncertainty scores (higher = less sure); each pair's from thot / dictionary only --------
def _jaccard_gap(a: np.ndarray, b: np.ndarray) -> float:
    union = int((a | b).sum())
    return 0.0 if union == 0 else 1.0 - int((a & b).sum()) / union


def _mutual_argmax(m: np.ndarray) -> np.ndarray:
    positive = m > 0
    rows = m == m.max(axis=1, keepdims=True)
    cols = m == m.max(axis=0, keepdims=True)
    return positive & rows & cols


def uncertainty_scores(fast_probs: Sequence[np.ndarray], fast_links: Sequence[np.ndarray],
                       thot_fwd: Sequence[np.ndarray], thot_bwd: Sequence[np.ndarray],
                       dictionary: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """Per pair: thot's two directions disagree; words the fast decode left unaligned; thot
    (intersection) vs the dictionary's mutual best matches; low best-cell mass of the fast
    ensemble; length."""
    out: dict[str, list[float]] = {k: [] for k in
                                   ("thot_directions", "unaligned", "thot_vs_dictionary",
                                    "low_mass", "length")}
    for prob, links, fwd, bwd, dic in zip(fast_probs, fast_links, thot_fwd, thot_bwd,
                                          dictionary):
        n_zh, n_en = prob.shape
        out["thot_directions"].append(_jaccard_gap(fwd, bwd))
        unaligned = (~links.any(axis=1)).sum() + (~links.any(axis=0)).sum()
        out["unaligned"].append(float(unaligned) / (n_zh + n_en))
        out["thot_vs_dictionary"].append(_jaccard_gap(fwd & bwd, _mutual_argmax(dic)))
        best = np.concatenate([prob.max(axis=1), prob.max(axis=0)])
        out["low_mass"].append(float(1.0 - best.mean()))
        out["length"].append(float(n_zh + n_en))
    return {k: np.asarray(v) for k, v in out.items()}


# -- data: matrices of every aligner on the dev pairs (cached: thot training takes a while) ---
def _dev_matrices(gold_dir: Path, tatoeba: Path, cache: Path | None):
    from bench.bench_e5_tokens import ENCODER_OPTIONS, _tatoeba_pairs
    from cppdb.align.words.dictionary import DictionaryAligner
    from cppdb.align.words.gold import read_gold
    from cppdb.align.words.simalign_e5 import E5SimAlignAligner
    from cppdb.align.words.statistical import ThotAligner

    if cache is not None and cache.is_file():
        return pickle.loads(cache.read_bytes())
    dev = [(z.split(), e.split()) for z, e in zip(
        (gold_dir / "train.zh").read_text("utf-8").splitlines(),
        (gold_dir / "train.en").read_text("utf-8").splitlines())]
    gold = read_gold(gold_dir / "train.align")
    train = _tatoeba_pairs(tatoeba)
    thot = ThotAligner(model="eflomal", eflomal_iterations=(3, 3, 6))
    thot.train(train + dev)
    fwd, bwd = thot.training_links(dev, len(train))
    data = {"dev": dev, "gold": gold, "thot_fwd": fwd, "thot_bwd": bwd,
            "mats": {"thot": thot.align_trained(dev, len(train)),
                     "dictionary": DictionaryAligner(matching="none").align(dev),
                     "simalign-e5": E5SimAlignAligner(layer=SIM_LAYER, matching="none",
                                                      **ENCODER_OPTIONS).align(dev)}}
    if cache is not None:
        cache.write_bytes(pickle.dumps(data))
    return data


# -- the experiment -----------------------------------------------------------------------------
def _links(mats, params, idx) -> list[np.ndarray]:
    from cppdb.align.words.ensemble import combine, decode_matrix

    sub = {n: [mats[n][k] for k in idx] for n in params.names}
    return [decode_matrix(p, params) for p in combine(sub, params)]


def _score(links: dict[int, np.ndarray], gold, idx):
    from cppdb.align.words.gold import score_counts, sentence_counts

    return score_counts([sentence_counts(list(zip(*np.nonzero(links[k]))), gold[k])
                         for k in idx])


def _fold_state(data, train_idx, seed: int):
    """Params tuned on the training folds; fast/full links and scores of every dev pair."""
    from cppdb.align.words.ensemble import combine, tune

    mats, gold = data["mats"], data["gold"]
    every = list(range(len(gold)))
    fast = tune({n: [mats[n][k] for k in train_idx] for n in ("thot", "dictionary")},
                [gold[k] for k in train_idx]).params
    full = tune({n: [mats[n][k] for k in train_idx] for n in mats},
                [gold[k] for k in train_idx]).params
    fast_links = dict(zip(every, _links(mats, fast, every)))
    full_links = dict(zip(every, _links(mats, full, every)))
    fast_probs = combine({n: mats[n] for n in fast.names}, fast)
    scores = uncertainty_scores(fast_probs, [fast_links[k] for k in every], data["thot_fwd"],
                                data["thot_bwd"], mats["dictionary"])
    scores["random"] = np.random.default_rng(seed).random(len(every))
    scores["oracle (gold)"] = _oracle_gain(fast_links, full_links, gold)
    return fast, full, fast_links, full_links, scores


def _oracle_gain(fast_links, full_links, gold) -> np.ndarray:
    """Upper bound, not a gate: each pair's AER-numerator gain from the full ensemble, read
    off the gold (1 − AER = (|A∩S| + |A∩P|) / (|A| + |S|); at the fast AER a ≈ 0.23)."""
    from cppdb.align.words.gold import sentence_counts

    out = []
    for k in sorted(fast_links):
        gain = 0.0
        for sign, links in ((1.0, full_links[k]), (-1.0, fast_links[k])):
            c = sentence_counts(list(zip(*np.nonzero(links))), gold[k])
            gain += sign * (c.a_and_s + c.a_and_p - (1 - 0.23) * (c.a + c.s))
        out.append(gain)
    return np.asarray(out)


def _gated(fast_links, full_links, score: np.ndarray, cut: float, idx) -> dict[int, np.ndarray]:
    return {k: (full_links[k] if score[k] >= cut else fast_links[k]) for k in idx}


def _cut(score: np.ndarray, train_idx, q: float) -> float:
    """Encode pairs with score ≥ cut: the (1 − q)-quantile of the training folds' scores
    (q = 0: above every score; q = 1: everything)."""
    if q <= 0:
        return np.inf
    if q >= 1:
        return -np.inf
    return float(np.quantile(score[train_idx], 1.0 - q, method="higher"))


def gate(gold_dir: Path, tatoeba: Path, cache: Path | None = None) -> list[dict]:
    from bench.bench_e5_tokens import _folds

    start = time.perf_counter()
    data = _dev_matrices(gold_dir, tatoeba, cache)
    gold = data["gold"]
    folds = _folds(len(gold))
    states = [_fold_state(data, tr, seed=f) for f, (tr, _) in enumerate(folds)]
    names = sorted(states[0][4])
    # the default's test-fold links: every row's paired bootstrap is against them
    data["reference"] = {k: state[3][k] for (_, te), state in zip(folds, states) for k in te}
    rows = []
    for name in names:
        rows += [_cv_row(states, folds, data, q, lambda _f, _tr: name, name) for q in SHARES]
    for q in SHARES:  # the score with the lowest training-fold AER at this q, per fold
        rows.append(_cv_row(states, folds, data, q,
                            lambda f, tr: _best_on_train(states[f], tr, gold, q, names)))
    rows.append(_nested_min_share(states, folds, data, names))
    rows += [_retuned_row(data, states, folds, name, q)
             for name in RETUNED_SCORES for q in RETUNED_SHARES]
    for row in rows:
        record(AREA, {"benchmark": "gate-nist02", **row})
    print(f"gate: {time.perf_counter() - start:.0f} s")
    return rows


def _best_on_train(state, train_idx, gold, q: float, names: Sequence[str]) -> str:
    _, _, fast_links, full_links, scores = state
    return min((n for n in names if n not in NOT_GATES), key=lambda n: _score(
        _gated(fast_links, full_links, scores[n], _cut(scores[n], train_idx, q), train_idx),
        gold, train_idx).aer)


def _cv_row(states, folds, data, q: float, choose: Callable[[int, list[int]], str],
            label: str = "") -> dict:
    links, encoded, chosen = {}, [], []
    for f, ((train_idx, test_idx), state) in enumerate(zip(folds, states)):
        _, _, fast_links, full_links, scores = state
        name = choose(f, train_idx)
        chosen.append(name)
        cut = _cut(scores[name], train_idx, q)
        links.update(_gated(fast_links, full_links, scores[name], cut, test_idx))
        encoded += [k for k in test_idx if scores[name][k] >= cut]
    return _row(label or "nested: " + ",".join(chosen), q, links, encoded, data, folds)


def _row(label: str, q: float | None, links, encoded: Sequence[int], data, folds) -> dict:
    """CV AER of the gated links, the realised shares of pairs and words encoded, and the
    spread of the per-fold AER (30 pairs a fold: the noise to read the differences against)."""
    gold, dev = data["gold"], data["dev"]
    score = _score(links, gold, sorted(links))
    size = [len(z) + len(e) for z, e in dev]
    per_fold = [_score(links, gold, te).aer for _, te in folds]
    return {"score": label, "q": q, "encoded_share_test": round(len(encoded) / len(links), 3),
            "encoded_word_share_test": round(sum(size[k] for k in encoded) / sum(size), 3),
            "aer_5fold_cv": round(score.aer, 4), "precision_cv": round(score.precision, 4),
            "recall_cv": round(score.recall, 4),
            "aer_fold_sd": round(float(np.std(per_fold, ddof=1)), 4),
            "aer_minus_full_ci95": _paired_bootstrap(links, data["reference"], gold)}


def _paired_bootstrap(links, reference, gold, draws: int = 2000) -> list[float]:
    """95 % interval of AER(gated) − AER(all encoded), pairs resampled (seed 0)."""
    from cppdb.align.words.gold import sentence_counts
    from cppdb.stats import bootstrap_counts

    def counts(source) -> np.ndarray:
        return np.asarray([[c.a_and_s + c.a_and_p, c.a + c.s] for c in (
            sentence_counts(list(zip(*np.nonzero(source[k]))), gold[k]) for k in order)])

    order = sorted(links)
    both = np.hstack([counts(links), counts(reference)])     # AER = 1 − col0/col1 per side
    low, high = bootstrap_counts(
        both, lambda s: s[:, 2] / s[:, 3] - s[:, 0] / s[:, 1], resamples=draws, seed=0)
    return [round(low, 4), round(high, 4)]


def _retuned_row(data, states, folds, name: str, q: float) -> dict:
    """Full-ensemble params tuned on the training pairs above the cut (the gated mix)."""
    from cppdb.align.words.ensemble import tune

    mats, gold = data["mats"], data["gold"]
    links, encoded = {}, []
    for (train_idx, test_idx), state in zip(folds, states):
        _, _, fast_links, _, scores = state
        cut = _cut(scores[name], train_idx, q)
        above = [k for k in train_idx if scores[name][k] >= cut]
        params = tune({n: [mats[n][k] for k in above] for n in mats},
                      [gold[k] for k in above]).params
        gated = [k for k in test_idx if scores[name][k] >= cut]
        links.update({k: fast_links[k] for k in test_idx})
        links.update(dict(zip(gated, _links(mats, params, gated))))
        encoded += gated
    return _row(f"{name}, full params tuned on the encoded training pairs", q, links,
                encoded, data, folds)


def _nested_min_share(states, folds, data, names, margin: float = 0.003) -> dict:
    """Per fold: the (score, q) with the smallest q whose training-fold AER is within
    ``margin`` of the full ensemble's training-fold AER; applied to the test fold."""
    gold = data["gold"]
    links, encoded, picks = {}, [], []
    for (train_idx, test_idx), state in zip(folds, states):
        _, _, fast_links, full_links, scores = state
        full_aer = _score({k: full_links[k] for k in train_idx}, gold, train_idx).aer
        pick = ("random", 1.0)
        for q in SHARES:
            ok = [n for n in names if n not in NOT_GATES and _score(_gated(
                fast_links, full_links, scores[n], _cut(scores[n], train_idx, q), train_idx),
                gold, train_idx).aer <= full_aer + margin]
            if ok:
                pick = (ok[0], q)
                break
        picks.append(f"{pick[0]}@{pick[1]}")
        cut = _cut(scores[pick[0]], train_idx, pick[1])
        links.update(_gated(fast_links, full_links, scores[pick[0]], cut, test_idx))
        encoded += [k for k in test_idx if scores[pick[0]][k] >= cut]
    return _row(f"nested min-q within +{margin} of full (train folds): " + ",".join(picks),
                None, links, encoded, data, folds)


# -- speed: what a share q of encoded pairs costs at news length -------------------------------
def _news_pairs(zh_path: Path, en_path: Path, n: int) -> list[tuple[list[str], list[str]]]:
    from bench.bench_align_words import tokenise_pair

    zh = zh_path.read_text("utf-8").splitlines()[:n]
    en = en_path.read_text("utf-8").splitlines()[:n]
    pairs = [tokenise_pair(z, e) for z, e in zip(zh, en)]
    return [(z, e) for z, e in pairs if z and e and max(len(z), len(e)) <= 150]


def _timed(work: Callable[[], object]) -> tuple[object, float, float]:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    out = work()
    return out, time.perf_counter() - wall0, time.process_time() - cpu0


def gate_speed(zh_path: Path, en_path: Path, n: int = 2000) -> dict:
    """The align stage's parts on n news pairs: thot (train + matrices), dictionary,
    simalign-e5 (layer 7, soft matrices) and the ensemble decode; projected pairs/s per q."""
    import os

    from cppdb.align.words.dictionary import DictionaryAligner
    from cppdb.align.words.ensemble import combine, decode, load_params
    from cppdb.align.words.simalign_e5 import E5SimAlignAligner
    from cppdb.align.words.statistical import ThotAligner

    pairs = _news_pairs(zh_path, en_path, n)
    load0 = os.getloadavg()[0]
    thot = ThotAligner(model="eflomal", eflomal_iterations=(3, 3, 6))
    _, thot_train_s, _ = _timed(lambda: thot.train(pairs))
    thot_m, thot_align_s, _ = _timed(lambda: thot.align_trained(pairs, 0))
    dictionary = DictionaryAligner(matching="none")
    dictionary.check()
    dict_m, dict_s, _ = _timed(lambda: dictionary.align(pairs))
    e5 = E5SimAlignAligner(layer=SIM_LAYER, matching="none")
    e5.encoder.weights
    sim_m, e5_s, e5_cpu = _timed(lambda: e5.align(pairs))
    fast = load_params("builtin:fast")
    _, decode_s, _ = _timed(lambda: decode(combine({"thot": thot_m, "dictionary": dict_m},
                                                   fast), fast))
    fixed = thot_train_s + thot_align_s + dict_s + decode_s
    row = {"benchmark": "gate-speed-news", "pairs": len(pairs),
           "en_words_per_pair": round(float(np.mean([len(e) for _, e in pairs])), 1),
           "loadavg_1min": round((load0 + os.getloadavg()[0]) / 2, 2),
           "thot_train_s": round(thot_train_s, 2), "thot_matrices_s": round(thot_align_s, 2),
           "dictionary_s": round(dict_s, 2), "decode_s": round(decode_s, 2),
           "simalign_e5_s": round(e5_s, 2), "simalign_e5_cpu_s": round(e5_cpu, 2),
           "simalign_e5_ms_per_pair": round(1000 * e5_s / len(pairs), 2),
           "projected_pairs_per_s": {str(q): round(len(pairs) / (fixed + q * e5_s), 1)
                                     for q in SHARES}}
    record(AREA, row)
    return row
