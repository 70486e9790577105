"""Benchmarks of features + ranking, embedding throughput and STS-B agreement.

    python -m bench.bench_rank                 # everything below
    python -m bench.bench_rank scale [N ...]   # rank_run on N synthetic phrase pairs (default 100k, 1M)
    python -m bench.bench_rank embed [N]       # the [embed] encoder: unique strings / second
    python -m bench.bench_rank sts [valid|train]  # Spearman on Chinese STS-B (needs ../shared/data);
                                                  # train = development data, in two parts
    python -m bench.bench_rank tatoeba         # ROC AUC on natural Tatoeba judgements (../shared/data)
    python -m bench.bench_rank lexweights RUN [COPIES]  # lexical weights of a bilingual run's pairs

``scale`` runs the whole ``rank_run`` (filters, the 18 features, char n-gram LM, weak
labels, LightGBM training and scoring of every pair, tiers) without neural features, each
size in its own process so peak memory is its own.  Pairs are synthetic (generated from a
seeded random vocabulary, string reuse like a real phrase table: 1 unique string per 4
pair sides), because the benchmark must run without ../shared/data.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

from bench.common import peak_rss_mb, record, shared_data, timer

AREA = "rank"
_CJK = np.array([chr(c) for c in range(0x4E00, 0x4E00 + 3000)])


def synthetic_pairs(n: int, seed: int = 7) -> pl.DataFrame:
    """``n`` phrase pairs over a pool of n/2 unique phrases (targets: edited sources)."""
    rng = np.random.default_rng(seed)
    vocab = ["".join(rng.choice(_CJK, size=k)) for k in rng.integers(1, 4, size=20000)]
    tags = np.array(["NN", "VV", "NR", "AD", "JJ", "CD", "P", "DEG"])
    n_phrases = max(n // 2, 10)
    lengths = rng.integers(1, 6, size=n_phrases)
    flat = rng.integers(0, len(vocab), size=int(lengths.sum()))
    pos_flat = rng.integers(0, len(tags), size=len(flat))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    vocab_arr = np.array(vocab, dtype=object)
    phrases = [list(vocab_arr[flat[a:b]]) for a, b in zip(offsets[:-1], offsets[1:])]
    pos = [list(tags[pos_flat[a:b]]) for a, b in zip(offsets[:-1], offsets[1:])]
    src = rng.integers(0, n_phrases, size=n)
    tgt = (src + rng.integers(1, 50, size=n)) % n_phrases  # a related-looking other phrase
    frame = pl.DataFrame({
        "source_tokens": [phrases[i] for i in src], "target_tokens": [phrases[i] for i in tgt],
        "source_pos": [pos[i] for i in src], "target_pos": [pos[i] for i in tgt]})
    n_pivots = rng.geometric(0.5, size=n)
    return frame.with_columns(
        pl.col("source_tokens").list.join(" ").alias("source"),
        pl.col("target_tokens").list.join(" ").alias("target"),
        pl.lit("phrase").alias("type"), pl.lit("NP").alias("lhs"),
        pl.Series("p_t_given_s", rng.beta(1, 4, size=n)),
        pl.Series("p_s_given_t", rng.beta(1, 4, size=n)),
        pl.Series("count", n_pivots * rng.integers(1, 4, size=n)).cast(pl.Int64),
        pl.Series("n_pivots", n_pivots).cast(pl.Int64),
        pl.lit("bilingual").alias("origin"),
        pl.int_ranges(0, pl.col("source_tokens").list.len().clip(upper_bound=pl.col(
            "target_tokens").list.len()), dtype=pl.Int32).alias("align_src"),
    ).with_columns(pl.col("align_src").alias("align_tgt"))


def _scale_child(n: int) -> None:
    from cppdb.config import load_config
    from cppdb.rank.pipeline import rank_run

    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        run.mkdir()
        synthetic_pairs(n).write_parquet(run / "phrase_pairs.parquet")
        config = load_config(overrides=["features.embedding=false"])
        cpu_before = _cpu_seconds()
        with timer() as box:
            summary = rank_run(run, config)
        cpu = round(_cpu_seconds() - cpu_before, 1)
        stages = {name: info.get("seconds") for name, info in
                  __import__("json").loads((summary.ranking_dir / "manifest.json").read_text())
                  ["stages"].items()}
    record(AREA, {"bench": "scale", "pairs": n, "seconds": box["seconds"],
                  "pairs_per_second": round(n / box["seconds"]), "cpu_seconds": cpu,
                  "stage_seconds": stages,
                  "ranked": summary.ranked, "rejected": summary.rejected,
                  "peak_rss_mb": peak_rss_mb(),
                  "features": "18 lexical/structural + char 3-gram LM, no embeddings",
                  "command": f"python -m bench.bench_rank scale {n}"})


def _cpu_seconds() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def bench_scale(sizes: list[int]) -> None:
    for n in sizes:
        subprocess.call([sys.executable, "-m", "bench.bench_rank", "_scale-child", str(n)])


def bench_embed(n: int) -> None:
    from cppdb.config import load_config
    from cppdb.embed.encoders import encoder_from_config

    texts = _sentences(n)
    encoder = encoder_from_config(load_config().section("embed"))
    encoder.encode(texts[:4])  # load the model outside the timing
    with timer() as box:
        encoder.encode(texts)
    record(AREA, {"bench": "embed", "encoder": encoder.signature(), "unique_strings": len(texts),
                  "seconds": box["seconds"],
                  "strings_per_second": round(len(texts) / box["seconds"], 1),
                  "mean_chars": round(float(np.mean([len(t) for t in texts])), 1),
                  "command": f"python -m bench.bench_rank embed {n}"})


def _sentences(n: int) -> list[str]:
    repo = Path(__file__).resolve().parents[1]
    texts = (repo / "data" / "parallel" / "sample.zh").read_text("utf-8").splitlines()
    texts = list(dict.fromkeys(t.strip() for t in texts if t.strip()))
    return texts[:n]


#: STS-B train is development data: read in two disjoint parts (the first 3,000 pairs and
#: the rest) so that a change must help on both before it is trusted
STS_PARTS = {"valid": [("valid", None)],
             "train": [("train[:3000]", slice(0, 3000)), ("train[3000:]", slice(3000, None))]}


def _spearman(scores: np.ndarray, gold: np.ndarray) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(scores, gold).statistic)


def _paired_bootstrap(scores: np.ndarray, baseline: np.ndarray, gold: np.ndarray,
                      metric=_spearman, rounds: int = 500, seed: int = 0) -> tuple[float, float]:
    """Standard error of metric(scores) − metric(baseline), both on the same resample of the
    pairs, and the share of resamples where the difference is > 0."""
    rng = np.random.default_rng(seed)
    deltas = []
    for _ in range(rounds):
        i = rng.integers(0, len(gold), len(gold))
        deltas.append(metric(scores[i], gold[i]) - metric(baseline[i], gold[i]))
    deltas = np.array(deltas)
    return float(deltas.std()), float((deltas > 0).mean())


def bench_sts(split: str = "valid") -> None:
    """Spearman of `cppdb score` (shipped model) and of the cosine alone on Chinese STS-B."""
    from scipy.stats import spearmanr

    from cppdb.config import load_config, resolve
    from cppdb.features.models import build_feature_table, load_feature_models
    from cppdb.rank.pairs import text_pairs
    from cppdb.rank.pipeline import load_ranker
    from cppdb.rank.settings import RankRun

    path = shared_data("sts-b-zh", f"STS-B.{split}.data")
    if path is None:
        print("skipping sts: ../shared/data/sts-b-zh not present")
        return
    all_rows = [line.split("\t") for line in path.read_text("utf-8").splitlines() if line.strip()]
    config = load_config()
    cache = Path(__file__).resolve().parents[1] / ".cache" / "bench_rank"  # git-ignored
    run = resolve(RankRun, config)
    models = load_feature_models(run.features, run.embed, cache)
    ranker = load_ranker(None)
    for name, part in STS_PARTS[split]:
        rows = all_rows[part] if part else all_rows
        gold = np.array([float(r[2]) for r in rows])
        with timer() as box:
            pairs = text_pairs([r[0] for r in rows], [r[1] for r in rows],
                               run.annotate)
            frame = build_feature_table(pairs, models)
            scores = ranker.predict(frame)
        cosine = frame["f_cosine"].to_numpy()
        anchor = getattr(ranker, "anchor", None)
        se, better = _paired_bootstrap(scores, cosine, gold)
        rho = {"score": float(spearmanr(scores, gold).statistic),
               "cosine": float(spearmanr(cosine, gold).statistic)}
        row = {"bench": f"sts-b-zh {name}", "pairs": len(rows),
               "spearman_score": round(rho["score"], 4),
               "spearman_cosine": round(rho["cosine"], 4),
               "delta": round(rho["score"] - rho["cosine"], 4),
               "delta_bootstrap_se": round(se, 4), "share_of_resamples_better": better,
               "detectors_fired": {f: int(frame[f].sum()) for f in
                                   ("f_negation_flip", "f_argument_swap") if f in frame.columns},
               "numbers_differ": int((frame["f_numbers_identical"] == 0).sum()),
               "spearman_char_jaccard": round(float(spearmanr(frame["f_char_jaccard"],
                                                              gold).statistic), 4),
               # a per-type ranker (the shipped one) has no single anchor to vary
               "residual_weight": anchor.residual_weight if anchor else None,
               # diagnostic only (the shipped weight is chosen on our own labels, never here)
               "spearman_by_residual_weight": {
                   str(w): round(float(spearmanr(ranker.with_residual_weight(w).predict(frame),
                                                 gold).statistic), 4)
                   for w in (0.0, 0.25, 0.5, 0.75, 1.0)} if anchor else None,
               "seconds": box["seconds"], "model": "cppdb/resources/default_ranker.json",
               "command": f"python -m bench.bench_rank sts {split}"}
        record(AREA, row)


def tatoeba_judgements(path: Path) -> pl.DataFrame:
    """Natural binary judgements from Tatoeba: two different Chinese translations of one
    English sentence (≥ 3 words) are a paraphrase (1); translations of two English
    sentences of the same length that differ in exactly one word are a near miss (0), one
    per such English pair, as many as paraphrases (seeded).  Pairs with identical Chinese
    sides are dropped.  The near-miss label is noisy (job / work), the same for every
    scorer."""
    import random
    import re
    from collections import defaultdict

    by_en: dict[str, list[str]] = defaultdict(list)
    for line in path.read_text("utf-8-sig").splitlines():
        fields = line.split("\t")
        if len(fields) >= 2:
            by_en[fields[0].strip()].append(fields[1].strip())
    words = {en: re.findall(r"[a-z']+", en.lower()) for en in by_en}
    positives = [(zhs[0], zhs[1]) for en, zhs in
                 ((en, list(dict.fromkeys(z))) for en, z in by_en.items())
                 if len(zhs) >= 2 and len(words[en]) >= 3]
    frames: dict[tuple, set[str]] = defaultdict(set)
    for en, ws in words.items():
        for i in range(len(ws) if len(ws) >= 3 else 0):
            frames[(len(ws), i, tuple(ws[:i]), tuple(ws[i + 1:]))].add(en)
    near = sorted({tuple(sorted(ens)[:2]) for ens in frames.values() if len(ens) >= 2})
    random.Random(0).shuffle(near)
    negatives = [(by_en[a][0], by_en[b][0]) for a, b in near[:len(positives)]]
    frame = pl.DataFrame({"source": [s for s, _ in positives + negatives],
                          "target": [t for _, t in positives + negatives],
                          "label": [1] * len(positives) + [0] * len(negatives)})
    return frame.filter(pl.col("source") != pl.col("target"))


def bench_tatoeba() -> None:
    """ROC AUC of `cppdb score` and of the cosine on natural Tatoeba judgements."""
    from sklearn.metrics import roc_auc_score

    from cppdb.config import load_config, resolve
    from cppdb.features.models import build_feature_table, load_feature_models
    from cppdb.rank.pairs import text_pairs
    from cppdb.rank.pipeline import load_ranker
    from cppdb.rank.settings import RankRun

    path = shared_data("tatoeba-cmn", "cmn.txt")
    if path is None:
        print("skipping tatoeba: ../shared/data/tatoeba-cmn not present")
        return
    judged = tatoeba_judgements(path)
    config = load_config()
    cache = Path(__file__).resolve().parents[1] / ".cache" / "bench_rank"  # git-ignored
    run = resolve(RankRun, config)
    models = load_feature_models(run.features, run.embed, cache)
    with timer() as box:
        pairs = text_pairs(judged["source"].to_list(), judged["target"].to_list(),
                           run.annotate)
        frame = build_feature_table(pairs, models)
        scores = load_ranker(None).predict(frame)
    gold = judged["label"].to_numpy()
    cosine = frame["f_cosine"].to_numpy()
    se, better = _paired_bootstrap(scores, cosine, gold,
                                   metric=lambda s, g: float(roc_auc_score(g, s)))
    record(AREA, {"bench": "tatoeba paraphrase vs one-word near miss", "pairs": judged.height,
                  "paraphrases": int(gold.sum()),
                  "auc_score": round(float(roc_auc_score(gold, scores)), 4),
                  "auc_cosine": round(float(roc_auc_score(gold, cosine)), 4),
                  "delta_bootstrap_se": round(se, 4), "share_of_resamples_better": better,
                  "detectors_fired": {f: int(frame[f].sum())
                                      for f in ("f_negation_flip", "f_argument_swap")},
                  "seconds": box["seconds"], "command": "python -m bench.bench_rank tatoeba"})


def bench_lexweights(run_dir: Path, copies: int = 10) -> None:
    """PPDB lexical weights (cppdb.features.lexical_weights) of a bilingual run: the unit
    table from the occurrences, then the run's phrase+pattern pairs, then ``copies`` times
    as many pairs (the pair step is a join: time should grow linearly)."""
    from cppdb.features.lexical_weights import OCCURRENCES, pair_weights, run_units

    with timer() as units_time:
        units = run_units(run_dir)
    if units is None:
        raise SystemExit(f"{run_dir} has no lex_*.parquet / {OCCURRENCES}")
    pairs = pl.concat([pl.read_parquet(run_dir / f"{kind}_pairs.parquet")
                       for kind in ("phrase", "pattern")
                       if (run_dir / f"{kind}_pairs.parquet").exists()], how="diagonal_relaxed")
    occurrences = pl.scan_parquet(run_dir / OCCURRENCES).select(pl.len()).collect().item()
    for n_copies in (1, copies):
        frame = pl.concat([pairs] * n_copies)
        with timer() as pair_time:
            pair_weights(frame, units)
        record(AREA, {"bench": "lexweights", "run": str(run_dir), "occurrences": occurrences,
                      "units": units.height, "units_seconds": units_time["seconds"],
                      "pairs": frame.height, "pairs_seconds": pair_time["seconds"],
                      "peak_rss_mb": peak_rss_mb()})


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    what = args.pop(0) if args else "all"
    if what == "_scale-child":
        _scale_child(int(args[0]))
    elif what == "scale":
        bench_scale([int(a) for a in args] or [100_000, 1_000_000])
    elif what == "embed":
        bench_embed(int(args[0]) if args else 256)
    elif what == "sts":
        for split in args or ["valid"]:
            bench_sts(split)
    elif what == "tatoeba":
        bench_tatoeba()
    elif what == "lexweights":
        bench_lexweights(Path(args[0]), int(args[1]) if len(args) > 1 else 10)
    elif what == "all":
        bench_scale([100_000, 1_000_000])
        bench_embed(256)
        bench_sts("valid")
        bench_sts("train")
        bench_tatoeba()
    else:
        raise SystemExit(f"unknown benchmark {what!r}: scale | embed | sts | tatoeba | lexweights | all")


if __name__ == "__main__":
    main()
