"""A seeded, SYNTHETIC large zh–en corpus for scale benchmarks (never for quality numbers).

We have no public 1M-pair corpus here, so new pairs are made from real ones: Tatoeba
(cmn.txt, passed as an argument, not shipped) is annotated and word-aligned once with cppdb
itself; every 1-1 link between content words gives a translation entry (zh word, en word)
bucketed by (Chinese POS, English POS).  A new pair copies a real pair and swaps each such
aligned word pair, with probability ``--swap``, for another entry of the same bucket drawn by
its corpus frequency — so the sentence lengths, the POS sequences, the vocabulary's Zipf
shape and the repetition of English pivots follow the real text, and every swap is
dictionary-consistent (the new zh word was aligned to the new en word somewhere).

    python -m devtools.make_corpus --tatoeba /work/shared/data/tatoeba-cmn/cmn.txt \\
        --pairs 100000 --out /tmp/corpus100k --work /tmp/tatoeba-run

writes ``OUT.zh`` / ``OUT.en`` (raw text, one sentence per line).

``--template FILE`` instead samples REAL pairs from a TSV ``en<TAB>zh[<TAB>…]`` (the layout
of Tatoeba's cmn.txt and of ``devtools/prepare_corpus.py``'s ``corpus.tsv``): seeded, without
replacement up to the template's size and with replacement beyond it, optionally only pairs
whose English has ``--length-bucket`` words ± ``--bucket-tolerance``.  No sentence is
altered, so a corpus larger than its template repeats pairs (the pivot sees the same
sentence pair several times; the cost per pair is what it measures) — unless ``--join``
makes the pairs past the template's size from two real pairs joined end to end (zh₁zh₂ with
en₁ en₂; no ordered combination twice, so no exact repeat; ``OUT.json`` counts them):

    python -m devtools.make_corpus --template /work/corpora/wmt-news-zhen/corpus.tsv \
        --pairs 100000 --length-bucket 20 --out /tmp/news100k-w20

``OUT.json`` beside the two files says how the corpus was made (``bench_scale`` reads it).
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

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


def read_template(path: Path) -> pl.DataFrame:
    """(en, zh, en_words) of every usable line of an ``en<TAB>zh[<TAB>…]`` file, file order."""
    rows = [line.split("\t") for line in path.read_text("utf-8-sig").splitlines()]
    frame = pl.DataFrame({"en": [r[0].strip() if len(r) > 1 else "" for r in rows],
                          "zh": [r[1].strip() if len(r) > 1 else "" for r in rows]})
    frame = frame.filter((pl.col("en") != "") & (pl.col("zh") != ""))
    if frame.is_empty():
        raise SystemExit(f"{path}: no 'en<TAB>zh' lines")
    return frame.with_columns(en_words=pl.col("en").str.split(" ").list.len())


def bucket_tolerance(length: int, tolerance: int | None) -> int:
    """±words of a length bucket: a quarter of its length, at least 2, unless given."""
    return tolerance if tolerance is not None else max(2, round(length / 4))


def joined_pairs(template: pl.DataFrame, n_pairs: int, rng: np.random.Generator,
                 max_words: int = 0) -> tuple[list[str], list[str]]:
    """``n_pairs`` new pairs, each two different template pairs joined end to end (zh₁zh₂
    with en₁ en₂), no ordered combination twice: real sentences, never an exact repeat.
    ``max_words`` > 0: only joins whose English has at most that many words (alignment
    cost grows faster than length, so a 1M corpus of 40-word joins would cost ≈ 6× one of
    20-word pairs per pair)."""
    size = template.height
    if size < 2 or n_pairs > size * (size - 1):
        raise SystemExit(f"{size} template pairs cannot make {n_pairs:,} distinct joined pairs")
    words = template["en_words"].to_numpy()
    codes = np.zeros(0, dtype=np.int64)
    for _ in range(1000):
        if codes.size >= n_pairs:
            break
        first = rng.integers(0, size, 2 * n_pairs)
        second = rng.integers(0, size, 2 * n_pairs)
        fits = first != second
        if max_words > 0:
            fits &= words[first] + words[second] <= max_words
        drawn = (first * size + second)[fits]
        merged = np.concatenate([codes, drawn])
        _, where = np.unique(merged, return_index=True)
        codes = merged[np.sort(where)]
    if codes.size < n_pairs:
        raise SystemExit(f"only {codes.size:,} distinct joins of at most {max_words} English "
                         f"words: raise --max-joined-words")
    codes = codes[:n_pairs]
    first, second = (codes // size).tolist(), (codes % size).tolist()
    zh, en = template["zh"].to_list(), template["en"].to_list()
    return ([zh[a] + zh[b] for a, b in zip(first, second)],
            [en[a] + " " + en[b] for a, b in zip(first, second)])


def sample_template(template: pl.DataFrame, n_pairs: int, seed: int,
                    length_bucket: int | None = None, tolerance: int | None = None,
                    join: bool = False, max_joined_words: int = 0
                    ) -> tuple[list[str], list[str]]:
    """``n_pairs`` real pairs of ``template``: a seeded permutation while it lasts (no pair
    twice), then seeded draws with replacement — or, with ``join``, new pairs made of two
    real ones end to end (:func:`joined_pairs`); only the length bucket's pairs if given."""
    if length_bucket is not None:
        tol = bucket_tolerance(length_bucket, tolerance)
        template = template.filter(
            pl.col("en_words").is_between(length_bucket - tol, length_bucket + tol))
        if template.is_empty():
            raise SystemExit(f"no template pair has {length_bucket} ± {tol} English words")
    rng = np.random.default_rng(seed)
    size = template.height
    order = rng.permutation(size)[:n_pairs]
    if n_pairs > size and not join:
        order = np.concatenate([order, rng.integers(0, size, n_pairs - size)])
    picked = template[order.tolist()]
    zh, en = picked["zh"].to_list(), picked["en"].to_list()
    if n_pairs > size and join:
        more_zh, more_en = joined_pairs(template, n_pairs - size, rng, max_joined_words)
        zh, en = zh + more_zh, en + more_en
    return zh, en


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--tatoeba", type=Path, help="Tatoeba cmn.txt (synthetic pairs)")
    source.add_argument("--template", type=Path,
                        help="en<TAB>zh TSV whose real pairs are sampled")
    parser.add_argument("--pairs", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True, help="writes OUT.zh and OUT.en")
    parser.add_argument("--work", type=Path, help="the annotated seed run (--tatoeba)")
    parser.add_argument("--swap", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--length-bucket", type=int,
                        help="--template: only pairs with about this many English words")
    parser.add_argument("--join", action="store_true",
                        help="--template: past the template's size, join two real pairs end "
                             "to end instead of repeating pairs")
    parser.add_argument("--max-joined-words", type=int, default=0,
                        help="--join: only joins of at most this many English words (0: any)")
    parser.add_argument("--bucket-tolerance", type=int,
                        help="± words of --length-bucket (default: a quarter, at least 2)")
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    if args.tatoeba and args.work is None:
        parser.error("--tatoeba needs --work")
    if args.tatoeba and (args.length_bucket is not None or args.join):
        parser.error("--length-bucket and --join apply to --template only")
    return args


def corpus_info(corpus: Path) -> dict[str, Any]:
    """How the corpus was made (``CORPUS.json`` from make_corpus) and its measured size and
    English words per sentence."""
    sidecar = Path(f"{corpus}.json")
    info: dict[str, Any] = (json.loads(sidecar.read_text("utf-8")) if sidecar.is_file()
                            else {"kind": "synthetic-tatoeba", "assumed": "no CORPUS.json"})
    pairs = words = 0
    with open(f"{corpus}.en", encoding="utf-8") as handle:
        for line in handle:
            pairs += 1
            words += len(line.split())
    kind = info.pop("kind")
    return {"corpus_kind": kind, "synthetic": kind == "synthetic-tatoeba", "corpus_info": info,
            "pairs": pairs, "en_words_per_sentence": round(words / max(pairs, 1), 2)}


def main() -> None:
    args = _parse()
    if args.template:
        template = read_template(args.template)
        zh, en = sample_template(template, args.pairs, args.seed,
                                 args.length_bucket, args.bucket_tolerance, args.join,
                                 args.max_joined_words)
        info = {"kind": "template", "template": str(args.template), "seed": args.seed,
                "joined_pairs": max(0, args.pairs - template.height) if args.join else 0,
                "max_joined_words": args.max_joined_words,
                "length_bucket": args.length_bucket,
                "bucket_tolerance": None if args.length_bucket is None else
                bucket_tolerance(args.length_bucket, args.bucket_tolerance)}
    else:
        zh, en = generate(seed_run(args.tatoeba, args.work), args.pairs, args.swap, args.seed)
        info = {"kind": "synthetic-tatoeba", "tatoeba": str(args.tatoeba), "seed": args.seed,
                "swap": args.swap}
    words = [len(e.split(" ")) for e in en]
    info |= {"pairs": len(zh), "en_words_mean": round(sum(words) / len(words), 2)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{args.out}.zh").write_text("\n".join(zh) + "\n", "utf-8")
    Path(f"{args.out}.en").write_text("\n".join(en) + "\n", "utf-8")
    Path(f"{args.out}.json").write_text(json.dumps(info, indent=2) + "\n", "utf-8")
    print(f"{len(zh)} {info['kind']} pairs -> {args.out}.zh / {args.out}.en "
          f"({info['en_words_mean']} English words per sentence)")


if __name__ == "__main__":
    main()
