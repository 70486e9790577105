"""What makes a compression a sentence: each completion rule and each rejection code on
hand-built UD trees (``word/UPOS:head:deprel``, 1-based heads, 0 = root, as in CoNLL-U)."""
from __future__ import annotations

import pytest

from cppdb.errors import ConfigError
from cppdb.extractors.compression.dtt import DTTRules, load_negation_words
from cppdb.extractors.compression.sentence import (PROBLEMS, SentenceRules, Tree,
                                                   complete_sentence, sentence_problem)

DTT = DTTRules(negation_words=load_negation_words())


def tree(spec: str) -> Tree:
    tokens, upos, heads, deprels = [], [], [], []
    for item in spec.split():
        word_pos, head, rel = item.split(":", 2)
        word, pos = word_pos.split("/")
        tokens.append(word)
        upos.append(pos)
        heads.append(int(head) - 1)
        deprels.append(rel)
    return Tree(tokens, upos, heads, deprels)


def words(t: Tree, kept) -> str:
    return "".join(t.tokens[i] for i in sorted(kept))


def complete(t: Tree, keywords, rules=SentenceRules(), dtt=DTT):
    kept, added = complete_sentence(t, keywords, rules, dtt)
    return words(t, kept), {a.rule for a in added}


# 大会 今天 在 北京 举行 。 — the oblique 北京 needs its preposition 在
MEETING = tree("大会/NOUN:5:nsubj 今天/NOUN:5:obl:tmod 在/ADP:4:case 北京/PROPN:5:obl "
               "举行/VERB:0:root 。/PUNCT:5:punct")
# 中国 和 俄罗斯 海军 举行 演习 — a coordinated argument
NAVIES = tree("中国/PROPN:4:nmod 和/CCONJ:3:cc 俄罗斯/PROPN:1:conj 海军/NOUN:5:nsubj "
              "举行/VERB:0:root 演习/NOUN:5:obj")
# 从 下月 起 ， 地铁 将 延长 运营 时间 — 从…起 around 下月; the object of 延长
SUBWAY = tree("从/ADP:2:case 下月/NOUN:7:obl 起/ADP:2:case ，/PUNCT:7:punct 地铁/NOUN:7:nsubj "
              "将/AUX:7:aux 延长/VERB:0:root 运营/NOUN:9:compound 时间/NOUN:7:obj")
# 被困 的 登山者 今天 被 救出 — the subject's predicate lies above the keywords
CLIMBERS = tree("被困/VERB:3:acl:relcl 的/PART:1:mark:relcl 登山者/NOUN:6:nsubj:pass "
                "今天/NOUN:6:obl:tmod 被/AUX:6:aux:pass 救出/VERB:0:root")


def test_case_keeps_the_preposition_of_a_kept_oblique():
    text, rules = complete(MEETING, [0, 3, 4])
    assert text == "大会在北京举行" and "case" in rules


def test_case_keeps_both_halves_of_a_circumposition():
    text, _ = complete(SUBWAY, [1, 4, 6, 7, 8])
    assert text == "从下月起地铁将延长运营时间"


def test_coordination_keeps_the_other_conjunct_and_its_conjunction():
    text, rules = complete(NAVIES, [0, 4, 5])
    assert text == "中国和俄罗斯海军举行演习" and "coordination" in rules


def test_object_rule_keeps_the_object_of_a_kept_verb():
    text, rules = complete(NAVIES, [3, 4])
    assert text.endswith("举行演习") and "object" in rules


def test_object_across_a_clause_mark_is_not_taken():
    # 延长 ， 时间 : an "object" on the other side of a comma is a parse error, not an object
    t = tree("地铁/NOUN:2:nsubj 延长/VERB:0:root ，/PUNCT:2:punct 时间/NOUN:2:obj")
    text, rules = complete(t, [0, 1])
    assert text == "地铁延长" and "object" not in rules


def test_predicate_rule_climbs_from_a_subject_to_its_verb():
    text, rules = complete(CLIMBERS, [0, 2])
    assert text == "被困的登山者被救出" and "predicate" in rules   # 被 by the DTT (aux:pass)


def test_unit_rule_keeps_the_parts_of_a_name_not_a_flat_vv():
    t = tree("李/PROPN:3:nsubj 建华/PROPN:1:flat:name 去世/VERB:0:root")
    text, rules = complete(t, [0, 2])
    assert text == "李建华去世" and rules == {"unit"}
    # udchinese's flat:vv joins a time word and the 在 of a dropped place: not a unit
    t = tree("会议/NOUN:2:nsubj 今天/VERB:0:root 在/VERB:2:flat:vv 深圳/PROPN:5:nsubj "
             "闭幕/VERB:2:ccomp")
    assert complete(t, [0, 1, 4])[0] == "会议今天闭幕"


def test_copula_rule_keeps_the_subject_of_a_kept_copula():
    # 题目 是 《…》: "是 X" without what is X is not a sentence
    t = tree("人民日报/NOUN:2:nsubj 发表/VERB:0:root 文章/NOUN:2:obj ，/PUNCT:2:punct "
             "题目/NOUN:7:nsubj 是/AUX:7:cop 贯穿/VERB:2:parataxis")
    text, rules = complete(t, [0, 1, 2, 6])
    assert text == "人民日报发表文章题目是贯穿" and rules == {"auxiliary", "copula"}


def test_subject_rule_keeps_who_did_it_when_asked():
    t = tree("市/NOUN:2:nmod 公安局/NOUN:3:nsubj 逮捕/VERB:0:root 嫌疑人/NOUN:3:obj")
    assert complete(t, [2, 3])[0] == "逮捕嫌疑人"        # not a default rule
    text, rules = complete(t, [2, 3], SentenceRules(rules=("subject",)))
    assert text == "公安局逮捕嫌疑人" and rules == {"subject"}


def test_rules_can_be_switched_off_and_the_check_then_names_the_problem():
    none = SentenceRules(rules=(), check=True)
    kept, _ = complete_sentence(CLIMBERS, [0, 2], none, DTT)
    assert words(CLIMBERS, kept) == "被困的登山者"
    assert sentence_problem(CLIMBERS, kept, [0, 2])[0] == "no_predicate"


@pytest.mark.parametrize("spec, kept, code", [
    # a subject without its predicate
    ("著名/ADJ:2:amod 作家/NOUN:3:nsubj 去世/VERB:0:root", [0, 1], "no_predicate"),
    # a verb heading a relative clause (acl) is not a clause of its own
    ("被困/VERB:2:acl 登山者/NOUN:3:nsubj 获救/VERB:0:root", [0], "not_a_clause"),
    # ends in a preposition
    ("大会/NOUN:2:nsubj 举行/VERB:0:root 于/ADP:2:case", [0, 1, 2], "ends_in_function_word"),
    # the top carries 的: it modifies a noun (a relative clause the parser took for a ccomp)
    ("涉嫌/VERB:0:root 盗窃/VERB:1:ccomp 的/PART:2:mark:relcl 嫌疑人/NOUN:2:obj", [1, 2, 3],
     "modifier_as_predicate"),
    # the parser made a particle the head of a subject
    ("工作人员/NOUN:2:nmod 昨晚/PART:3:nsubj 撤离/VERB:0:root", [0, 1, 2], "function_word_head"),
    # a verb tagged into a nominal relation
    ("北京市/VERB:2:nsubj 实施/VERB:0:root 规定/NOUN:2:obj", [0, 1, 2], "verb_as_nominal"),
    # a subject attached across a comma to the next clause's verb
    ("李建华/NOUN:4:nsubj 去世/VERB:4:advcl ，/PUNCT:4:punct 享年/VERB:0:root",
     [0, 3], "relation_across_comma"),
    # a kept verb whose object (same clause) was dropped
    ("警方/NOUN:2:nsubj 逮捕/VERB:0:root 嫌疑人/NOUN:2:obj", [0, 1], "verb_without_object"),
])
def test_each_problem_code(spec, kept, code):
    t = tree(spec)
    assert code in PROBLEMS
    assert sentence_problem(t, kept, kept)[0] == code


def test_a_kept_clause_the_headline_does_not_name_is_rejected():
    # keywords only in the first clause; the path climbed into the second one
    t = tree("大学/NOUN:2:nsubj 发布/VERB:4:advcl ，/PUNCT:4:punct 新增/VERB:0:root "
             "专业/NOUN:4:obj")
    assert sentence_problem(t, [0, 1, 3, 4], [0, 1])[0] == "clause_without_keyword"


def test_a_complete_sentence_passes():
    kept, _ = complete_sentence(MEETING, [0, 3, 4], SentenceRules(), DTT)
    assert sentence_problem(MEETING, kept, [0, 3, 4]) is None


def test_unknown_rule_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown sentence rule"):
        SentenceRules.from_config({"sentence_rules": ["grammar"], "sentence_check": True})
