"""Transliteration variants across versions: candidates, clusters, normalisation."""
from __future__ import annotations

from collections import Counter

import pytest

from cppdb.text.entities import (build_normalizer, cluster_names, cooccurring_names,
                                 name_candidates, name_similarity)

VERSION_A = ["科诺夫尼岑提着皮箱下了车。", "科诺夫尼岑点了点头。", "彼得罗夫叹了口气。",
             "彼得罗夫站起身来。", "米沙跑了过来。", "米沙笑了。"]
VERSION_B = ["柯诺夫尼岑拎着皮箱下了车。", "柯诺夫尼岑点点头。", "彼得洛夫叹息一声。",
             "彼得洛夫站起来。", "米莎跑过来。", "米莎笑了。"]


def test_candidates_are_repeated_transliteration_runs() -> None:
    found = name_candidates(VERSION_A)
    assert found["科诺夫尼岑"] == 2 and found["彼得罗夫"] == 2
    assert "皮箱" not in found and "下了车" not in found


@pytest.mark.parametrize("a, b, at_least", [
    ("科诺夫尼岑", "柯诺夫尼岑", 1.0),      # same pinyin: ke nuo fu ni cen
    ("彼得罗夫", "彼得洛夫", 1.0),          # luo / luo
    ("米沙", "米莎", 1.0),
])
def test_variants_sound_alike(a: str, b: str, at_least: float) -> None:
    assert name_similarity(a, b) >= at_least


def test_clusters_join_versions_and_keep_the_most_frequent_form() -> None:
    normalizer = build_normalizer([VERSION_A, VERSION_B + ["柯诺夫尼岑走了。"]])
    canon = {c.canonical: set(c.variants) for c in normalizer.clusters}
    assert canon["柯诺夫尼岑"] == {"科诺夫尼岑", "柯诺夫尼岑"}     # 3 occurrences beat 2
    assert canon["彼得罗夫"] == {"彼得罗夫", "彼得洛夫"}
    assert normalizer.normalize("科诺夫尼岑和彼得洛夫") == "柯诺夫尼岑和彼得罗夫"
    assert normalizer.normalize("没有名字的句子。") == "没有名字的句子。"


def test_names_of_one_version_are_never_merged() -> None:
    # two different people in one translation, however alike their names sound
    clusters = cluster_names([Counter({"安德烈": 3, "安德列": 3}), Counter({"米沙": 2})])
    assert clusters == []


def test_context_relaxes_the_threshold_for_cooccurring_names() -> None:
    versions = [Counter({"卡列宁娜": 3}), Counter({"卡列尼娜": 3})]
    similarity = name_similarity("卡列宁娜", "卡列尼娜")
    strict = cluster_names(versions, threshold=similarity + 0.05, context_bonus=0.1)
    assert strict == []
    together = cooccurring_names([("卡列宁娜走了。", "卡列尼娜走了。")])
    relaxed = cluster_names(versions, threshold=similarity + 0.05, context_bonus=0.1,
                            cooccurring=together)
    assert [set(c.variants) for c in relaxed] == [{"卡列宁娜", "卡列尼娜"}]
