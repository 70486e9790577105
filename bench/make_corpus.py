"""A seeded, SYNTHETIC large zh–en corpus for scale benchmarks (never for quality numbers).

We have no public 1M-pair corpus here, so new pairs are made from real ones: Tatoeba
(cmn.txt, passed as an argument, not shipped) is annotated and word-aligned once with cppdb
itself; every 1-1 link between content words gives a translation entry (zh word, en word)
bucketed by (Chinese POS, English POS).  A new pair copies a real pair and swaps each such
aligned word pair, with probability ``--swap``, for another entry of the same bucket drawn by
its corpus frequency — so the sentence lengths, the POS sequences, the vocabulary's Zipf
shape and the repetition of English pivots follow the real text, and every swap is
dictionary-consistent (the new zh word was aligned to the new en word somewhere).

    python -m bench.make_corpus --tatoeba /work/shared/data/tatoeba-cmn/cmn.txt \\
        --pairs 100000 --out /tmp/corpus100k --work /tmp/tatoeba-run

writes ``OUT.zh`` / ``OUT.en`` (raw text, one sentence per line).
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
import polars as pl

from cppdb import schema as S

CONTENT = ("NN", "NR", "VV", "VA", "JJ", "AD", "CD", "NT", "M")
_NO_SPACE_BEFORE = re.compile(r" ([.,!?;:%)\]}'’]|n't|'s|'re|'ll|'ve|'m|'d)")


def seed_run(tatoeba: Path, work: Path) -> Path:
    """Annotate and align the real pairs (cppdb's own pipeline; resumable)."""
    from cppdb.config import load_config
    from cppdb.extractors.bilingual import extract_bilingual

    rows = [line.rstrip("\n").split("\t") for line in
            tatoeba.read_text("utf-8-sig").splitlines() if line.count("\t") >= 1]
    work.mkdir(parents=True, exist_ok=True)
    (work / "src.zh").write_text("\n".join(r[1] for r in rows) + "\n", "utf-8")
    (work / "src.en").write_text("\n".join(r[0] for r in rows) + "\n", "utf-8")
    return extract_bilingual(work / "src.zh", work / "src.en", work / "run",
                             load_config()).run_dir


def translation_buckets(run: Path) -> pl.DataFrame:
    """(zh, en, zh_pos, en_pos, n) from 1-1 links between content words."""
    ann = pl.read_parquet(run / "annotations.parquet", columns=[
        S.ID, S.ann("zh", "tokens"), S.ann("zh", "pos"), S.ann("en", "tokens"),
        S.ann("en", "pos")])
    links = pl.read_parquet(run / "alignment.parquet")
    one = (links.explode(["link_zh", "link_en"]).drop_nulls()
           .with_columns(pl.len().over(S.ID, "link_zh").alias("nz"),
                         pl.len().over(S.ID, "link_en").alias("ne"))
           .filter((pl.col("nz") == 1) & (pl.col("ne") == 1)))
    words = one.join(ann, on=S.ID).select(
        zh=pl.col(S.ann("zh", "tokens")).list.get(pl.col("link_zh")),
        zh_pos=pl.col(S.ann("zh", "pos")).list.get(pl.col("link_zh")),
        en=pl.col(S.ann("en", "tokens")).list.get(pl.col("link_en")),
        en_pos=pl.col(S.ann("en", "pos")).list.get(pl.col("link_en")))
    return (words.filter(pl.col("zh_pos").is_in(CONTENT))
            .group_by("zh", "en", "zh_pos", "en_pos").agg(n=pl.len())
            .filter(pl.col("n") >= 2).sort("zh_pos", "en_pos", "n", "zh", "en",
                                          descending=[False, False, True, False, False]))


def generate(run: Path, n_pairs: int, swap: float, seed: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    table = translation_buckets(run)
    buckets: dict[tuple[str, str], tuple[list[str], list[str], np.ndarray]] = {}
    for (zp, ep), g in table.group_by(["zh_pos", "en_pos"], maintain_order=True):
        weights = g["n"].to_numpy().astype(float)
        buckets[(zp, ep)] = (g["zh"].to_list(), g["en"].to_list(), weights / weights.sum())
    known = set(zip(table["zh"], table["en"], table["zh_pos"], table["en_pos"]))
    ann = pl.read_parquet(run / "annotations.parquet").join(
        pl.read_parquet(run / "alignment.parquet"), on=S.ID).sort(S.ID)
    base = list(ann.select(S.ann("zh", "tokens"), S.ann("zh", "pos"), S.ann("en", "tokens"),
                           S.ann("en", "pos"), "link_zh", "link_en").iter_rows())
    zh_out, en_out = [], []
    for k in rng.integers(0, len(base), n_pairs):
        zt, zp, et, ep, lz, le = base[k]
        zt, et = list(zt), list(et)
        for i, j in zip(lz, le):
            if lz.count(i) != 1 or le.count(j) != 1 or rng.random() >= swap:
                continue
            key = (zp[i], ep[j])
            if (zt[i], et[j], *key) not in known or key not in buckets:
                continue
            zs, es, p = buckets[key]
            pick = int(rng.choice(len(zs), p=p))
            zt[i], et[j] = zs[pick], es[pick]
        zh_out.append("".join(zt))
        en_out.append(_NO_SPACE_BEFORE.sub(r"\1", " ".join(et)))
    return zh_out, en_out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tatoeba", type=Path, required=True, help="Tatoeba cmn.txt")
    parser.add_argument("--pairs", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True, help="writes OUT.zh and OUT.en")
    parser.add_argument("--work", type=Path, required=True, help="the annotated seed run")
    parser.add_argument("--swap", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    run = seed_run(args.tatoeba, args.work)
    zh, en = generate(run, args.pairs, args.swap, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{args.out}.zh").write_text("\n".join(zh) + "\n", "utf-8")
    Path(f"{args.out}.en").write_text("\n".join(en) + "\n", "utf-8")
    print(f"{len(zh)} synthetic pairs -> {args.out}.zh / {args.out}.en")


if __name__ == "__main__":
    main()
