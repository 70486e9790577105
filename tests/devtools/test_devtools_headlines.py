"""devtools/prepare_headlines.py: (headline, first sentence) pairs from news-programme day files
(tiny files in the archive's layout built here; the real corpus lives outside the repo)."""
from __future__ import annotations

import json
from pathlib import Path

from cppdb.extractors.compression.reader import PairReader
from devtools import prepare_headlines

LEAD = "<p>　　央视网消息(新闻联播)：{}</p>\r\n<p>　　第二段。</p>"


def _video(num: int, title: str, content: str) -> dict:
    return {"num": num, "video_title": title, "video_detail": {"content": content}}


def _raw(tmp_path: Path) -> Path:
    day1 = [
        _video(1, "[视频]【新常态 新成效】提质增效 中国经济再出发",
               LEAD.format("我国经济运行开局良好，平稳增长7.7%。国家统计局今天公布。")),
        _video(2, "[视频]国内联播快讯",
               "<p>央视网消息（新闻联播）：</p><p>西安至延安开通动车</p>"
               "<p>西安至延安的动车昨天开通运行。全程325公里。</p>"
               "<p>汉宜铁路正式通车</p><p>全长293.1公里的汉宜铁路昨天正式通车！</p>"
               "<p>(视频编辑：张贝龙)</p>"),
        _video(3, "新闻联播完整版视频 20120702", "<p></P>"),
        _video(4, "[视频]生活服务台", ""),
        _video(5, "[视频]没有句号的条目", "<p>本台消息，这一段没有句末标点</p>"),
    ]
    day2 = [
        _video(1, "[视频]【新常态 新成效】提质增效 中国经济再出发",       # re-run: same pair
               LEAD.format("我国经济运行开局良好，平稳增长7.7%。")),
        _video(2, "[视频]中国经济平稳增长",                              # same sentence, new headline
               LEAD.format("我国经济运行开局良好，平稳增长7.7%。")),
        _video(3, "[视频]法国总统将访华",
               "<p>央视网消息（新闻联播）：应国家主席邀请，法国总统将于4月25日至26日对我国进行国事访问。</p>"),
    ]
    for date, videos in (("20120702", day1), ("20120703", day2)):
        path = tmp_path / "raw" / "assets" / date[:4] / f"{date}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"total": len(videos), "videoList": videos},
                                   ensure_ascii=False), "utf-8")
    return tmp_path / "raw"


def test_pairs_drops_and_dedup_counted(tmp_path):
    stats = prepare_headlines.prepare(_raw(tmp_path), tmp_path / "out", subsets=[2], seed=13)
    counts = stats["counts"]
    assert counts["items_read"] == 8
    assert counts["whole_programme_or_untitled"] == 1 and counts["no_text"] == 1
    assert counts["no_sentence_end"] == 1 and counts["brief_containers"] == 1
    assert counts["pairs_made"] == 6
    assert counts["duplicate_pair"] == 1 and counts["duplicate_sentence"] == 1
    assert stats["pairs"] == 4 and stats["by_kind"] == {"brief": 2, "item": 2}
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "out" / "corpus.jsonl").open())}
    assert rows["xwlb-20120702-01"]["headline"] == "提质增效 中国经济再出发"     # tags, label gone
    assert rows["xwlb-20120702-01"]["sentence"] == "我国经济运行开局良好，平稳增长7.7%。"
    assert rows["xwlb-20120702-02-b1"]["headline"] == "西安至延安开通动车"
    assert rows["xwlb-20120702-02-b1"]["sentence"] == "西安至延安的动车昨天开通运行。"
    assert rows["xwlb-20120702-02-b2"]["sentence"] == "全长293.1公里的汉宜铁路昨天正式通车！"
    assert rows["xwlb-20120703-03"]["sentence"].startswith("应国家主席邀请")
    assert "xwlb-20120703-01" not in rows and "xwlb-20120703-02" not in rows   # earliest kept
    assert len(PairReader(tmp_path / "out" / "corpus.jsonl")) == 4      # the builder reads it
    assert len((tmp_path / "out" / "corpus.2.jsonl").read_text("utf-8").splitlines()) == 2


def test_same_output_twice(tmp_path):
    raw = _raw(tmp_path)
    prepare_headlines.prepare(raw, tmp_path / "a", subsets=[], seed=13)
    prepare_headlines.prepare(raw, tmp_path / "b", subsets=[], seed=13)
    for name in ("corpus.jsonl", "stats.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
