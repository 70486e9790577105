"""Surface repairs (units the parse cuts through are all-or-nothing), the ``verbatim`` keyword
method, and the sentence check reading the tree as the kept words do."""
from __future__ import annotations

import pytest

from cppdb.annotate.ud import TaggedText
from cppdb.errors import ConfigError
from cppdb.extractors.compression.keywords import verbatim_links
from cppdb.extractors.compression.lexicon import cedict_lexicon
from cppdb.extractors.compression.sentence import Tree, contracted, sentence_problem
from cppdb.extractors.compression.surface import (SurfaceRules, bracket_units, name_units,
                                                  number_units, only_a_title, repair_units,
                                                  subject_dropped)

CONTENT = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "ADV"})


def tagged(spec: str) -> TaggedText:
    pairs = [item.rsplit("/", 1) for item in spec.split()]
    return TaggedText(tuple(t for t, _ in pairs), tuple(u for _, u in pairs))


# 国家主席 习近平 18 日晚 应约 同 美国 总统 拜登 视频 通话 。
CALL = tagged("国家/NOUN 主席/NOUN 习近平/PROPN 18/NUM 日晚/NOUN 应约/VERB 同/ADP 美国/PROPN "
              "总统/NOUN 拜登/PROPN 视频/NOUN 通话/NOUN 。/PUNCT")
# 厄瓜多尔 国民 代表大会 主席 科尔德 罗 举行会谈 。 (jieba cuts the name 科尔德罗 in two)
TALKS = tagged("厄瓜多尔/PROPN 国民/NOUN 代表大会/NOUN 主席/NOUN 科尔德/PROPN 罗/PROPN "
               "举行会谈/VERB 。/PUNCT")
# 全国 职业 教育 活动周 今天 在 天津 启动 。
LAUNCH = tagged("全国/NOUN 职业/NOUN 教育/NOUN 活动周/NOUN 今天/NOUN 在/ADP 天津/PROPN "
                "启动/VERB 。/PUNCT")
# 中央军委 印发 《 关于 深入 推进 整训 的 决定 》 。
TITLE = tagged("中央军委/PROPN 印发/VERB 《/PUNCT 关于/ADP 深入/ADV 推进/VERB 整训/NOUN "
               "的/PART 决定/NOUN 》/PUNCT 。/PUNCT")


def text(t: TaggedText, kept) -> str:
    return "".join(t.tokens[i] for i in sorted(kept))


def repair(t: TaggedText, kept, keywords, rules=SurfaceRules()):
    new, added = repair_units(t.tokens, t.upos, kept, keywords, rules)
    return text(t, new), {rule for _, rule in added}


def test_units_found_from_tokens() -> None:
    assert number_units(CALL.tokens, CALL.upos) == [range(3, 5)]
    ordinal = tagged("第/PART 54/NUM 届/NOUN 年会/NOUN 开幕/VERB 。/PUNCT")
    assert number_units(ordinal.tokens, ordinal.upos) == [range(0, 3)]
    fused = tagged("第五十五次/NUM 主席/NOUN 会议/NOUN 十分/NUM 重要/ADJ")
    assert number_units(fused.tokens, fused.upos) == [range(0, 1), range(3, 4)]
    clock = tagged("习近平/PROPN 当地/NOUN 时间/NOUN 28/NUM 日/NUM 出席/VERB 峰会/NOUN 。/PUNCT")
    assert number_units(clock.tokens, clock.upos) == [range(1, 5)]    # 当地时间 goes with 28 日
    assert repair(clock, {0, 1, 5, 6}, [0, 5, 6]) == ("习近平出席峰会", set())
    assert name_units(TALKS.tokens, TALKS.upos) == [range(4, 6)]
    pieces = tagged("意大利/PROPN 总统/NOUN 马/NOUN 塔雷/PROPN 拉/VERB 一道/NUM 会见/NOUN")
    assert name_units(pieces.tokens, pieces.upos) == [range(2, 5)]
    assert bracket_units(TITLE.tokens) == [range(2, 10)]


def test_a_number_cut_from_its_unit_goes_unless_the_headline_names_it() -> None:
    kept = {2, 3, 5, 6, 7, 8, 10, 11}             # 习近平 18 应约 同 美国 总统 视频 通话
    assert repair(CALL, kept, [2, 5, 8, 11]) == ("习近平应约同美国总统视频通话", set())
    assert repair(CALL, kept, [2, 3, 5, 8, 11]) == ("习近平18日晚应约同美国总统视频通话",
                                                   {"number"})


def test_half_a_name_is_never_kept() -> None:
    kept = {0, 1, 2, 3, 5, 6}                     # ... 主席 罗 举行会谈
    assert repair(TALKS, kept, [0, 1, 2, 3, 6])[0] == "厄瓜多尔国民代表大会主席举行会谈"
    assert repair(TALKS, kept, [0, 5, 6]) == ("厄瓜多尔国民代表大会主席科尔德罗举行会谈",
                                              {"name"})


def test_a_preposition_without_its_object_goes() -> None:
    kept = {0, 1, 2, 3, 5, 7}                     # ... 活动周 在 启动
    assert repair(LAUNCH, kept, [0, 1, 2, 3, 7])[0] == "全国职业教育活动周启动"
    assert repair(LAUNCH, kept | {6}, [0, 3, 7])[0] == "全国职业教育活动周在天津启动"
    # 在 市区 的 一场 车祸 中 丧生: the object 车祸 lies beyond a dropped modifier
    crash = tagged("老人/NOUN 在/ADP 市区/NOUN 的/PART 一场/NUM 车祸/NOUN 中/NOUN 丧生/VERB")
    assert repair(crash, {0, 1, 4, 5, 6, 7}, [0, 5, 7])[0] == "老人在一场车祸中丧生"
    # 在 [北京] 会见: jieba's dictionary calls 会见 a noun, CC-CEDICT "to meet with"
    meet = tagged("王岐山/PROPN 在/ADP 北京/PROPN 会见/NOUN 成员/NOUN")
    assert repair(meet, {0, 1, 3, 4}, [0, 3, 4])[0] == "王岐山在会见成员"
    fixed, _ = repair_units(meet.tokens, meet.upos, {0, 1, 3, 4}, [0, 3, 4], SurfaceRules(),
                            is_verb=cedict_lexicon().is_verb)
    assert text(meet, fixed) == "王岐山会见成员"
    only_names = SurfaceRules(("name",))
    assert repair(LAUNCH, kept, [0, 3, 7], only_names)[0] == "全国职业教育活动周在启动"


def test_a_title_is_kept_whole_with_its_marks() -> None:
    inside = {0, 1, 3, 4, 5, 6, 7, 8}
    assert repair(TITLE, inside, [0, 1, 8]) == ("中央军委印发《关于深入推进整训的决定》",
                                                {"brackets"})
    assert repair(TITLE, {0, 1, 5, 8}, [0, 1, 8])[0] == "中央军委印发《关于深入推进整训的决定》"
    assert repair(TITLE, {0, 1, 5, 8}, [0, 1])[0] == "中央军委印发"


def test_unknown_surface_rule_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="surface rule"):
        SurfaceRules(("number", "spelling"))


def test_verbatim_links_numbers_and_determiners_not_one_character_particles() -> None:
    headline = tagged("我国/PRON 首个/NUM 主机/NOUN 安全/ADJ 方案/NOUN 推出/VERB")
    sentence = tagged("我国/PRON 首个/NUM 自主/ADJ 技术/NOUN 的/PART 主机/NOUN 安全/ADJ "
                      "方案/NOUN 今天/NOUN 推出/VERB 。/PUNCT")
    links = verbatim_links(headline, sentence, set(), CONTENT)
    assert [(l.h_start, l.s_start, l.method) for l in links] == [(0, 0, "verbatim"),
                                                                  (1, 1, "verbatim")]
    particle = tagged("会议/NOUN 在/ADP 京/PROPN 举行/VERB")
    in_sentence = tagged("会议/NOUN 今天/NOUN 在/ADP 北京/PROPN 举行/VERB")
    assert verbatim_links(particle, in_sentence, set(), CONTENT) == []
    assert verbatim_links(headline, sentence, {0, 1}, CONTENT) == []


def test_the_check_reads_the_tree_with_dropped_words_contracted() -> None:
    # 座谈会 18 日 在 京 召开 — 在 (head of 日 in a weak parse) was dropped with 京
    t = Tree(["座谈会", "18", "日", "在", "京", "召开"], ["NOUN", "NUM", "NOUN", "ADP", "PROPN",
                                                     "VERB"],
             [5, 2, 3, 5, 3, -1], ["nsubj", "nummod", "obl", "case", "obl", "root"])
    kept = [0, 1, 2, 5]
    assert contracted(t, kept).heads[2] == 5
    assert sentence_problem(t, kept, [0, 5]) is None
    # a kept top whose head was dropped still says what it modified
    assert sentence_problem(t, [1, 2], [2])[0] == "no_predicate"


def test_a_preposition_comes_back_with_its_kept_object() -> None:
    # 报告会 今天 在 南京大学 举行 — the object kept, its 在 dropped
    venue = tagged("报告会/NOUN 今天/NOUN 在/ADP 南京大学/PROPN 举行/VERB")
    assert repair(venue, {0, 1, 3, 4}, [0, 4]) == ("报告会今天在南京大学举行", {"preposition"})


def test_conjunctions_and_future_markers_between_kept_words() -> None:
    attend = tagged("李强/PROPN 将/AUX 出席/VERB 开幕式/NOUN 并/CCONJ 发表/VERB 讲话/NOUN")
    assert repair(attend, {0, 2, 3, 5, 6}, [0, 2, 3, 5]) == ("李强将出席开幕式并发表讲话",
                                                             {"conjunction", "future"})
    # 将 before a noun marks the object (把), not the future
    marker = tagged("将/AUX 改革/NOUN 进行/VERB 到底/ADV")
    assert repair(marker, {1, 2, 3}, [1, 2])[0] == "改革进行到底"
    # a conjunction with only one kept side stays dropped
    assert repair(attend, {0, 2, 3}, [0, 2])[0] == "李强将出席开幕式"


def test_a_compression_that_is_only_a_title_is_rejected_and_a_copula_keeps_its_subject() -> None:
    paper = tagged("人民日报/PROPN 发表/VERB 评论员/NOUN 文章/NOUN ，/PUNCT 题目/NOUN 是/AUX "
                   "《/PUNCT 美国/PROPN 贸易/NOUN 霸凌/VERB 贻害/VERB 全球/NOUN 》/PUNCT 。/PUNCT")
    title = set(range(7, 14))
    assert only_a_title(paper.tokens, paper.upos, title)
    assert only_a_title(paper.tokens, paper.upos, title | {6})
    assert not only_a_title(paper.tokens, paper.upos, title | {0, 1, 2, 3, 6})
    assert not only_a_title(CALL.tokens, CALL.upos, {2, 5})
    published = tagged("《/PUNCT 政策/NOUN 选编/VERB 》/PUNCT 出版发行/VERB")
    assert not only_a_title(published.tokens, published.upos, {0, 1, 2, 3, 4})
    assert only_a_title(TITLE.tokens, TITLE.upos, set(range(1, 10)))
    assert repair(paper, title | {0, 1, 2, 3, 6}, [0, 3, 8, 9]) == (
        "人民日报发表评论员文章，题目是《美国贸易霸凌贻害全球》", {"copula_noun", "clause_mark"})


def test_a_title_between_a_kept_word_and_a_kept_name_stays() -> None:
    chair = tagged("全国政协/PROPN 主席/NOUN 汪洋/PROPN 会见/NOUN 议长/NOUN")
    assert repair(chair, {0, 2, 3, 4}, [2, 3, 4]) == ("全国政协主席汪洋会见议长", {"apposition"})


def test_no_word_inside_a_kept_title_is_dropped() -> None:
    # 在 before a verb would go as a preposition without its object, but not inside a title
    paper = tagged("发表/VERB 文章/NOUN 《/PUNCT 在/ADP 发扬/VERB 精神/NOUN 中/NOUN 前进/VERB "
                   "》/PUNCT")
    assert repair(paper, set(range(9)), [0, 1, 4, 5])[0] == "发表文章《在发扬精神中前进》"
    assert repair(paper, {0, 1, 3, 4}, [0, 1])[0] == "发表文章"   # a title H does not name


def test_a_compression_that_cut_its_actor_is_caught() -> None:
    def is_time(word: str) -> bool:
        return word in {"今天", "近日"}
    paper = tagged("本台/NOUN 今天/NOUN 播发/VERB 快评/NOUN 《/PUNCT 奋力/ADV 谱写/VERB "
                   "篇章/NOUN 》/PUNCT 。/PUNCT")
    assert subject_dropped(paper.tokens, paper.upos, range(2, 9), is_time)
    assert not subject_dropped(paper.tokens, paper.upos, range(0, 9), is_time)
    assert not subject_dropped(paper.tokens, paper.upos, range(1, 9), lambda word: False)
    assert not subject_dropped(paper.tokens, paper.upos, range(4, 9), is_time)   # a title
    deputy = tagged("国家/NOUN 副/ADJ 主席/NOUN 韩正/PROPN 会见/NOUN 代表/NOUN")
    assert not subject_dropped(deputy.tokens, deputy.upos, range(1, 6), is_time)
    # a clause mark ends the search: the nominal before it belongs to another clause
    later = tagged("会议/NOUN 闭幕/VERB ，/PUNCT 发布/VERB 公报/NOUN")
    assert not subject_dropped(later.tokens, later.upos, [3, 4], is_time)


def test_title_prefixes_stay_with_their_title() -> None:
    deputy = tagged("国家/NOUN 副/ADJ 主席/NOUN 韩正/PROPN 会见/NOUN 代表/NOUN")
    assert repair(deputy, {2, 3, 4, 5}, [3, 4, 5]) == ("副主席韩正会见代表", {"title_prefix"})


def test_a_gap_between_kept_words_keeps_one_of_its_marks_the_strongest():
    text_ = tagged("今天/NOUN （/PUNCT 11月/NUM 28日/NUM ）/PUNCT ，/PUNCT 论坛/NOUN 在/ADP "
                   "北京/PROPN 举行/VERB ，/PUNCT 甘肃/PROPN 、/PUNCT 青海/PROPN 、/PUNCT "
                   "宁夏/PROPN 代表/NOUN 出席/VERB 。/PUNCT")
    only = SurfaceRules(("clause_mark",))
    assert repair(text_, {0, 6, 7, 8, 9}, [0, 6], only) == ("今天，论坛在北京举行", {"clause_mark"})
    # one mark per gap, the strongest: ， where the gap holds ， and 、
    assert repair(text_, {6, 9, 11, 15, 16, 17}, [6], only) == (
        "论坛举行，甘肃、宁夏代表出席", {"clause_mark"})
    assert repair(text_, {6, 7, 8, 9}, [6], only) == ("论坛在北京举行", set())   # no gap
