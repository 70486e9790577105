"""Dependency tree transformation (the paper's three case studies) and the minimal subtree."""
from __future__ import annotations

import pytest

from cppdb.errors import BadInputError, ConfigError
from cppdb.extractors.compression.dtt import DTTRules, apply_dtt, load_negation_words
from cppdb.extractors.compression.subtree import minimal_rooted_subtree

RULES = DTTRules(negation_words=load_negation_words())


def tree(spec: str) -> tuple[list[str], list[int], list[str]]:
    """'word:head:deprel ...' with 1-based heads (0 = root), like CoNLL-U."""
    tokens, heads, deprels = [], [], []
    for item in spec.split():
        word, head, rel = item.split(":", 2)
        tokens.append(word)
        heads.append(int(head) - 1)
        deprels.append(rel)
    return tokens, heads, deprels


# Case 2 of Zhao et al. (Fig. 4): 罢运/的/根源/是/利益/受损 — particle 的 and auxiliary 是.
CASE_PARTICLE = tree("司机:2:nsubj 罢运:3:acl:relcl 的:2:mark:relcl 根源:6:nsubj "
                     "是:6:cop 利益:6:nsubj 受损:0:root")
# Case 3: 美国/人/不会/忘记/9/·/11/事件 — negation 不会 (aux).
CASE_NEGATION = tree("美国:2:nmod 人:4:nsubj 不会:4:aux 忘记:0:root 9:8:nummod "
                     "·:5:punct 11:8:nummod 事件:4:obj")
# Case 1: 外相/预定/11/月/访华 — numeral 11 (nummod of 月).
CASE_NUMERAL = tree("外相:2:nsubj 预定:0:root 11:4:nummod 月:5:obl:tmod 访华:2:xcomp")


def kept_words(case, keywords, rules=RULES):
    tokens, heads, deprels = case
    kept, added = apply_dtt(tokens, heads, deprels, keywords, rules)
    return [tokens[i] for i in sorted(kept)], added


def test_particle_de_is_kept_with_its_head():
    words, added = kept_words(CASE_PARTICLE, {1, 3, 5, 6})
    assert "的" in words
    assert ("的", "particle", "mark:relcl") in [(CASE_PARTICLE[0][a.token], a.rule, a.deprel)
                                                for a in added]


def test_auxiliary_shi_is_kept_with_its_head():
    words, added = kept_words(CASE_PARTICLE, {1, 3, 5, 6})
    assert words == ["罢运", "的", "根源", "是", "利益", "受损"]
    assert {(a.token, a.rule) for a in added} == {(2, "particle"), (4, "auxiliary")}


def test_numeral_is_kept_with_its_head():
    words, added = kept_words(CASE_NUMERAL, {0, 1, 3, 4})
    assert words == ["外相", "预定", "11", "月", "访华"]
    assert [(a.token, a.rule) for a in added] == [(2, "numeral")]


def test_negation_buhui_is_kept_and_attributed_to_negation():
    words, added = kept_words(CASE_NEGATION, {0, 1, 3, 7})
    assert "不会" in words
    assert [(CASE_NEGATION[0][a.token], a.rule) for a in added][0] == ("不会", "negation")


@pytest.mark.parametrize("word, deprel, expected", [
    ("不", "advmod", "negation"),
    ("没有", "advmod", "negation"),
    ("尚未", "advmod", "negation"),
    ("已", "advmod", None),          # a non-negation adverb is not kept
    ("会", "aux", "auxiliary"),
    ("了", "case:aspect", "particle"),
    ("的", "case:dec", "particle"),
    ("第一", "nummod", "numeral"),
    ("不", "nsubj", None),           # negation word under another relation
])
def test_rule_for_child(word, deprel, expected):
    assert RULES.rule_for(word, deprel) == expected


def test_disabled_rules_keep_nothing_and_fixpoint_closure():
    none = DTTRules(rules=(), negation_words=RULES.negation_words)
    words, added = kept_words(CASE_NEGATION, {0, 1, 3, 7}, none)
    assert "不会" not in words and added == ()
    # closure: a child kept by a rule is itself retained, so its own children are checked
    chain = tree("事件:0:root 月:1:nummod 11:2:nummod")
    words, _ = kept_words(chain, {0})
    assert words == ["事件", "月", "11"]


def test_negation_list_has_about_seventy_words():
    words = load_negation_words()
    assert 60 <= len(words) <= 80
    assert {"不", "没", "没有", "不再", "尚未", "不会"} <= words


def test_custom_negation_list_and_unknown_rule(tmp_path):
    path = tmp_path / "neg.txt"
    path.write_text("# mine\n绝非\n", encoding="utf-8")
    assert load_negation_words(path) == frozenset({"绝非"})
    with pytest.raises(BadInputError, match="does not exist"):
        load_negation_words(tmp_path / "nope.txt")
    section = {"dtt_rules": ["particle", "negations"], "particle_relations": [],
               "auxiliary_relations": [], "numeral_relations": [], "negation_relations": [],
               "negation_words": ""}
    with pytest.raises(ConfigError, match="negations"):
        DTTRules.from_config(section)


# -- minimal rooted subtree -----------------------------------------------------------------
#        0 说 (root)
#       /     \
#  1 奥巴马   2 忘记
#            /    \
#        3 美国人  4 事件
#                    \
#                    5 九一一
HEADS = [-1, 0, 0, 2, 2, 4]


@pytest.mark.parametrize("keywords, root, expected", [
    ({3, 5}, "lca", (2, 3, 4, 5)),           # LCA 忘记; 说 is not needed
    ({3, 5}, "sentence_root", (0, 2, 3, 4, 5)),
    ({1, 5}, "lca", (0, 1, 2, 4, 5)),        # path through the root
    ({5}, "lca", (5,)),                      # a single keyword is its own subtree
    ({4, 5}, "lca", (4, 5)),                 # ancestor + descendant
    (set(), "lca", ()),
])
def test_minimal_rooted_subtree(keywords, root, expected):
    assert minimal_rooted_subtree(HEADS, keywords, root=root) == expected


def test_subtree_errors():
    with pytest.raises(BadInputError, match="cycle"):
        minimal_rooted_subtree([1, 0], {0})
    with pytest.raises(ConfigError, match="root policy"):
        minimal_rooted_subtree(HEADS, {1}, root="top")


def test_subtree_plus_dtt_reproduces_case_study_three():
    tokens, heads, deprels = CASE_NEGATION
    keywords = {0, 1, 3, 7}                  # 美国 人 忘记 事件 (aligned to the headline)
    subtree = minimal_rooted_subtree(heads, keywords)
    kept, _ = apply_dtt(tokens, heads, deprels, subtree, RULES)
    assert "".join(tokens[i] for i in sorted(kept)) == "美国人不会忘记911事件"
