"""Prepare a real Chinese (headline, first sentence) corpus for ``cppdb build-compression``.

Source: the daily item lists of CCTV's evening news programme 新闻联播 as published on
tv.cctv.com, archived one JSON file per day (``assets/YYYY/YYYYMMDD.json``, the layout of the
``china-data/xwlb`` repository; see docs/corpora.md for provenance and licence).  Each item has
an editor's headline (``video_title``) and the article text (``video_detail.content``, HTML).

Pairs made:

- ``item``: the item's headline (``[视频]`` and a leading 【column】 label removed) and the
  first sentence of its text (up to the first 。！？ and closing quotes, after the
  "央视网消息（新闻联播）：" lead-in is removed);
- ``brief``: the news-brief items (国内/国际联播快讯) hold several short news, each a headline
  paragraph followed by its text; every such (headline paragraph, first sentence of the next
  paragraph) is a pair of its own, and the container item itself is not.

Whole-programme entries (《新闻联播》 20130415, 新闻联播完整版视频) and items without text are
dropped; then exact duplicate pairs, then pairs whose sentence already appeared (the same news
re-run under another headline), the first in date order kept.  Each drop is counted.  Nothing
else is filtered: the builder's own filters (Latin letters, length, overlap...) decide, so each
of their rejections is accounted for in the build report.

Writes (shuffled with ``--seed``, so every head subset mixes all years):

- ``OUT/corpus.jsonl``          ``{"id", "headline", "sentence", "date", "kind"}`` per line
- ``OUT/corpus.<N>.jsonl``      the first N pairs, for each ``--subsets`` size
- ``OUT/stats.json``            counts per drop reason, per kind and per year, length statistics

    python -m devtools.prepare_headlines --raw /work/corpora/headlines-zh/raw/xwlb \\
        --out /work/corpora/headlines-zh --subsets 10000,30000

Never commit the output.
"""
from __future__ import annotations

import argparse
import html
import json
import re
from pathlib import Path
from typing import Any

import polars as pl

# The lead-in every item text starts with ("<site>消息(新闻联播)："), and the optional
# "本台消息，" after it; neither belongs to the first sentence.
_LEAD_IN = re.compile(r"^(?:央视网|中国网络电视台|CCTV\.com|中央电视台)?消息[（(]新闻联播[）)][:：]?"
                      r"\s*(?:本台消息[，,：:])?\s*")
_TAG = re.compile(r"<[^>]+>")
_BREAK = re.compile(r"(?i)</p\s*>|<br\s*/?>|<p[^>]*>|\r?\n")
_SPACE = re.compile(r"[\s\u3000\u00a0\u200b\ufeff]+")
_CJK_OR_PUNCT = r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef“”‘’]"
_SPACE_NEAR_CJK = re.compile(rf"(?<={_CJK_OR_PUNCT}) | (?={_CJK_OR_PUNCT})")
# The brief's first sentence: up to the first full-width 。！？ and any closing quotes/brackets.
_SENTENCE = re.compile(r"^.*?[。！？][”’」』）)]*")
_TITLE_TAGS = re.compile(r"^(?:\[[^\]]*\]\]?)+")
_COLUMN_LABEL = re.compile(r"^【[^】]*】")
_PROGRAMME = re.compile(r"^[\[《]?新闻联播")
_BRIEF = re.compile(r"联播快讯$")
# A news brief's headline paragraph: short, no sentence mark, not a credit line "(视频编辑：…)".
BRIEF_HEADLINE_MAX_CHARS = 40


def paragraphs(content: str) -> list[str]:
    """The text paragraphs of an item's HTML, whitespace-normalised, empty ones dropped."""
    parts = (_TAG.sub("", part) for part in _BREAK.split(content or ""))
    return [p for p in (clean_text(html.unescape(part)) for part in parts) if p]


def clean_text(text: str) -> str:
    """Collapse whitespace; drop it beside Chinese characters and punctuation."""
    text = _SPACE.sub(" ", text).strip()
    return _SPACE_NEAR_CJK.sub("", text)


def clean_headline(title: str) -> str:
    """The editor's headline without [视频]-style tags and a leading 【column】 label.

    Inner spaces stay (one each): in these headlines a space separates two clauses.
    """
    title = _SPACE.sub(" ", html.unescape(title or "")).strip()
    title = _TITLE_TAGS.sub("", title).strip()
    title = _COLUMN_LABEL.sub("", title).strip()
    return title


def first_sentence(paragraph: str) -> str | None:
    match = _SENTENCE.match(paragraph)
    return match.group(0).strip() if match else None


def item_pairs(headline: str, texts: list[str]) -> tuple[list[tuple[str, str]], str | None]:
    """One (headline, first sentence) pair of an ordinary item, or the reason there is none."""
    if texts:
        texts = [_LEAD_IN.sub("", texts[0]).strip(), *texts[1:]]
        texts = [t for t in texts if t]
    if not texts:
        return [], "no_text"
    sentence = first_sentence(texts[0])
    if sentence is None:
        return [], "no_sentence_end"
    return [(headline, sentence)], None


def is_brief_headline(paragraph: str) -> bool:
    return (len(paragraph) <= BRIEF_HEADLINE_MAX_CHARS and not re.search(r"[。！？]", paragraph)
            and paragraph[0] not in "(（" and not _LEAD_IN.match(paragraph))


def brief_pairs(texts: list[str]) -> list[tuple[str, str]]:
    """Every (headline paragraph, first sentence of the next paragraph) of a news brief."""
    pairs = []
    for head, body in zip(texts, texts[1:]):
        if is_brief_headline(head) and not is_brief_headline(body):
            sentence = first_sentence(body)
            if sentence is not None:
                pairs.append((head, sentence))
    return pairs


def day_rows(path: Path, drops: dict[str, int]) -> list[dict[str, Any]]:
    """The pairs of one day file, in programme order, with stable ids."""
    date = path.stem
    data = json.loads(path.read_text("utf-8"))
    rows = []
    for position, video in enumerate(data.get("videoList") or [], start=1):
        drops["items_read"] += 1
        number = video.get("num") or position
        title = clean_headline(video.get("video_title", ""))
        texts = paragraphs((video.get("video_detail") or {}).get("content") or "")
        if _PROGRAMME.match(title) or not title:
            drops["whole_programme_or_untitled"] += 1
            continue
        if _BRIEF.search(title):
            found = brief_pairs(texts)
            drops["brief_containers"] += 1
            if not found:
                drops["brief_without_pairs"] += 1
            rows += [{"id": f"xwlb-{date}-{number:02d}-b{k}", "headline": h, "sentence": s,
                      "date": date, "kind": "brief"} for k, (h, s) in enumerate(found, start=1)]
            continue
        found, reason = item_pairs(title, texts)
        if reason:
            drops[reason] += 1
        rows += [{"id": f"xwlb-{date}-{number:02d}", "headline": h, "sentence": s,
                  "date": date, "kind": "item"} for h, s in found]
    return rows


def read_raw(raw: Path) -> tuple[pl.DataFrame, dict[str, int]]:
    files = sorted(raw.glob("assets/*/*.json"))
    if not files:
        raise SystemExit(f"{raw}: no assets/YYYY/YYYYMMDD.json files (see docs/corpora.md)")
    drops = {"day_files": len(files), "items_read": 0, "whole_programme_or_untitled": 0,
             "brief_containers": 0, "brief_without_pairs": 0, "no_text": 0,
             "no_sentence_end": 0}
    rows = [row for path in files for row in day_rows(path, drops)]
    return pl.DataFrame(rows, schema={"id": pl.Utf8, "headline": pl.Utf8, "sentence": pl.Utf8,
                                      "date": pl.Utf8, "kind": pl.Utf8}), drops


def deduplicate(frame: pl.DataFrame, drops: dict[str, int]) -> pl.DataFrame:
    """Drop exact duplicate pairs, then repeated sentences; the earliest (date, id) stays."""
    frame = frame.sort(["date", "id"])
    before = frame.height
    frame = frame.unique(subset=["headline", "sentence"], keep="first", maintain_order=True)
    drops["duplicate_pair"] = before - frame.height
    before = frame.height
    frame = frame.unique(subset=["sentence"], keep="first", maintain_order=True)
    drops["duplicate_sentence"] = before - frame.height
    return frame


def length_stats(frame: pl.DataFrame) -> dict[str, Any]:
    out = {}
    for col in ("headline", "sentence"):
        chars = frame[col].str.len_chars()
        out[col] = {"mean_chars": round(float(chars.mean()), 1), "median_chars": chars.median(),
                    "p10": chars.quantile(0.1), "p90": chars.quantile(0.9)}
    return out


def write_jsonl(frame: pl.DataFrame, path: Path) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for row in frame.iter_rows(named=True):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    tmp.replace(path)


def prepare(raw: Path, out: Path, *, subsets: list[int], seed: int) -> dict[str, Any]:
    frame, drops = read_raw(raw)
    drops["pairs_made"] = frame.height
    frame = deduplicate(frame, drops)
    frame = frame.sample(fraction=1.0, shuffle=True, seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(frame, out / "corpus.jsonl")
    for size in subsets:
        if size < frame.height:
            write_jsonl(frame.head(size), out / f"corpus.{size}.jsonl")
    stats = {"pairs": frame.height, "counts": drops, "seed": seed,
             "by_kind": dict(frame.group_by("kind").len().sort("kind").iter_rows()),
             "by_year": dict(frame.group_by(pl.col("date").str.slice(0, 4)).len()
                             .sort("date").iter_rows()),
             "dates": [frame["date"].min(), frame["date"].max()],
             "lengths": length_stats(frame), "subsets": [s for s in subsets if s < frame.height]}
    (out / "stats.json").write_text(json.dumps(stats, ensure_ascii=False, indent=2) + "\n",
                                    "utf-8")
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--raw", type=Path, required=True,
                        help="folder holding assets/YYYY/YYYYMMDD.json (the xwlb archive)")
    parser.add_argument("--out", type=Path, required=True, help="output folder (not the repo)")
    parser.add_argument("--subsets", default="10000,30000",
                        help="comma-separated sizes of head subsets to write too")
    parser.add_argument("--seed", type=int, default=13, help="shuffle seed")
    args = parser.parse_args()
    subsets = [int(s) for s in args.subsets.split(",") if s.strip()]
    stats = prepare(args.raw, args.out, subsets=subsets, seed=args.seed)
    print(json.dumps(stats, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
