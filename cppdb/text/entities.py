"""Transliteration variants of names across translations (科诺夫尼岑 / 柯诺夫尼岑).

Translators render foreign names with different characters of (nearly) the same sound.
We find name candidates, cluster variants, and map each variant to one canonical form for
comparison and filtering; the original text is always kept next to the normalised one.

* **Candidates**: closed repeated substrings of runs of characters used in transliteration
  (a subset of the Xinhua table of foreign-name characters, ``TRANSLIT_CHARS``); see
  :func:`name_candidates`.
* **Similarity** of two candidates: the largest normalised Levenshtein similarity of their
  toneless pinyin syllables, their pinyin letters, or their characters (rapidfuzz);
  科诺夫尼岑/柯诺夫尼岑 are identical in pinyin (ke nuo fu ni cen).
* **Context**: two candidates are joined only if they come from different versions (a
  translator does not spell one name two ways) and, when co-occurrence evidence is given
  (names of aligned sentence pairs / paired documents), the threshold is relaxed by
  ``context_bonus`` for pairs that co-occur.
* **Canonical form**: the most frequent variant of a cluster (ties: the first version's).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

TRANSLIT_CHARS = frozenset(
    "阿埃艾爱安昂敖奥澳巴芭拜班邦保鲍贝本比彼毕别宾波伯博布查彻楚达戴丹道德登邓迪蒂帝丁东"
    "杜多厄恩尔法凡范菲费芬丰冯佛夫弗福盖甘冈高戈哥格根古瓜圭哈海汉豪赫亨洪胡华霍基吉季加"
    "贾杰金京久喀卡凯坎康柯科克肯孔库夸奎昆拉莱赖兰朗劳勒雷蕾里理丽利莉连廉列林琳柳隆卢鲁"
    "路伦罗洛玛马迈麦曼梅美门蒙孟米密敏明姆莫墨默穆娜纳乃奈南瑙内妮尼涅宁纽努诺欧帕潘庞佩"
    "彭皮珀普奇齐恰乔切钦琴丘屈萨塞赛桑瑟森沙莎珊尚绍舍申什施史舒斯松苏索塔泰坦汤唐陶特滕"
    "提廷通图托瓦万旺威韦维温文沃乌伍武西希锡夏谢辛欣休雅亚扬耶伊因英尤于约泽扎詹兹卓佐岑"
    "娃娅妮娜莉丝黛薇蒂琪茨得")


@dataclass(frozen=True)
class EntityCluster:
    canonical: str
    variants: tuple[str, ...]
    counts: tuple[int, ...]


@dataclass(frozen=True)
class EntityNormalizer:
    """Maps every variant to its canonical form (longest variants replaced first)."""

    clusters: tuple[EntityCluster, ...] = ()
    mapping: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_clusters(cls, clusters: Sequence[EntityCluster]) -> "EntityNormalizer":
        mapping = {v: c.canonical for c in clusters for v in c.variants if v != c.canonical}
        return cls(tuple(clusters), mapping)

    def normalize(self, text: str) -> str:
        if not self.mapping:
            return text
        pattern = self._pattern()
        return pattern.sub(lambda m: self.mapping[m.group(0)], text)

    def _pattern(self) -> re.Pattern[str]:
        cached = self.__dict__.get("_compiled")
        if cached is None:
            alternatives = sorted(self.mapping, key=len, reverse=True)
            cached = re.compile("|".join(map(re.escape, alternatives)))
            object.__setattr__(self, "_compiled", cached)
        return cached

    def normalize_all(self, texts: Iterable[str]) -> list[str]:
        return [self.normalize(t) for t in texts]


_RUN = re.compile("[" + "".join(sorted(TRANSLIT_CHARS)) + "]{2,10}")


def name_candidates(texts: Iterable[str], min_count: int = 2) -> Counter[str]:
    """Repeated transliteration strings: closed substrings of character runs.

    Runs over-extend into neighbouring characters that are also used in names (科诺夫尼岑
    followed by 提), so every substring (2+ characters) of every run is counted and the
    *closed* ones are kept: seen ``min_count`` times and no one-character-longer
    superstring seen as often.  Two-character names must also stand alone as a run once.
    """
    counts: Counter[str] = Counter()
    whole: set[str] = set()
    for text in texts:
        for run in _RUN.findall(text):
            whole.add(run)
            counts.update({run[i:j] for i in range(len(run))
                           for j in range(i + 2, len(run) + 1)})
    frequent = {name: c for name, c in counts.items() if c >= min_count}
    longer: Counter[str] = Counter()
    for name, c in frequent.items():
        for sub in (name[1:], name[:-1]):
            if len(sub) >= 2 and frequent.get(sub) == c:
                longer[sub] += 1
    return Counter({name: c for name, c in frequent.items()
                    if not longer[name] and (len(name) >= 3 or name in whole)})


def pinyin_key(name: str) -> tuple[str, ...]:
    from pypinyin import Style, lazy_pinyin

    return tuple(lazy_pinyin(name, style=Style.NORMAL, errors="default"))


def name_similarity(a: str, b: str) -> float:
    """max of pinyin-syllable, pinyin-letter and character similarity, each in [0, 1]
    (伊万 / 伊凡: yi wan / yi fan, letters 0.8)."""
    from rapidfuzz.distance import Levenshtein

    key_a, key_b = pinyin_key(a), pinyin_key(b)
    syllables = Levenshtein.normalized_similarity(key_a, key_b)
    letters = Levenshtein.normalized_similarity("".join(key_a), "".join(key_b))
    characters = Levenshtein.normalized_similarity(a, b)
    return max(syllables, letters, characters)


def cluster_names(per_version: Sequence[Counter[str]], *, threshold: float = 0.8,
                  context_bonus: float = 0.15,
                  cooccurring: set[frozenset[str]] | None = None) -> list[EntityCluster]:
    """Cluster candidates of different versions whose names are similar enough."""
    owner: dict[str, int] = {}
    totals: Counter[str] = Counter()
    for version, counts in enumerate(per_version):
        for name, count in counts.items():
            owner.setdefault(name, version)
            totals[name] += count
    names = sorted(totals)
    parent = {name: name for name in names}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    versions_of = {name: {v for v, c in enumerate(per_version) if name in c} for name in names}
    for k, a in enumerate(names):
        for b in names[k + 1:]:
            if versions_of[a] & versions_of[b] or abs(len(a) - len(b)) > 2:
                continue
            needed = threshold
            if cooccurring and frozenset((a, b)) in cooccurring:
                needed -= context_bonus
            if name_similarity(a, b) >= needed:
                parent[find(a)] = find(b)
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(find(name), []).append(name)
    clusters = []
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda n: (-totals[n], owner[n], n))
        clusters.append(EntityCluster(members[0], tuple(members),
                                      tuple(totals[m] for m in members)))
    return sorted(clusters, key=lambda c: c.canonical)


def build_normalizer(versions: Sequence[Sequence[str]], *, min_count: int = 2,
                     threshold: float = 0.8, context_bonus: float = 0.15,
                     cooccurring: set[frozenset[str]] | None = None) -> EntityNormalizer:
    """Clusters from the texts of each version (one list of texts per version)."""
    per_version = [name_candidates(texts, min_count) for texts in versions]
    clusters = cluster_names(per_version, threshold=threshold, context_bonus=context_bonus,
                             cooccurring=cooccurring)
    return EntityNormalizer.from_clusters(clusters)


def cooccurring_names(pairs: Iterable[tuple[str, str]], min_count: int = 1
                      ) -> set[frozenset[str]]:
    """Name pairs (one from each side) that occur in the same aligned text pair."""
    seen: Counter[frozenset[str]] = Counter()
    for left, right in pairs:
        for a in set(_RUN.findall(left)):
            for b in set(_RUN.findall(right)):
                if a != b:
                    seen[frozenset((a, b))] += 1
    return {pair for pair, count in seen.items() if count >= min_count}
