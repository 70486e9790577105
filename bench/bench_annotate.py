"""Annotation throughput (sentences/s) and peak RSS, zh and en separately, offline backends.

    python -m bench.bench_annotate [N]          # default N = 5000 pairs

Data: the first N pairs of /work/shared/data/tatoeba-cmn/cmn.txt when present, else N
generated pairs.  Each configuration runs in a fresh interpreter so that its peak RSS
(process + pool workers) and its start-up cost (jieba / spaCy loading, pool spawn) are
its own.  ``load_seconds`` is the first call (model loading); ``seconds`` and the rates
cover the N sentences after it (pool start-up included when workers > 1).
"""
from __future__ import annotations

import os
import random
import subprocess
import sys
import time

from bench.common import record, shared_data

_SUBJECTS_ZH = ["我", "他们", "那位老人", "政府", "这家公司", "我的朋友", "三个学生", "她弟弟"]
_VERBS_ZH = ["喜欢", "看见了", "正在调查", "买了", "想去", "讨论", "建了"]
_OBJECTS_ZH = ["一座新机场", "北京大学的图书馆", "这个问题", "很大的苹果", "两本书", "火灾原因"]
_SUBJECTS_EN = ["I", "They", "The old man", "The government", "This company", "My friend",
                "Three students", "Her brother"]
_VERBS_EN = ["likes", "saw", "is investigating", "bought", "wants to visit", "discussed",
             "built"]
_OBJECTS_EN = ["a new airport", "the library of Peking University", "this problem",
               "a very big apple", "two books", "the cause of the fire"]


def generated_pairs(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    zh, en = [], []
    for _ in range(n):
        s, v, o = rng.randrange(8), rng.randrange(7), rng.randrange(6)
        zh.append(f"{_SUBJECTS_ZH[s]}{_VERBS_ZH[v]}{_OBJECTS_ZH[o]}。")
        en.append(f"{_SUBJECTS_EN[s]} {_VERBS_EN[v]} {_OBJECTS_EN[o]}.")
    return zh, en


def load_pairs(n: int) -> tuple[list[str], list[str], str]:
    path = shared_data("tatoeba-cmn", "cmn.txt")
    if path is None:
        zh, en = generated_pairs(n)
        return zh, en, f"generated ({n} template pairs)"
    from cppdb.readers.parallel import read_tatoeba_tsv

    text = read_tatoeba_tsv(path, limit=n)
    return list(text.zh), list(text.en), f"tatoeba-cmn first {n} lines ({len(text)} pairs)"


def run_one(lang: str, workers: int, n: int) -> None:
    """One measured configuration (called in a fresh interpreter)."""
    from cppdb.annotate.pipeline import annotate_texts
    from cppdb.annotate.settings import AnnotateSettings
    from cppdb.config import load_config, resolve
    from cppdb.workers import resolve_workers

    zh, en, data = load_pairs(n)
    texts = zh if lang == "zh" else en
    config = resolve(AnnotateSettings, load_config(overrides={"annotate.workers": workers}))
    start = time.perf_counter()
    annotate_texts(lang, texts[:1], config)  # type: ignore[arg-type]  # loads the models
    load_seconds = time.perf_counter() - start
    start = time.perf_counter()
    sentences = annotate_texts(lang, texts, config)  # type: ignore[arg-type]
    seconds = time.perf_counter() - start
    tokens = sum(len(s.tokens) for s in sentences)
    record("annotate", {
        "lang": lang, "data": data, "sentences": len(texts), "tokens": tokens,
        "workers": resolve_workers(workers, "annotate.workers"), "load_seconds": round(load_seconds, 2),
        "seconds": round(seconds, 2), "sentences_per_s": round(len(texts) / seconds, 1),
        "tokens_per_s": round(tokens / seconds, 1),
        "backend": "jieba+grammar" if lang == "zh" else "spacy en_core_web_sm+dependency",
        "load_average_1m": round(os.getloadavg()[0], 2),
    })


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--one":
        run_one(argv[1], int(argv[2]), int(argv[3]))
        return
    n = int(argv[0]) if argv else 5000
    for lang in ("zh", "en"):
        for workers in (0, 1):  # all cores, then one process (no pool) for comparison
            subprocess.run([sys.executable, "-m", "bench.bench_annotate", "--one", lang,
                            str(workers), str(n)], check=True)


if __name__ == "__main__":
    main()
