"""The bundled news pairs with the shipped rules, and bad input: every pair ends kept or
rejected with a coded reason, and what is kept is a sentence cut from S."""
from __future__ import annotations

import json
from pathlib import Path

from cppdb.config import load_config
from cppdb.extractors.compression.builder import build_compression
from cppdb.extractors.compression.sentence import PROBLEMS

NEWS = Path(__file__).resolve().parents[2] / "data" / "news" / "pairs.jsonl"
AWARE = ["compression.overlap_denominator=headline_content",
         "compression.overlap_source=alignment"]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_bundled_news_kept_pairs_are_sentences_cut_from_s(tmp_path):
    # no paraphrase table: the dictionary methods alone (the demo adds its bilingual table)
    result = build_compression(NEWS, tmp_path / "out", load_config(overrides=AWARE),
                               methods=["word", "abbrev", "gloss"])
    kept, rejected = read_jsonl(result.compressions), read_jsonl(result.rejected)
    assert len(kept) + len(rejected) == 50
    assert len(kept) == 5     # pinned: a change in this count changes what users get
    risky = [r for r in rejected if r["rule"] == "unacceptable_risk"]
    assert risky and all(r["detail"].startswith("risk ") for r in risky)
    assert "大雨导致南方多个省份出现" not in {r["compression"] for r in kept}    # object_cut
    by_line = {r["line"]: r["compression"] for r in kept}
    # abbreviations and paraphrased verbs read as the sentence says them
    assert by_line[1] == "西班牙首相周一抵达北京，开始对中国进行访问"   # clause_mark
    assert by_line[7] == "中国和俄罗斯两国海军周三开始举行联合演习"
    for row in kept:
        labels = row["labels"]
        assert row["compression"] == "".join(t for t, k in zip(row["tokens"], labels) if k)
        assert row["upos"][max(i for i, k in enumerate(labels) if k)] not in {"ADP", "CCONJ"}
    codes = [r["detail"].split(":")[0] for r in rejected if r["rule"] == "not_a_sentence"]
    assert codes and set(codes) <= set(PROBLEMS)


def test_bad_input_is_rejected_with_a_code_and_nothing_is_lost(tmp_path):
    huge = "中" * 3_500_000 + "。"     # a line of more than 10 MB
    rows = [
        {"headline": "市政府召开新闻发布会介绍城市交通规划", "sentence": "会议召开。"},  # H >= S
        {"headline": "", "sentence": "市政府今天召开新闻发布会。"},                 # empty H
        {"headline": "城市公园免费开放", "sentence": ""},                           # empty S
        {"headline": "Parks open free", "sentence": "All city parks open for free."},
        {"headline": "巨型文本测试", "sentence": huge},
        {"headline": "城市公园免费开放", "sentence": "本市所有城市公园从下月起全部免费向市民开放。"},
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    result = build_compression(path, tmp_path / "out", load_config(overrides=AWARE),
                               methods=["word", "abbrev", "gloss"])
    kept, rejected = read_jsonl(result.compressions), read_jsonl(result.rejected)
    assert sorted(r["line"] for r in kept + rejected) == [1, 2, 3, 4, 5, 6]
    rules = {r["line"]: r["rule"] for r in rejected}
    assert rules[1] in {"headline_shorter", "length"}
    assert rules[2] == "length" and rules[3] == "full_stop"
    assert rules[4] == "no_latin" and rules[5] == "length"
    assert all(r["detail"] for r in rejected)
    assert result.report["input_pairs"] == 6
