"""Turn three published layouts of zh–en text into ``NAME.zh`` / ``NAME.en`` line-aligned
files for ``devtools/prepare_corpus.py`` (docs/corpora.md, ``long-zhen``).  Kept OUTSIDE the
repository like every corpus.

- ``mteval``: two mteval XML files of one test set (IWSLT's ``*.zh-en.zh.xml`` and
  ``*.en-zh.en.xml`` of the same talks), paired by ``(docid, seg id)``; a segment missing
  from either side is dropped (counted)
- ``jsonl``: one ``{"zh": …, "en": …}`` object per line (the UN v1.0 dev/test sets as a
  course repository keeps them)
- ``bible``: two folders of ``NN.js`` books (``var book = {…, "chapters": {C: {V: text}}}``,
  as ``bible-tools`` publishes them), paired by (book, chapter, verse); verse-number markup
  goes (the spaces that one Chinese edition puts between every character go in
  ``prepare_corpus``); an empty or missing verse on either side (merged verses) is dropped
  (counted)

    python -m devtools.raw_sources mteval ZH.xml EN.xml --out RAW/ted-tst2016
    python -m devtools.raw_sources jsonl formal_zh_en.jsonl --out RAW/un-devtest
    python -m devtools.raw_sources bible CUVS_BOOKS/ KJV_BOOKS/ --out RAW/bible-cuvs-kjv
"""
from __future__ import annotations

import argparse
import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

_VERSE_MARKUP = re.compile(r"<[^>]*>\s*\d*\s*</[^>]*>|<[^>]*>")
_BOOK_OBJECT = re.compile(r"=\s*(\{.*\})\s*;", re.DOTALL)     # module.exports may follow

Pairs = list[tuple[str, str]]


def mteval_segments(path: Path) -> dict[tuple[str, str], str]:
    """(docid, seg id) → segment text of one mteval XML file."""
    root = ElementTree.parse(path).getroot()
    return {(doc.get("docid", ""), seg.get("id", "")): " ".join((seg.text or "").split())
            for doc in root.iter("doc") for seg in doc.iter("seg")}


def mteval_pairs(zh_xml: Path, en_xml: Path) -> tuple[Pairs, dict[str, int]]:
    zh, en = mteval_segments(zh_xml), mteval_segments(en_xml)
    keys = sorted(zh.keys() & en.keys(), key=lambda k: (int(k[0]), int(k[1])))
    counts = {"zh_segments": len(zh), "en_segments": len(en),
              "unpaired": len(zh.keys() ^ en.keys())}
    return [(zh[k], en[k]) for k in keys], counts


def jsonl_pairs(path: Path) -> tuple[Pairs, dict[str, int]]:
    pairs = []
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            if "zh" not in row or "en" not in row:
                raise SystemExit(f"{path}:{number}: an object without 'zh' and 'en'")
            pairs.append((" ".join(row["zh"].split()), " ".join(row["en"].split())))
    return pairs, {"lines": len(pairs)}


def verse_text(raw: str) -> str:
    return " ".join(_VERSE_MARKUP.sub(" ", raw).split())


def bible_book(path: Path) -> dict[tuple[int, int], str]:
    match = _BOOK_OBJECT.search(path.read_text("utf-8"))
    if not match:
        raise SystemExit(f"{path}: no 'var book = {{…}}' object")
    chapters = json.loads(match.group(1))["chapters"]
    return {(int(c), int(v)): verse_text(text)
            for c, verses in chapters.items() for v, text in verses.items()}


def bible_pairs(zh_books: Path, en_books: Path) -> tuple[Pairs, dict[str, int]]:
    pairs: Pairs = []
    drops = {"books": 0, "zh_verses": 0, "en_verses": 0, "unpaired_or_empty": 0}
    for zh_path in sorted(zh_books.glob("*.js")):
        en_path = en_books / zh_path.name
        if not en_path.is_file():
            raise SystemExit(f"{zh_path.name}: no such book in {en_books}")
        zh, en = bible_book(zh_path), bible_book(en_path)
        drops["books"] += 1
        drops["zh_verses"] += len(zh)
        drops["en_verses"] += len(en)
        for key in sorted(zh.keys() | en.keys()):
            if zh.get(key) and en.get(key):
                pairs.append((zh[key], en[key]))
            else:
                drops["unpaired_or_empty"] += 1
    return pairs, drops


def write(pairs: Pairs, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    for index, side in enumerate(("zh", "en")):
        Path(f"{out}.{side}").write_text("".join(p[index] + "\n" for p in pairs), "utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="layout", required=True)
    for name, inputs in (("mteval", ("zh_xml", "en_xml")), ("jsonl", ("path",)),
                         ("bible", ("zh_books", "en_books"))):
        command = sub.add_parser(name)
        for argument in inputs:
            command.add_argument(argument, type=Path)
        command.add_argument("--out", type=Path, required=True,
                             help="OUT.zh / OUT.en are written")
    args = parser.parse_args()
    if args.layout == "mteval":
        pairs, counts = mteval_pairs(args.zh_xml, args.en_xml)
    elif args.layout == "jsonl":
        pairs, counts = jsonl_pairs(args.path)
    else:
        pairs, counts = bible_pairs(args.zh_books, args.en_books)
    write(pairs, args.out)
    print(json.dumps({**counts, "written": len(pairs)}, indent=2))


if __name__ == "__main__":
    main()
