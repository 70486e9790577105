"""Export a run's word alignment as a Pharaoh file that ``extract-bilingual --alignment`` reads
back, so later runs on the same corpus skip the slow aligner.

One line per INPUT line (``id`` = 0-based input line; a line the run rejected gets an empty
line), links ``zh-en`` 0-based over the run's own tokens, sorted.  It also checks that the
ids really are input line order: the run's Chinese tokens joined give the input line
(whitespace and NFKC width forms aside) for every id — character for character, or at the same length where the
annotator normalised variants and full-width forms (絶→绝, ＂→").

    python -m devtools.export_alignment /work/runs/news20k \\
        /work/corpora/wmt-news-zhen/corpus.20000.zh /work/corpora/wmt-news-zhen/news20k.align

The file is only valid with the same input text and the same tokenisation settings;
``--tokens FILE`` also writes the run's own tokens as ``zh tokens ||| en tokens`` lines (the
pre-tokenised ``--parallel`` form), which keeps the pair valid whatever the tokenizer
defaults become.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import polars as pl

from cppdb import schema as S


def pharaoh_lines(alignment: pl.DataFrame, n_lines: int) -> list[str]:
    """``n_lines`` Pharaoh lines from an alignment table (ids 0-based input lines)."""
    ids = alignment[S.ID]
    if ids.n_unique() != ids.len() or (ids.len() and (ids.min() < 0 or ids.max() >= n_lines)):
        raise SystemExit(f"alignment ids are not distinct lines of a {n_lines}-line input")
    links = (alignment.explode([S.LINK_ZH, S.LINK_EN]).drop_nulls()
             .sort(S.ID, S.LINK_ZH, S.LINK_EN)
             .group_by(S.ID, maintain_order=True)
             .agg(pl.concat_str(pl.col(S.LINK_ZH).cast(pl.String), pl.lit("-"),
                                pl.col(S.LINK_EN).cast(pl.String)).str.join(" ").alias("p")))
    every = pl.DataFrame({S.ID: range(n_lines)}, schema={S.ID: pl.Int64})
    return (every.join(links, on=S.ID, how="left").sort(S.ID)["p"]
            .fill_null("").to_list())


def check_line_order(run: Path, zh_input: Path) -> dict[str, int]:
    """How many annotated ids match their input line (joined tokens, whitespace removed):
    exactly, at the same length with most characters shared (normalised ones), or not at all."""
    lines = zh_input.read_text("utf-8").splitlines()
    ann = pl.read_parquet(run / "annotations.parquet",
                          columns=[S.ID, S.ann("zh", "tokens")])
    joined = ann.select(S.ID, text=pl.col(S.ann("zh", "tokens")).list.join("")
                        .str.normalize("NFKC").str.replace_all(r"\s+", ""))
    expected = pl.DataFrame({S.ID: range(len(lines)), "line": lines},
                            schema={S.ID: pl.Int64, "line": pl.String}
                            ).with_columns(pl.col("line").str.normalize("NFKC")
                                           .str.replace_all(r"\s+", ""))
    both = joined.join(expected, on=S.ID, how="left")
    same = both.filter(pl.col("text") == pl.col("line")).height
    # normalised: same length, and at least 80 % of the distinct characters shared
    shared = (pl.col("text").str.split("").list.set_intersection(pl.col("line").str.split(""))
              .list.len() / pl.col("text").str.split("").list.unique().list.len())
    same_length = both.filter((pl.col("text").str.len_chars()
                               == pl.col("line").str.len_chars()) & (shared >= 0.8)).height
    return {"input_lines": len(lines), "annotated": ann.height, "matching": same,
            "normalised_same_length": same_length - same, "mismatching": ann.height - same_length}


def token_lines(run: Path, n_lines: int) -> list[str]:
    """``zh tokens ||| en tokens`` per input line from the run's annotations (a rejected line
    stays empty, so the reader rejects it again and every id keeps its line)."""
    zh, en = S.ann("zh", "tokens"), S.ann("en", "tokens")
    ann = pl.read_parquet(run / "annotations.parquet", columns=[S.ID, zh, en])
    spaced = ann.filter(pl.col(zh).list.eval(pl.element().str.contains(r"\s")).list.any()
                        | pl.col(en).list.eval(pl.element().str.contains(r"\s")).list.any())
    if spaced.height:
        raise SystemExit(f"{spaced.height} pairs have a token with a space inside: they have "
                         "no pre-tokenised form")
    text = ann.select(S.ID, p=pl.col(zh).list.join(" ") + " ||| " + pl.col(en).list.join(" "))
    every = pl.DataFrame({S.ID: range(n_lines)}, schema={S.ID: pl.Int64})
    return every.join(text, on=S.ID, how="left").sort(S.ID)["p"].fill_null("").to_list()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="an extract-bilingual run directory")
    parser.add_argument("input_zh", type=Path, help="the run's Chinese input (line count)")
    parser.add_argument("out", type=Path, help="Pharaoh file to write")
    parser.add_argument("--tokens", type=Path, help="also write 'zh ||| en' token lines here")
    args = parser.parse_args()
    n_lines = sum(1 for _ in args.input_zh.open(encoding="utf-8"))
    lines = pharaoh_lines(pl.read_parquet(args.run / "alignment.parquet"), n_lines)
    order = check_line_order(args.run, args.input_zh)
    if order["mismatching"]:
        raise SystemExit(f"ids are not input line order: {order}")
    args.out.write_text("".join(line + "\n" for line in lines), "utf-8")
    if args.tokens:
        args.tokens.write_text("".join(t + "\n" for t in token_lines(args.run, n_lines)),
                               "utf-8")
    print(json.dumps({**order, "lines_written": len(lines),
                      "empty_lines": sum(1 for line in lines if not line)}))


if __name__ == "__main__":
    main()
