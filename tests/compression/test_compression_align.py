"""Keyword alignment: word match, abbreviation, paraphrase-aware, BERT-align, the cascade."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cppdb.errors import BadInputError, ConfigError, ModelNotFoundError
from cppdb.extractors.compression.keywords import (AlignSettings, BertAligner, Tokens,
                                                   abbreviation_links, align_batch,
                                                   paraphrase_links, word_links)
from cppdb.extractors.compression.paraphrase_table import load_paraphrase_table

CONTENT = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "ADV"})
NOUNS = frozenset({"NOUN", "PROPN"})


def toks(text: str) -> Tokens:
    """'word/UPOS word/UPOS ...' -> Tokens."""
    items = [p.rsplit("/", 1) for p in text.split()]
    return Tokens(tuple(w for w, _ in items), tuple(u for _, u in items))


SPAIN_H = toks("西/PROPN 首相/NOUN 访华/VERB")
SPAIN_S = toks("西班牙/PROPN 首相/NOUN 周一/NOUN 抵达/VERB 北京/PROPN 。/PUNCT")
LEFT_H = toks("最后/ADJ 一批/NUM 留守/VERB 人员/NOUN 撤离/VERB 灾区/NOUN")
LEFT_S = toks("灾区/NOUN 剩余/VERB 的/PART 工作/NOUN 人员/NOUN 全部/ADV 撤离/VERB 。/PUNCT")


def write_table(path: Path, rows: list[str]) -> Path:
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_word_match_links_identical_content_words_only():
    links = word_links(SPAIN_H, SPAIN_S, set(), CONTENT)
    assert [(l.h_start, l.s_start, l.method) for l in links] == [(1, 1, "word")]
    # function words of the headline are never keywords by word match
    h = toks("北京/PROPN 的/PART 首相/NOUN")
    assert [l.h_start for l in word_links(h, SPAIN_S, set(), CONTENT)] == [0, 2]


def test_word_match_is_count_preserving():
    h = toks("北京/PROPN 北京/PROPN")
    s = toks("北京/PROPN 和/CCONJ 北京/PROPN")
    assert [l.s_start for l in word_links(h, s, set(), CONTENT)] == [0, 2]


@pytest.mark.parametrize("headline, sentence, expected", [
    ("西/PROPN", "西班牙/PROPN 首相/NOUN", [(0, 1)]),                       # 西 -> 西班牙
    ("北大/PROPN", "北京大学/PROPN 昨天/NOUN", [(0, 1)]),                    # 北大 -> 北京大学
    ("中/PROPN 美/PROPN", "中国/PROPN 和/CCONJ 美国/PROPN", [(0, 1), (2, 3)]),
    ("高铁/NOUN", "高速/NOUN 铁路/NOUN 通车/VERB", [(0, 2)]),                # across two nouns
    ("西/PROPN", "巴西/PROPN 总统/NOUN", []),                                # not anchored: no
    ("西/PROPN", "访问/VERB 西班牙/VERB", []),                               # not a noun run
])
def test_abbreviation_match(headline, sentence, expected):
    links = abbreviation_links(toks(headline), toks(sentence), set(), CONTENT, NOUNS)
    assert [(l.s_start, l.s_end) for l in links] == expected
    assert all(l.method == "abbrev" for l in links)


def test_abbreviation_is_found_where_word_match_fails():
    assert not [l for l in word_links(SPAIN_H, SPAIN_S, set(), CONTENT) if l.h_start == 0]
    links = abbreviation_links(SPAIN_H, SPAIN_S, set(), CONTENT, NOUNS)
    assert [(l.h_start, l.s_start, l.s_end) for l in links] == [(0, 0, 1)]


def test_paraphrase_case_that_word_matching_misses(tmp_path):
    table = load_paraphrase_table(write_table(tmp_path / "t.tsv", ["留守\t剩余\t0.9"]))
    words = {l.h_start for l in word_links(LEFT_H, LEFT_S, set(), CONTENT)}
    assert 2 not in words                       # 留守 is not in the sentence
    links = paraphrase_links(LEFT_H, LEFT_S, words, table, CONTENT, 4)
    assert [(l.h_start, l.s_start, l.method) for l in links] == [(2, 1, "paraphrase")]
    assert links[0].score == pytest.approx(0.9)


def test_paraphrase_matches_characters_across_segmentations(tmp_path):
    # the table was segmented differently ("留 守 人员" / "剩余 人员"): characters are compared
    table = load_paraphrase_table(write_table(tmp_path / "t.tsv", ["留 守 人员\t剩余 工作 人员"]))
    h = toks("留守/VERB 人员/NOUN 撤离/VERB")
    s = toks("剩余/VERB 工作人员/NOUN 撤离/VERB")
    links = paraphrase_links(h, s, set(), table, CONTENT, 4)
    assert [(l.h_start, l.h_end, l.s_start, l.s_end) for l in links] == [(0, 2, 0, 2)]


def test_paraphrase_table_is_symmetric_and_prefers_longer_spans(tmp_path):
    table = load_paraphrase_table(write_table(
        tmp_path / "t.tsv", ["source\ttarget", "剩余\t留守", "留守人员\t剩余的工作人员"]))
    links = paraphrase_links(LEFT_H, LEFT_S, set(), table, CONTENT, 4)
    assert [(l.h_start, l.h_end, l.s_start, l.s_end) for l in links] == [(2, 4, 1, 5)]


def test_paraphrase_table_from_run_dir_uses_ranked_scores(tmp_path):
    run = tmp_path / "run"
    (run / "ranking").mkdir(parents=True)
    pl.DataFrame({"source": ["留守", "逝世", "抵京"], "target": ["剩余", "去世", "抵达 北京"],
                  "type": ["phrase"] * 3, "score": [0.9, 0.2, 0.6]}) \
        .write_parquet(run / "ranking" / "ranked_pairs.parquet")   # where `cppdb rank` writes
    scored = load_paraphrase_table(run, min_score=0.5)
    assert scored.scored and scored.lookup("留守") == (("剩余", 0.9),)
    assert scored.lookup("逝世") == ()                          # below the threshold
    assert scored.lookup("抵达北京") == (("抵京", 0.6),)
    top = load_paraphrase_table(run, top_percent=34)
    assert set(top.index) == {"留守", "剩余"}


def test_paraphrase_table_from_unranked_run_dir_with_patterns(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    pl.DataFrame({"source": ["留守"], "target": ["剩余"]}).write_parquet(run / "phrase_pairs.parquet")
    pl.DataFrame({"source": ["[NP1] 出生 于 [NP2]", "[NP1] 在 [NP2] 工作"],
                  "target": ["[NP1] 生 于 [NP2]", "[NP1] 就职 于 [NP2]"]}) \
        .write_parquet(run / "pattern_pairs.parquet")
    table = load_paraphrase_table(run)
    assert not table.scored
    assert table.lookup("出生于") == (("生于", 1.0),)
    assert table.lookup("在") == ()            # two lexical runs: not usable as a phrase


def test_paraphrase_table_errors(tmp_path):
    with pytest.raises(BadInputError, match="does not exist"):
        load_paraphrase_table(tmp_path / "missing.tsv")
    with pytest.raises(BadInputError, match=r"t.tsv:1: expected source<TAB>target"):
        load_paraphrase_table(write_table(tmp_path / "t.tsv", ["只有一列"]))
    (tmp_path / "empty_run").mkdir()
    with pytest.raises(BadInputError, match="extract-bilingual"):
        load_paraphrase_table(tmp_path / "empty_run")


def test_cascade_attributes_each_headline_word_to_the_first_method(tmp_path):
    table = load_paraphrase_table(write_table(tmp_path / "t.tsv", ["留守\t剩余", "撤离\t全部"]))
    settings = AlignSettings(("word", "abbrev", "paraphrase"), CONTENT, NOUNS)
    links = align_batch([LEFT_H], [LEFT_S], settings, table)[0]
    by_h = {l.h_start: l.method for l in links}
    assert by_h[4] == "word"                  # 撤离 matched by word, not by the paraphrase row
    assert by_h[2] == "paraphrase"
    with pytest.raises(ConfigError, match="needs a paraphrase table"):
        align_batch([LEFT_H], [LEFT_S], settings, None)
    with pytest.raises(ConfigError, match="unknown alignment method"):
        AlignSettings(("word", "lemma"), CONTENT, NOUNS)


def test_bert_align_rowwise_max_cosine(tiny_bert_dir):
    aligner = BertAligner(tiny_bert_dir, batch_size=2)
    h = toks("西班牙/PROPN 首相/NOUN 访问/VERB")
    s = toks("首相/NOUN 访问/VERB 西班牙/PROPN 。/PUNCT")
    links = aligner.links([h], [s], [set()], CONTENT)[0]
    assert [l.h_start for l in links] == [0, 1, 2] and all(l.method == "bert" for l in links)
    # recompute the paper's rule by hand: mean char vectors, cosine, argmax per headline row
    hv, sv = aligner.word_vectors([h.tokens, s.tokens])
    sv = sv[:3]                                   # punctuation is never a candidate
    cos = (hv / np.linalg.norm(hv, axis=1, keepdims=True)) @ \
          (sv / np.linalg.norm(sv, axis=1, keepdims=True)).T
    assert [l.s_start for l in links] == list(cos.argmax(axis=1))
    assert hv.shape == (3, 32)
    # a covered headline word is left alone
    assert [l.h_start for l in aligner.links([h], [s], [{0, 1}], CONTENT)[0]] == [2]


def test_bert_align_needs_a_local_model(tmp_path):
    with pytest.raises(ConfigError, match="BERT directory"):
        BertAligner("")
    with pytest.raises(ModelNotFoundError, match="config.json"):
        BertAligner(tmp_path).check()


def test_paraphrase_entry_inside_a_longer_headline_token(tmp_path):
    # jieba: H 留守人员 (one token); the table has 留守 -> 剩余
    table = load_paraphrase_table(write_table(tmp_path / "t.tsv", ["留守\t剩余", "会\t能"]))
    h = toks("留守人员/NOUN 撤离/VERB 会议/NOUN")
    s = toks("剩余/VERB 的/PART 人员/NOUN 撤离/VERB 能/AUX")
    links = paraphrase_links(h, s, set(), table, CONTENT, 4)
    assert [(l.h_start, l.s_start, l.matched) for l in links] == [(0, 0, ("留守", "剩余"))]
    # a one-character entry (会) never matches inside a token (会议)


def test_two_entries_inside_one_headline_token(tmp_path):
    table = load_paraphrase_table(write_table(tmp_path / "t.tsv", ["物价\t消费 价格",
                                                                   "上涨\t上升"]))
    h = toks("十月/NOUN 物价上涨/NOUN")
    s = toks("十月份/NOUN 居民/NOUN 消费/VERB 价格/NOUN 同比/ADV 上升/VERB 。/PUNCT")
    links = paraphrase_links(h, s, set(), table, CONTENT, 4)
    assert [(l.h_start, l.s_start, l.s_end, l.matched) for l in links] == [
        (1, 2, 4, ("物价", "消费价格")), (1, 5, 6, ("上涨", "上升"))]
