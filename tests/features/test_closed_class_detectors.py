"""Closed-class change detectors and their filters (issue 11, item 4).

Each row: source, target (space-joined tokens), their CTB tags, type, the four detector values
(determiner_only, deixis_flip, classifier_clash, head_change) and the filter reason (or None).
"""
from __future__ import annotations

import polars as pl
import pytest

from cppdb.annotate.classifiers import compatible_pairs, noun_classifiers
from cppdb.features.detectors import closed_class_detectors, no_content, person_mismatch
from cppdb.rank.filters import filter_reasons

CASES = [
    # patterns that differ only in a determiner/classifier
    ("这 个 [NP1]", "那 张 [NP1]", "DT M -", "DT M -", "pattern", (1, 1, 0, 0), "deixis_flip"),
    ("一 朵 [NP1]", "一 辆 [NP1]", "CD M -", "CD M -", "pattern", (1, 0, 1, 0), "determiner_only"),
    ("一 位 [ADJP1] 的 [NP2]", "一 条 [ADJP1] 的 [NP2]", "CD M - DEG -", "CD M - DEG -",
     "pattern", (1, 0, 1, 0), "determiner_only"),
    ("一 个 [NP1]", "一 位 [NP1]", "CD M -", "CD M -", "pattern", (1, 0, 0, 0), "determiner_only"),
    # person, deixis and quantity flips
    ("我们 班", "你们 班", "PN NN", "PN NN", "phrase", (0, 1, 0, 0), "deixis_flip"),
    ("他 很 高", "她 很 高", "PN AD VA", "PN AD VA", "phrase", (0, 1, 0, 0), "deixis_flip"),
    ("一 只 猫", "所有 猫", "CD M NN", "DT NN", "phrase", (0, 1, 0, 0), "deixis_flip"),
    ("每天 晚上", "夜里", "NT NT", "NT", "phrase", (0, 1, 0, 0), "deixis_flip"),
    # head changes
    ("画 画 的 时候", "画 画", "VV NN DEG NN", "VV NN", "phrase", (0, 0, 0, 1), "head_change"),
    ("城市 的 中心", "城市", "NN DEG NN", "NN", "phrase", (0, 0, 0, 1), "head_change"),
    # must not fire: compatible classifiers of a phrase with its noun, a modifier in front,
    # a content-word paraphrase, a flip plus other changes
    ("一 位 老师", "一 名 老师", "CD M NN", "CD M NN", "phrase", (1, 0, 0, 0), None),
    ("这 本 书", "这 部 书", "DT M NN", "DT M NN", "phrase", (1, 0, 0, 0), None),
    ("城市", "旧 城市", "NN", "JJ NN", "phrase", (0, 0, 0, 0), None),
    ("汽车", "轿车", "NN", "NN", "phrase", (0, 0, 0, 0), None),
    # a person flip plus other changes: no deixis_flip, but person_mismatch rejects it
    ("他 死 于 车祸", "她 在 车祸 中 丧生", "PN VV P NN", "PN P NN LC VV", "phrase",
     (0, 0, 0, 0), "person_mismatch"),
    ("死 于 车祸", "在 车祸 中 丧生", "VV P NN", "P NN LC VV", "phrase", (0, 0, 0, 0), None),
    ("[NP1] 出生 于 [NP2]", "[NP1] 生于 [NP2]", "- VV P -", "- VV -", "pattern",
     (0, 0, 0, 0), None),
]

NO_CONTENT = [
    ("他 [VP1]", "他 越来越 [VP1]", "PN -", "PN AD -", 1),
    ("[NP1] 的 [NP2]", "[NP1] 之 [NP2]", "- DEG -", "- DEG -", 1),
    ("[NP1] 是 [NP2]", "[NP1] 就 是 [NP2]", "- VC -", "- AD VC -", 1),
    ("[NP1] 死 于 [NP2]", "[NP1] 在 [NP2] 中 丧生", "- VV P -", "- P - LC VV", 0),
    ("死 于 车祸", "在 车祸 中 丧生", "VV P NN", "P NN LC VV", 0),     # phrases: never
]


@pytest.mark.parametrize("row", NO_CONTENT, ids=[f"{c[0]}|{c[1]}" for c in NO_CONTENT])
def test_no_content_pattern_sides(row):
    frame = _frame([(*row[:4], "pattern" if "[" in row[0] else "phrase", None, None)])
    assert frame.select(no_content()).item() == row[4]
    assert (filter_reasons(frame).item() == "no_content") is bool(row[4])


def _frame(rows) -> pl.DataFrame:
    def split(x: str) -> list[str]:
        return ["" if t == "-" else t for t in x.split(" ")]
    return pl.DataFrame({
        "source": [r[0] for r in rows], "target": [r[1] for r in rows],
        "source_tokens": [r[0].split(" ") for r in rows],
        "target_tokens": [r[1].split(" ") for r in rows],
        "source_pos": [split(r[2]) for r in rows], "target_pos": [split(r[3]) for r in rows],
        "type": [r[4] for r in rows]})


@pytest.mark.parametrize("row", CASES, ids=[f"{c[0]}|{c[1]}" for c in CASES])
def test_detectors_and_filters(row):
    frame = _frame([row])
    got = frame.select(closed_class_detectors()).row(0)
    assert got == row[5]
    assert filter_reasons(frame).item() == row[6]


def test_classifier_knowledge_comes_from_cedict():
    assert {"条", "只"} <= noun_classifiers()["狗"]
    pairs = compatible_pairs()
    assert "位|名" in pairs and "名|位" in pairs and "朵|辆" not in pairs


PERSONS = [
    ("你 的 母亲", "我们 的 妈妈", 1), ("他家", "我们 的 房子", 0),   # 他家 is one token: no pronoun
    ("他 的 家", "我们 的 房子", 1), ("我 爸", "我 和 我 爸爸", 0), ("我 的 书", "书", 0),
    ("她 的 书", "他 的 书", 1), ("妈妈", "母亲", 0),
]


@pytest.mark.parametrize("source,target,expected", PERSONS)
def test_person_mismatch(source, target, expected):
    frame = _frame([(source, target, " ".join(["X"] * len(source.split())),
                     " ".join(["X"] * len(target.split())), "phrase", None, None)])
    assert frame.select(person_mismatch()).item() == expected
    reason = filter_reasons(frame).item()
    assert (reason in ("person_mismatch", "deixis_flip")) is bool(expected)


# kinship terms of different relations (the English pivot neutralises seniority, lineage, sex)
KINSHIP = [
    ("你 哥哥", "你 弟弟", 1), ("爷爷", "外公", 1), ("他 的 儿子", "他 的 女儿", 1),
    ("叔叔", "舅舅", 1), ("这 位 伯伯", "那 位 叔叔", 1),
    # must not fire: synonyms of one relation, a generic term, other words changed too
    ("哥", "哥哥", 0), ("我 的 爸爸", "我 父亲", 0), ("哥哥", "兄弟", 0),
    ("哥哥 的 书", "弟弟 的 车", 0), ("妈妈", "母亲", 0), ("老师", "教师", 0),
]


@pytest.mark.parametrize("source,target,expected", KINSHIP)
def test_kinship_flip(source, target, expected):
    from cppdb.features.detectors import kinship_flip

    frame = _frame([(source, target, " ".join(["NN"] * len(source.split())),
                     " ".join(["NN"] * len(target.split())), "phrase", None, None)])
    assert frame.select(kinship_flip()).item() == expected
    assert (filter_reasons(frame).item() is not None) is bool(expected)


NEGATIONS = [
    ("区分 [NP1] 和 蟾蜍", "无法 区分 [NP1] 和 蟾蜍", 1),   # a multi-character negation token
    ("他 是 医生", "他 不是 医生", 1), ("我 没有 钱", "我 有 钱", 1),
    # must not fire: both negated, an added particle, a paraphrase that merely contains 不
    ("他 不 来", "他 不会 来", 0), ("我 不 想 去", "我 不 想 去 了", 0), ("没法 说", "说 不 出来", 0),
]


@pytest.mark.parametrize("source,target,expected", NEGATIONS)
def test_negation_flip_is_a_filter(source, target, expected):
    from cppdb.features.detectors import negation_flip

    frame = _frame([(source, target, " ".join(["X"] * len(source.split())),
                     " ".join(["X"] * len(target.split())), "phrase", None, None)])
    assert frame.select(negation_flip("source", "target")).item() == expected
    assert (filter_reasons(frame).item() == "negation_flip") is bool(expected)
