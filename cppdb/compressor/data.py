"""What the compressor reads: a built corpus's kept rows, and new sentences to parse.

Training rows come from a ``cppdb build-compression`` run: ``records.parquet`` rows with
status "kept" carry the sentence's tokens, UPOS, tree and keep-labels.  The run's manifest
names the parser that made those trees; a trained model parses new sentences with the same
parser, so its features mean at prediction what they meant in training.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from cppdb.annotate.ud import TaggedText, tokenize_tag, upos_of
from cppdb.compressor.features import ParsedSentence
from cppdb.errors import BadInputError
from cppdb.registry import load_backend

_TREE_COLUMNS = ("tokens", "upos", "heads", "deprels", "labels")


def corpus_records(corpus: str | Path) -> Path:
    """``records.parquet`` of a build-compression run directory (or the file itself)."""
    path = Path(corpus)
    records = path / "records.parquet" if path.is_dir() else path
    if not records.is_file():
        raise BadInputError(f"{path}: no records.parquet (not a build-compression run)",
                            hint="train on the -o directory of `cppdb build-compression`")
    return records


def read_corpus(corpus: str | Path, max_sentences: int = 0,
                seed: int = 0) -> tuple[list[ParsedSentence], list[tuple[int, ...]]]:
    """The kept rows of a run as parsed sentences and their keep-labels, in line order (a
    seeded sample of ``max_sentences`` rows when that is > 0)."""
    frame = (pl.scan_parquet(corpus_records(corpus))
             .filter((pl.col("status") == "kept") & (pl.col("tokens").list.len() > 0))
             .select("line", *_TREE_COLUMNS).sort("line").collect())
    if max_sentences and frame.height > max_sentences:
        frame = frame.sample(n=max_sentences, seed=seed).sort("line")
    if frame.height == 0:
        raise BadInputError(f"{corpus}: the run kept no compressions to train on",
                            hint="build a larger corpus (see report.json for the rejections)")
    sentences = [ParsedSentence(tuple(t), tuple(u), tuple(h), tuple(d))
                 for t, u, h, d in frame.select(_TREE_COLUMNS[:4]).iter_rows()]
    return sentences, [tuple(labels) for labels in frame["labels"]]


def corpus_parser(corpus: str | Path) -> dict[str, Any]:
    """The parser a run used: ``{"name": ..., "options": {...}}`` from its manifest."""
    manifest = corpus_records(corpus).parent / "manifest.json"
    if not manifest.is_file():
        raise BadInputError(f"{manifest} is missing: cannot tell which parser built the corpus",
                            hint="train on a complete build-compression run directory")
    section = json.loads(manifest.read_text("utf-8"))["config"]["compression"]
    if section["parser"] == "udchinese":
        return {"name": "udchinese", "options": {"tagger": section["udchinese_tagger"]}}
    return {"name": section["parser"], "options": {"stanza_dir": section["stanza_dir"]}}


def _jieba_flag(token: str) -> str | None:
    import jieba.posseg as posseg

    return posseg.dt.word_tag_tab.get(token)


def tag_pretokenized(sentences: Sequence[Sequence[str]]) -> list[TaggedText]:
    """UPOS for sentences that come already cut into words (the paper's gold is jieba's cut
    with another dictionary).  jieba tags the joined text; a given word that jieba cut the
    same way takes jieba's tag in context, else its dictionary tag, else the tag of the jieba
    word holding its last character (Chinese compounds are head-final)."""
    tagged = tokenize_tag(["".join(words) for words in sentences])
    out = []
    for words, jieba_cut in zip(sentences, tagged):
        if tuple(words) == jieba_cut.tokens:
            out.append(jieba_cut)
            continue
        text = "".join(words)
        by_span: dict[tuple[int, int], str] = {}
        owner = [""] * len(text)
        start = 0
        for token, upos in zip(jieba_cut.tokens, jieba_cut.upos):
            start = text.index(token, start)
            by_span[(start, start + len(token))] = upos
            owner[start:start + len(token)] = [upos] * len(token)
            start += len(token)
        upos_list, start = [], 0
        for word in words:
            end = start + len(word)
            flag = _jieba_flag(word)
            upos_list.append(by_span.get((start, end)) or (upos_of(word, flag) if flag else "")
                             or owner[end - 1] or upos_of(word, "x"))
            start = end
        out.append(TaggedText(tuple(words), tuple(upos_list)))
    return out


def parse_tagged(tagged: Sequence[TaggedText], parser: dict[str, Any],
                 batch_size: int = 256) -> list[ParsedSentence]:
    """Dependency trees of tagged sentences by the named ``ud_parser`` backend."""
    empty = [i for i, t in enumerate(tagged) if not t.tokens]
    if empty:
        raise BadInputError(f"cannot compress an empty sentence (input positions {empty[:5]})")
    backend = load_backend("ud_parser", parser["name"], **parser["options"])
    out: list[ParsedSentence] = []
    for start in range(0, len(tagged), batch_size):
        batch = tagged[start:start + batch_size]
        for given, tree in zip(batch, backend.parse(batch)):
            if tree.tokens != given.tokens:
                raise BadInputError(f"the parser changed the tokenisation of {given.text!r}")
            out.append(ParsedSentence(tree.tokens, tuple(tree.pos), tuple(tree.heads),
                                      tuple(tree.deprels)))
    return out
