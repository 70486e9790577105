"""Prepare a real zh–en development corpus (kept OUTSIDE the repo) for cppdb and the benchmarks.

Reads every ``NAME.zh`` / ``NAME.en`` pair of line-aligned files in ``--raw`` (NAME becomes
the pair's source label), normalises whitespace, drops empty and over-long pairs and exact
duplicates (each drop counted), shuffles with a seed (``--keep-order`` to skip), and writes

- ``OUT/corpus.tsv``      ``en<TAB>zh<TAB>source`` (the Tatoeba layout: ``--parallel`` reads it)
- ``OUT/corpus.zh``, ``OUT/corpus.en``  the same pairs as two line-aligned files (``--zh/--en``)
- ``OUT/corpus.<N>.{tsv,zh,en}``  the first N pairs, for each ``--subsets`` size
- ``OUT/stats.json``      counts per drop reason and per source, length statistics
- ``OUT/corpus.json``, ``OUT/corpus.<N>.json``  the sidecar ``bench_scale`` reads (kind ``real``:
  without it a corpus is labelled synthetic)

    python -m devtools.prepare_corpus --raw /work/corpora/wmt-news-zhen/raw \\
        --out /work/corpora/wmt-news-zhen --subsets 10000,20000

See docs/corpora.md for the corpora and their provenance.  Never commit the output.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import polars as pl

from cppdb.readers.parallel import read_tatoeba_tsv
from cppdb.text.normalize import CJK_CHARACTER

# A sentence longer than this is a paragraph or a mis-split document, not a news sentence;
# cppdb's own reader refuses lines over 2,000 characters.
DEFAULT_MAX_CHARS = 600
DEFAULT_MAX_EN_WORDS = 120


def read_raw(raw: Path) -> pl.DataFrame:
    """Every NAME.zh/NAME.en pair under ``raw`` as rows (source, line, zh, en)."""
    frames = []
    for zh_path in sorted(raw.glob("*.zh")):
        en_path = zh_path.with_suffix(".en")
        if not en_path.is_file():
            raise SystemExit(f"{zh_path}: no {en_path.name} beside it")
        zh = zh_path.read_text("utf-8-sig").splitlines()
        en = en_path.read_text("utf-8-sig").splitlines()
        if len(zh) != len(en):
            raise SystemExit(f"{zh_path.stem}: {len(zh)} zh lines but {len(en)} en lines "
                             "(not line-aligned)")
        frames.append(pl.DataFrame({"source": [zh_path.stem] * len(zh),
                                    "line": range(1, len(zh) + 1), "zh": zh, "en": en}))
    if not frames:
        raise SystemExit(f"{raw}: no NAME.zh / NAME.en files")
    return pl.concat(frames)


def normalise(frame: pl.DataFrame) -> pl.DataFrame:
    """Whitespace runs (tabs included: the TSV needs that) become one space; ends stripped.
    On the Chinese side a space next to a Han character or CJK punctuation goes (some
    references come word-segmented: ``据悉 ， “ 爱家``); spaces between Latin words stay."""
    def clean(col: str) -> pl.Expr:
        return pl.col(col).str.replace_all(r"[\s\u3000\u00a0\u200b\ufeff]+", " ") \
            .str.strip_chars()
    return frame.with_columns(clean("zh"), clean("en")).with_columns(
        pl.col("zh").str.replace_all(f"({CJK_CHARACTER}) ", "$1")
        .str.replace_all(f" ({CJK_CHARACTER})", "$1")
    ).with_columns(
        en_words=pl.col("en").str.split(" ").list.len(),
        zh_chars=pl.col("zh").str.len_chars(), en_chars=pl.col("en").str.len_chars())


def filter_pairs(frame: pl.DataFrame, max_chars: int, max_en_words: int,
                 exclude_zh: frozenset[str] = frozenset()
                 ) -> tuple[pl.DataFrame, dict[str, int]]:
    """Drop empty, over-long and duplicate pairs and pairs whose Chinese is in
    ``exclude_zh`` (another corpus, so the two stay disjoint); how many went for each reason."""
    drops: dict[str, int] = {"read": frame.height}
    empty = (pl.col("zh") == "") | (pl.col("en") == "")
    drops["empty"] = frame.filter(empty).height
    frame = frame.filter(~empty)
    long = ((pl.col("zh_chars") > max_chars) | (pl.col("en_chars") > max_chars)
            | (pl.col("en_words") > max_en_words))
    drops["over_long"] = frame.filter(long).height
    frame = frame.filter(~long)
    if exclude_zh:
        shared = pl.col("zh").is_in(list(exclude_zh))
        drops["in_excluded_corpus"] = frame.filter(shared).height
        frame = frame.filter(~shared)
    unique = frame.unique(subset=["zh", "en"], keep="first", maintain_order=True)
    drops["duplicate"] = frame.height - unique.height
    drops["kept"] = unique.height
    return unique, drops


def length_stats(frame: pl.DataFrame) -> dict[str, Any]:
    words = frame["en_words"]
    quantiles = {f"p{q}": float(words.quantile(q / 100, "nearest")) for q in (10, 25, 50, 75, 90)}
    return {"pairs": frame.height, "en_words_mean": round(float(words.mean()), 2),
            **{f"en_words_{k}": v for k, v in quantiles.items()},
            "zh_chars_mean": round(float(frame["zh_chars"].mean()), 2),
            "share_en_words_20_60": round(float(words.is_between(20, 60).mean()), 3)}


def write_set(frame: pl.DataFrame, stem: Path, made: dict[str, Any]) -> None:
    """STEM.{zh,en,tsv} and the STEM.json sidecar (``made``: how the corpus was prepared)."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    zh, en, src = frame["zh"].to_list(), frame["en"].to_list(), frame["source"].to_list()
    Path(f"{stem}.zh").write_text("".join(z + "\n" for z in zh), "utf-8")
    Path(f"{stem}.en").write_text("".join(e + "\n" for e in en), "utf-8")
    Path(f"{stem}.tsv").write_text(
        "".join(f"{e}\t{z}\t{s}\n" for e, z, s in zip(en, zh, src)), "utf-8")
    sidecar = {"kind": "real", **made, "pairs": frame.height,
               "en_words_mean": length_stats(frame)["en_words_mean"]}
    Path(f"{stem}.json").write_text(json.dumps(sidecar, indent=2) + "\n", "utf-8")


def read_exclusions(paths: list[Path]) -> frozenset[str]:
    """Chinese lines of other prepared corpora (``corpus.zh``), already normalised."""
    return frozenset(line for path in paths for line in path.read_text("utf-8").splitlines()
                     if line)


def prepare(raw: Path, out: Path, *, subsets: list[int], seed: int | None,
            max_chars: int = DEFAULT_MAX_CHARS, max_en_words: int = DEFAULT_MAX_EN_WORDS,
            exclude: list[Path] | None = None) -> dict[str, Any]:
    frame, drops = filter_pairs(normalise(read_raw(raw)), max_chars, max_en_words,
                                read_exclusions(exclude or []))
    if seed is not None:
        frame = frame.sample(fraction=1.0, shuffle=True, seed=seed)
    made = {"raw": str(raw), "seed": seed}
    write_set(frame, out / "corpus", made)
    stats: dict[str, Any] = {
        "raw": str(raw), "seed": seed, "max_chars": max_chars, "max_en_words": max_en_words,
        "exclude": [str(path) for path in exclude or []],
        "drops": drops, "per_source": dict(sorted(
            frame.group_by("source").len().iter_rows())),
        "corpus": length_stats(frame), "subsets": {}}
    for size in subsets:
        if size > frame.height:
            print(f"subset {size} skipped: only {frame.height} pairs")
            continue
        write_set(frame.head(size), out / f"corpus.{size}", made)
        stats["subsets"][str(size)] = length_stats(frame.head(size))
    (out / "stats.json").write_text(json.dumps(stats, indent=2, ensure_ascii=False) + "\n",
                                    "utf-8")
    return stats


def tatoeba_inputs(tsv: Path, out_dir: Path) -> tuple[Path, Path]:
    """Tatoeba ``en<TAB>zh<TAB>attribution`` → line-aligned zh/en files (bad lines kept as
    empty lines so that the extractor reports them in rejected.jsonl)."""
    text = read_tatoeba_tsv(tsv)
    n_lines = max(list(text.ids) + [p.line - 1 for p in text.problems]) + 1
    zh, en = [""] * n_lines, [""] * n_lines
    for i, z, e in zip(text.ids, text.zh, text.en):
        zh[i], en[i] = z.replace("\n", " "), e.replace("\n", " ")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "tatoeba.zh").write_text("\n".join(zh) + "\n", "utf-8")
    (out_dir / "tatoeba.en").write_text("\n".join(en) + "\n", "utf-8")
    return out_dir / "tatoeba.zh", out_dir / "tatoeba.en"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--raw", type=Path, required=True, help="folder of NAME.zh/NAME.en")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--subsets", default="", help="comma-separated head sizes")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--keep-order", action="store_true", help="no shuffle")
    parser.add_argument("--max-chars", type=int, default=DEFAULT_MAX_CHARS)
    parser.add_argument("--max-en-words", type=int, default=DEFAULT_MAX_EN_WORDS)
    parser.add_argument("--exclude", type=Path, action="append", default=[],
                        help="corpus.zh of another prepared corpus: pairs with one of its "
                             "Chinese lines are dropped (repeatable)")
    args = parser.parse_args()
    sizes = [int(x) for x in args.subsets.split(",") if x.strip()]
    stats = prepare(args.raw, args.out, subsets=sizes,
                    seed=None if args.keep_order else args.seed,
                    max_chars=args.max_chars, max_en_words=args.max_en_words,
                    exclude=args.exclude)
    print(json.dumps({"drops": stats["drops"], "corpus": stats["corpus"]}, indent=2))


if __name__ == "__main__":
    main()
