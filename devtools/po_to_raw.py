"""Turn a translated gettext catalogue (a folder of ``.po`` files) into one ``NAME.zh`` /
``NAME.en`` pair of line-aligned files for ``devtools/prepare_corpus.py``.

Made for the zh_CN translation of the Python documentation (docs/corpora.md,
``python-docs-zhen``): each ``msgid`` is an English paragraph of the documentation and its
``msgstr`` a volunteer's Chinese translation.  Kept OUTSIDE the repository like every corpus.

- only translated entries: not the header, not obsolete (``#~``), not ``fuzzy``, not empty
- reStructuredText inline markup is reduced to the text Sphinx shows (``:func:`~os.path.join```
  → ``join``, ``:func:`os.path.join``` → ``os.path.join``, ````literal```` → ``literal``,
  ```text <url>`_`` → ``text``, ``**b**`` → ``b``)
- dropped (counted): entries whose translation equals the English (code, signatures, names),
  whose Chinese side has fewer than two Han characters, or whose English has fewer than
  ``--min-en-words`` words with a letter
- a paragraph is split into sentences when the English and the Chinese sides split into the
  same number (> 1) of sentences; otherwise it stays one pair

    python -m devtools.po_to_raw --po /work/corpora/python-docs-zhen/src \\
        --out /work/corpora/python-docs-zhen/raw/python-docs-3.14
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import polars as pl

_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r"}
_ESCAPE = re.compile(r'\\(.)')
# reST inline markup, most specific first: numbered references (RFC, PEP, issues) as Sphinx
# prints them, role with explicit title, role, hyperlink
# reference with target, literal, interpreted text, strong, emphasis, substitution.
_MARKUP = [
    (r":rfc:`(\d+)(?:#[^`]*)?`", r"RFC $1"),
    (r":pep:`(\d+)(?:#[^`]*)?`", r"PEP $1"),
    (r":gh:`(\d+)`", r"gh-$1"),
    (r":issue:`(\d+)`", r"bpo-$1"),
    (r"(?::[\w.+-]+)+:`([^`<]*?)\s*<[^`>]*>`", r"$1"),
    (r"(?::[\w.+-]+)+:`~(?:[^`]*\.)?([^`.]+)`", r"$1"),
    (r"(?::[\w.+-]+)+:`[!.]?([^`]*)`", r"$1"),
    (r"`([^`<]*?)\s*<[^`>]*>`__?", r"$1"),
    (r"``([^`]+)``", r"$1"),
    (r"`([^`]+)`_{0,2}", r"$1"),
    (r"\*\*([^*]+)\*\*", r"$1"),
    (r"(^|[\s(\p{Han}])\*([^*\s][^*]*?)\*", r"$1$2"),
    (r"\|([\w -]+)\|", r"$1"),
    (r"\\ ", ""),
    (r"\s*::$", ":"),
]
_EN_ABBREVIATIONS = r"(?:e\.g|i\.e|etc|vs|cf|Mr|Mrs|Dr|No|Fig|approx)\."
_EN_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z\"'(])")
_EN_ABBREV_END = re.compile(_EN_ABBREVIATIONS + r"$|\b[A-Z]\.$")
_ZH_SENTENCE_END = re.compile(r"(?<=[。！？])(?![”’」』）)])")


def unquote(text: str) -> str:
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), text)


def read_po(path: Path) -> list[tuple[str, str]]:
    """(msgid, msgstr) of every translated, current, non-fuzzy entry of one .po file."""
    entries: list[tuple[str, str]] = []
    fields: dict[str, list[str]] = {}
    current = ""
    fuzzy = False

    def flush() -> None:
        msgid, msgstr = "".join(fields.get("msgid", [])), "".join(fields.get("msgstr", []))
        if msgid and msgstr and not fuzzy:
            entries.append((msgid, msgstr))

    for line in path.read_text("utf-8").splitlines() + [""]:
        if not line.strip():
            flush()
            fields, current, fuzzy = {}, "", False
        elif line.startswith("#,"):
            fuzzy = fuzzy or "fuzzy" in line
        elif line.startswith("#"):
            continue                       # comments, references, obsolete (#~) entries
        elif line.startswith('"'):
            if current:
                fields[current].append(unquote(line.strip()[1:-1]))
        else:
            keyword, _, rest = line.partition(" ")
            current = keyword if keyword in ("msgid", "msgstr") else ""
            if current:
                fields[current] = [unquote(rest.strip()[1:-1])]
    return entries


def read_catalogue(po_root: Path) -> pl.DataFrame:
    rows = [(str(path.relative_to(po_root)), msgid, msgstr)
            for path in sorted(po_root.rglob("*.po")) for msgid, msgstr in read_po(path)]
    return pl.DataFrame(rows, schema=["file", "en", "zh"], orient="row")


def strip_markup(column: str) -> pl.Expr:
    expr = pl.col(column).str.replace_all(r"\s+", " ")
    for pattern, replacement in _MARKUP:
        expr = expr.str.replace_all(pattern, replacement)
    return expr.str.strip_chars()


def split_en(text: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in _EN_SENTENCE_END.finditer(text):
        head = text[start:match.start()].rstrip("\"')]")
        if _EN_ABBREV_END.search(head):
            continue
        pieces.append(text[start:match.start()].strip())
        start = match.end()
    pieces.append(text[start:].strip())
    return [p for p in pieces if p]


def split_zh(text: str) -> list[str]:
    return [p.strip() for p in _ZH_SENTENCE_END.split(text) if p.strip()]


def sentence_pairs(en: str, zh: str) -> list[tuple[str, str]]:
    """Sentence pairs when both sides have the same number of sentences, else the paragraph."""
    en_parts, zh_parts = split_en(en), split_zh(zh)
    if len(en_parts) == len(zh_parts) > 1:
        return list(zip(en_parts, zh_parts))
    return [(en, zh)]


def to_pairs(catalogue: pl.DataFrame, min_en_words: int) -> tuple[pl.DataFrame, dict[str, int]]:
    drops = {"entries": catalogue.height}
    frame = catalogue.with_columns(strip_markup("en"), strip_markup("zh"))
    identical = pl.col("en") == pl.col("zh")
    drops["identical"] = frame.filter(identical).height
    frame = frame.filter(~identical)
    no_han = pl.col("zh").str.count_matches(r"\p{Han}") < 2
    drops["no_chinese"] = frame.filter(no_han).height
    frame = frame.filter(~no_han)
    split = [(f, e, z) for f, en, zh in frame.select("file", "en", "zh").iter_rows()
             for e, z in sentence_pairs(en, zh)]
    pairs = pl.DataFrame(split, schema=["file", "en", "zh"], orient="row")
    drops["paragraphs_kept"] = frame.height
    drops["pairs_after_split"] = pairs.height
    short = pl.col("en").str.count_matches(r"[A-Za-z]+") < min_en_words
    drops["short_english"] = pairs.filter(short).height
    pairs = pairs.filter(~short)
    drops["written"] = pairs.height
    return pairs, drops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--po", type=Path, required=True, help="folder of .po files")
    parser.add_argument("--out", type=Path, required=True, help="OUT.zh / OUT.en are written")
    parser.add_argument("--min-en-words", type=int, default=3)
    args = parser.parse_args()
    pairs, drops = to_pairs(read_catalogue(args.po), args.min_en_words)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for side in ("zh", "en"):
        Path(f"{args.out}.{side}").write_text(
            "".join(line.replace("\n", " ") + "\n" for line in pairs[side]), "utf-8")
    print(json.dumps(drops, indent=2))


if __name__ == "__main__":
    main()
