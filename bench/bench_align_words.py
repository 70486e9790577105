"""Word alignment benchmark: AER on real gold, and train+align speed/memory at scale.

    python -m bench.bench_align_words                 # quality (if shared data) + speed
    python -m bench.bench_align_words --speed-only --sizes 10000 30000 100000
    python -m bench.bench_align_words --quality-only

Quality: dev gold ../shared/data/wordalign-nist02 (150 news pairs, sure+possible links);
statistical models are trained on those pairs + ../shared/data/tatoeba-cmn (29k pairs; zh
segmented with jieba, en with a simple regex tokeniser).  Reported: each aligner alone, the
ensemble tuned on all 150 pairs (in-sample) and 5-fold cross-validated (tuned on 120, scored
on the held-out 30, counts summed over folds).  Speed: the offline ensemble (thot + dictionary)
trained and run end to end through ``align_tokenized`` on N Tatoeba-length pairs (Tatoeba
repeated with perturbations; generated pairs when the shared data is absent), each size in a
fresh subprocess so peak memory is per size.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from bench.common import record, shared_data, timer

AREA = "align_words"
_EN_TOKEN = re.compile(r"[A-Za-z]+(?:'[a-z]+)?|\d+(?:[.,]\d+)*|[^\sA-Za-z\d]")


def tokenise_pair(zh: str, en: str) -> tuple[list[str], list[str]]:
    """The benches' tokenisation of a raw pair: jieba words (blank ones dropped) / the regex."""
    import jieba

    jieba.setLogLevel(60)
    return [t for t in jieba.lcut(zh) if t.strip()], _EN_TOKEN.findall(en)


def tatoeba_pairs(limit: int | None = None) -> list[tuple[list[str], list[str]]]:
    """Tatoeba cmn.txt tokenised (jieba / regex), or generated pairs without shared data."""
    path = shared_data("tatoeba-cmn", "cmn.txt")
    if path is None:
        return generated_pairs(limit or 30000)
    pairs = []
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        fields = line.split("\t")
        if len(fields) < 2:
            continue
        zh, en = tokenise_pair(fields[1], fields[0])
        if zh and en:
            pairs.append((zh, en))
        if limit and len(pairs) >= limit:
            break
    return pairs


def generated_pairs(n: int, seed: int = 0) -> list[tuple[list[str], list[str]]]:
    """Tatoeba-length synthetic pairs over a 5k-word lexicon (fallback without shared data)."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(n):
        words = rng.zipf(1.3, size=int(rng.integers(4, 12))) % 5000
        pairs.append(([f"z{w}" for w in words], [f"e{w}" for w in words[::-1]]))
    return pairs


def scaled_corpus(base: list, n: int, seed: int = 1) -> list[tuple[list[str], list[str]]]:
    """``n`` pairs: the base corpus, then perturbed copies (a dropped or swapped token)."""
    rnd = random.Random(seed)
    out = list(base[:n])
    while len(out) < n:
        zh, en = base[rnd.randrange(len(base))]
        zh, en = list(zh), list(en)
        side = en if rnd.random() < 0.5 else zh
        if len(side) > 2 and rnd.random() < 0.5:
            del side[rnd.randrange(len(side))]
        elif len(side) > 1:
            k = rnd.randrange(len(side) - 1)
            side[k], side[k + 1] = side[k + 1], side[k]
        out.append((zh, en))
    return out


# -- speed ------------------------------------------------------------------------------------
def speed_one(n: int) -> None:
    """Run in a subprocess: time train+align of n pairs with the default offline ensemble."""
    from cppdb.align.words.api import align_tokenized
    from cppdb.align.words.settings import AlignWordsSettings
    from cppdb.config import load_config, resolve

    pairs = scaled_corpus(tatoeba_pairs(), n)
    zh = [z for z, _ in pairs]
    en = [e for _, e in pairs]
    config = load_config()
    cpu_before = _cpu_seconds()
    with timer() as box:
        result = align_tokenized(zh, en, resolve(AlignWordsSettings, config))
    cpu = round(_cpu_seconds() - cpu_before, 2)
    load = os.getloadavg()[0]
    record(AREA, {"benchmark": "train+align", "pairs": n, "seconds": box["seconds"],
                  "cpu_seconds": cpu,
                  "aligners": list(result.aligners_used),
                  "links": sum(len(x) for x in result.links),
                  "thot_model": config.get("align_words.thot.model"),
                  "eflomal_iterations": config.get("align_words.thot.eflomal_iterations"),
                  "loadavg_1min": round(load, 1),
                  "data": "tatoeba-perturbed" if shared_data("tatoeba-cmn") else "generated"})


def _cpu_seconds() -> float:
    """User + system CPU time of this process (all threads): on a shared, overloaded
    machine wall time mostly measures the neighbours, CPU time measures us."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def speed(sizes: list[int]) -> None:
    for n in sizes:
        subprocess.run([sys.executable, "-m", "bench.bench_align_words", "--speed-one", str(n)],
                       check=True, cwd=Path(__file__).resolve().parents[1])


# -- quality ----------------------------------------------------------------------------------
def _gold_dir() -> Path | None:
    return shared_data("wordalign-nist02")


def quality() -> None:
    from cppdb.align.words.ensemble import decode, tune
    from cppdb.align.words.gold import read_gold

    gold_dir = _gold_dir()
    if gold_dir is None:
        print("quality: ../shared/data/wordalign-nist02 not found, skipped")
        return
    dev = [(z.split(), e.split()) for z, e in zip(
        (gold_dir / "train.zh").read_text("utf-8").splitlines(),
        (gold_dir / "train.en").read_text("utf-8").splitlines())]
    gold = read_gold(gold_dir / "train.align")
    train = tatoeba_pairs()
    singles, matrices = _single_aligners(dev, gold, train)
    for name, row in singles.items():
        record(AREA, {"benchmark": "aer-nist02", "system": name, **row})
    for combo in (("thot", "dictionary"), ("thot", "eflomal", "dictionary")):
        if not all(c in matrices for c in combo):
            continue
        mats = {c: matrices[c] for c in combo}
        result = tune(mats, gold)
        cv = _cross_validated(mats, gold)
        links = decode(_combine(mats, result.params), result.params)
        check = _reference_aer(links, gold_dir / "train.align")
        record(AREA, {"benchmark": "aer-nist02", "system": "ensemble:" + "+".join(combo),
                      "aer_in_sample": round(result.aer, 4), "aer_5fold_cv": round(cv, 4),
                      "precision": round(result.precision, 4), "recall": round(result.recall, 4),
                      "aer_reference_tool": check, "params": result.params.to_json()})


def _combine(mats, params):
    from cppdb.align.words.ensemble import combine

    return combine(mats, params)


def _single_aligners(dev, gold, train):
    """AER of each aligner alone; statistical ones with grow-diag-final-and of their Viterbi
    links (the GIZA++ convention) and with their soft matrix at a tuned threshold."""
    from cppdb.align.words.dictionary import DictionaryAligner
    from cppdb.align.words.ensemble import tune
    from cppdb.align.words.gold import score_alignment
    from cppdb.align.words.statistical import EflomalAligner, ThotAligner
    from cppdb.align.words.symmetrize import symmetrize
    from cppdb.errors import CppdbError

    rows, matrices = {}, {}
    configs = [("thot-eflomal(auto schedule)", ThotAligner(model="eflomal",
                                                          eflomal_iterations=(0, 0, 0))),
               ("thot-eflomal[3,3,6] (default)", ThotAligner(model="eflomal",
                                                            eflomal_iterations=(3, 3, 6))),
               ("thot-ibm4 (IBM1>HMM>IBM4)", ThotAligner(model="ibm4")),
               ("thot-hmm", ThotAligner(model="hmm")),
               ("thot-fast_align", ThotAligner(model="fast_align"))]
    try:
        EflomalAligner().check()
        configs.append(("eflomal (package, GPL extra)", EflomalAligner()))
    except CppdbError as exc:
        print(f"eflomal package skipped: {exc}")
    for label, aligner in configs:
        with timer() as box:
            aligner.train(train + dev)
            forward, backward = aligner.training_links(dev, len(train))
            mats = aligner.align_trained(dev, len(train))
        gdfa = [list(zip(*np.nonzero(symmetrize(f, b, "grow-diag-final-and"))))
                for f, b in zip(forward, backward)]
        soft = tune({label: mats}, gold, decodes=("threshold",), refine=False)
        rows[label] = {"aer_gdfa": round(score_alignment(gdfa, gold).aer, 4),
                       "precision_gdfa": round(score_alignment(gdfa, gold).precision, 4),
                       "recall_gdfa": round(score_alignment(gdfa, gold).recall, 4),
                       "aer_soft_tuned_threshold": round(soft.aer, 4),
                       "train_align_seconds": box["seconds"]}
        if "default" in label:
            matrices["thot"] = mats
        if label.startswith("eflomal"):
            matrices["eflomal"] = mats
    for matching in ("itermax", "argmax", "match", "none"):
        mats = DictionaryAligner(matching=matching).align(dev)
        links = [list(zip(*np.nonzero(m > 0))) for m in mats]
        score = score_alignment(links, gold)
        rows[f"dictionary({matching})"] = {"aer": round(score.aer, 4),
                                           "precision": round(score.precision, 4),
                                           "recall": round(score.recall, 4)}
        if matching == "none":
            matrices["dictionary"] = mats
    return rows, matrices


def _cross_validated(mats, gold, folds: int = 5) -> float:
    """Tune on (folds-1)/folds of the dev pairs, score the rest; counts summed over folds."""
    from cppdb.align.words.ensemble import decode, tune
    from cppdb.align.words.gold import score_counts, sentence_counts

    n = len(gold)
    order = np.random.default_rng(0).permutation(n)
    counts = []
    for fold in range(folds):
        held = set(order[fold::folds].tolist())
        train_idx = [k for k in range(n) if k not in held]
        test_idx = sorted(held)
        sub = {name: [m[k] for k in train_idx] for name, m in mats.items()}
        result = tune(sub, [gold[k] for k in train_idx])
        test = {name: [m[k] for k in test_idx] for name, m in mats.items()}
        links = decode(_combine(test, result.params), result.params)
        counts += [sentence_counts(a, gold[k]) for a, k in zip(links, test_idx)]
    return score_counts(counts).aer


def _reference_aer(links, gold_path: Path) -> float | None:
    """Cross-check with the shared tools/aer.py (None if the tool is absent)."""
    tool = shared_data("..", "tools", "aer.py")
    if tool is None:
        return None
    from cppdb.align.words.gold import format_links

    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as out:
        out.write("\n".join(format_links(x) for x in links) + "\n")
    text = subprocess.run([sys.executable, str(tool), out.name, str(gold_path)],
                          capture_output=True, text=True, check=True).stdout
    os.unlink(out.name)
    return float(text.strip().splitlines()[-1].split()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10000, 30000, 100000])
    parser.add_argument("--speed-only", action="store_true")
    parser.add_argument("--quality-only", action="store_true")
    parser.add_argument("--speed-one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.speed_one:
        speed_one(args.speed_one)
        return
    if not args.speed_only:
        quality()
    if not args.quality_only:
        speed(args.sizes)


if __name__ == "__main__":
    main()
