"""A seeded generator of a document-pairing test collection (synthetic text, no ../shared).

Several "translations" of one invented book: every chapter is a list of events (who meets
whom where, when, how many of what); each version renders the events in its own words:

* synonyms chosen per version and sentence (遇见 / 碰到 / 遇到), 15 % of sentences dropped
  and 15 % merged into the one before;
* chapters share their cast (from 20 recurring names) and places; only some mention numbers,
  dates or clock times;
* names transliterated per version with other characters of (nearly) the same sound
  (哈利 / 哈里, 科诺夫 / 柯诺弗), sometimes one syllable changed;
* numbers, dates and times written as digits in one version and as Chinese numerals in
  another (3月5日 / 三月五日, 15:30 / 下午三点半);
* headings 第十二章 / 第12章 / none;
* files named by random hex strings and listed in random order; ``extras`` chapters exist in
  one version only (they must stay unpaired); one file of one version holds two chapters
  (``merged_sizes``: several such files, of 2, 3 ... chapters; ``merged_headings=False``:
  the chapters after the first lose their heading or title line, as when a translator runs
  chapters together).

``make_collection(root, seed)`` writes ``root/v0 .. v{n-1}``, ``root/gold.json``
(version -> file name -> the chapters it holds, in order; extras are ``x1`` ...) and
``root/merged_starts.json`` (version -> file name -> the first line of each of its chapters,
for the files holding several).
Run ``python devtools/doc_collection.py OUT`` to write one.
"""
from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

from cppdb.text.numerals import CANONICAL_DIGITS

# syllable -> characters of that sound used in transliteration
SOUNDS = {
    "ha": "哈", "li": "利里理丽莉", "ke": "科柯克", "nuo": "诺", "fu": "夫弗福", "si": "斯丝",
    "ta": "塔", "ni": "尼妮", "ya": "亚娅雅", "luo": "罗洛", "bo": "波博伯", "te": "特",
    "la": "拉", "mi": "米密", "ka": "卡喀", "ba": "巴芭", "da": "达", "sa": "萨",
    "wei": "威韦维", "an": "安", "ai": "艾埃爱", "mo": "莫墨默", "ge": "戈格", "lun": "伦",
    "sen": "森", "ding": "丁", "xi": "西希锡", "ao": "奥澳", "ma": "马玛", "ke2": "克",
    "na": "纳娜", "sha": "沙莎", "de": "德得", "pu": "普", "qi": "奇齐琪", "ya2": "雅",
    "lin": "林琳", "wo": "沃", "ji": "基吉", "man": "曼", "er": "尔", "ka2": "卡",
    "ye": "耶", "ka3": "喀", "bei": "贝", "tuo": "托", "di": "迪蒂", "ke3": "柯",
}
NEAR = {"li": "ni", "ni": "li", "fu": "bo", "bo": "fu", "de": "te", "te": "de", "si": "xi",
        "xi": "si", "ka": "ge", "ge": "ka", "lun": "lin", "lin": "lun"}

PLACES = ["车站", "河边", "旧教堂", "集市", "学校", "港口", "图书馆", "山谷", "医院", "酒馆",
          "广场", "森林", "农场", "桥头", "码头", "庄园", "灯塔", "磨坊"]
SYNONYMS = {
    "遇见": ["遇见", "碰到", "遇到"], "离开": ["离开", "走出", "告别了"], "说": ["说", "讲", "表示"],
    "房子": ["房子", "屋子", "住宅"], "很": ["很", "非常", "十分"], "看见": ["看见", "看到", "瞧见"],
    "走": ["走", "赶", "去"], "钱": ["钱", "钱款", "现款"], "信": ["信", "书信", "来信"],
    "高兴": ["高兴", "开心", "快活"], "难过": ["难过", "伤心", "悲伤"], "马上": ["马上", "立刻", "随即"],
    "告诉": ["告诉", "告知", "对"], "送给": ["送给", "交给", "递给"], "问": ["问", "询问", "打听"],
}
OBJECTS = [("封", "信"), ("枚", "金币"), ("本", "书"), ("匹", "马"), ("箱", "苹果"), ("只", "羊"),
           ("张", "地图"), ("把", "钥匙"), ("瓶", "酒"), ("头", "牛")]
TEMPLATES = [
    "{A}在{P}{遇见}了{B}。",
    "{T}，{A}{马上}{离开}了{P}。",
    "{A}{送给}{B}{N}{O}。",
    "{D}那天，{A}和{B}一起{走}了{P}。",
    "{A}{说}，{B}的{房子}{很}旧了。",
    "{A}在{P}{看见}{B}正在数{N}{O}。",
    "{B}{问}{A}：你什么时候回{P}？",
    "{A}{告诉}{B}，{C}欠了他{N}块{钱}。",
    "{T}，{B}收到了{A}寄来的{信}。",
    "{A}{很}{高兴}，因为{B}答应{D}来{P}。",
    "{C}{很}{难过}，一个人坐在{P}的台阶上。",
    "{A}想起{Y}年冬天在{P}的事情。",
    "{B}带着{N}{O}从{P}回来了。",
    "{A}和{C}在{P}谈了很久，{T}才分开。",
]


DROP, MERGE = 0.15, 0.15      # share of sentences a version leaves out / joins to the last one
#: the "hard" preset: a third of the sentences dropped, as many sentences of the translator's
#: own (descriptions without names or numbers) added, and local reordering
HARD = {"drop": 0.33, "filler": 0.5, "swap": 0.3}
FILLERS = ["风从{P}那边吹过来，带着一股潮湿的气味。", "天色渐渐暗了下来。", "远处传来几声狗叫。",
           "屋里很安静，只听得见钟表的滴答声。", "雨下个不停，路上全是泥水。", "炉子里的火快要灭了。",
           "街上没有什么行人。", "月亮从云后面露了出来。", "空气里有一股烟草的味道。",
           "窗外的树叶沙沙作响。", "{P}还是老样子，什么都没有变。", "谁也没有再说话。"]
CAST_POOL = 20                # chapters draw their cast from this many recurring names


@dataclass(frozen=True)
class Event:
    template: int
    slots: dict


def zh_number(n: int) -> str:
    """1998 -> 一千九百九十八, 12 -> 十二, 35 -> 三十五 (below 10,000)."""
    if n == 0:
        return CANONICAL_DIGITS[0]
    parts, units = [], ["千", "百", "十", ""]
    digits = [int(c) for c in f"{n:04d}"]
    started, zero = False, False
    for d, unit in zip(digits, units):
        if d == 0:
            zero = started
            continue
        if zero:
            parts.append(CANONICAL_DIGITS[0])
            zero = False
        parts.append(("" if (unit == "十" and d == 1 and not started) else CANONICAL_DIGITS[d])
                     + unit)
        started = True
    return "".join(parts)


def zh_year(n: int) -> str:
    return "".join(CANONICAL_DIGITS[int(c)] for c in str(n))


class VersionStyle:
    """How one translator writes: names, numbers, synonyms, headings."""

    def __init__(self, version: int, names: list[list[str]], rng: random.Random) -> None:
        self.version, self.rng = version, rng
        self.names = [variants[version] for variants in names]
        self.zh_numbers = version % 2 == 1
        self.heading = ("zh", "digits", "none")[version % 3]

    def number(self, n: int) -> str:
        return zh_number(n) if self.zh_numbers else str(n)

    def year(self, n: int) -> str:
        return zh_year(n) if self.zh_numbers else str(n)

    def date(self, month: int, day: int) -> str:
        return f"{zh_number(month)}月{zh_number(day)}日" if self.zh_numbers else f"{month}月{day}日"

    def time(self, hour: int, minute: int) -> str:
        if not self.zh_numbers:
            return f"{hour}:{minute:02d}"
        period = "下午" if hour >= 12 else "上午"
        h = hour - 12 if hour > 12 else hour
        return f"{period}{zh_number(h)}点" + ("半" if minute == 30 else
                                            f"{zh_number(minute)}分" if minute else "")

    def render(self, event: Event) -> str:
        s = event.slots
        fill = {"A": self.names[s["A"]], "B": self.names[s["B"]], "C": self.names[s["C"]],
                "P": s["P"], "N": self.number(s["N"]), "O": "".join(s["O"]),
                "D": self.date(*s["D"]), "T": self.time(*s["T"]), "Y": self.year(s["Y"])}
        fill.update({word: self.rng.choice(options) for word, options in SYNONYMS.items()})
        return TEMPLATES[event.template].format(**fill)

    def heading_line(self, chapter: int, title: str) -> str | None:
        if self.heading == "zh":
            return f"第{zh_number(chapter)}章 {title}"
        if self.heading == "digits":
            return f"第{chapter}章 {title}"
        return None


def make_names(rng: random.Random, count: int, versions: int) -> list[list[str]]:
    """``count`` invented foreign names, each with one transliteration per version."""
    syllables = sorted(SOUNDS)
    names, seen = [], set()
    while len(names) < count:
        sounds = [rng.choice(syllables) for _ in range(rng.choice((2, 3, 3, 4)))]
        if tuple(sounds) in seen:
            continue
        seen.add(tuple(sounds))
        variants = []
        for _ in range(versions):
            own = [NEAR.get(x, x) if rng.random() < 0.1 else x for x in sounds]
            variants.append("".join(rng.choice(SOUNDS[x]) for x in own))
        names.append(variants)
    return names


def make_events(rng: random.Random, cast: list[int], main: list[int], n: int) -> list[Event]:
    """A chapter's events; only some chapters mention numbers, dates or clock times."""
    places = rng.sample(PLACES, 3)
    allowed = [k for k, t in enumerate(TEMPLATES)
               if not ("{N}" in t and rng.random() < 0.5) and not ("{D}" in t and rng.random() < 0.6)
               and not ("{T}" in t and rng.random() < 0.6) and not ("{Y}" in t and rng.random() < 0.7)]
    numbers = [rng.randint(3, 990) for _ in range(3)]
    dates = [(rng.randint(1, 12), rng.randint(1, 28)) for _ in range(2)]
    times = [(rng.randint(6, 22), rng.choice((0, 15, 30, 45))) for _ in range(2)]
    year = rng.randint(1890, 1990)
    people = cast + main
    events = []
    for _ in range(n):
        a, b, c = rng.sample(people, 3)
        events.append(Event(rng.choice(allowed), {
            "A": a, "B": b, "C": c, "P": rng.choice(places), "N": rng.choice(numbers),
            "O": rng.choice(OBJECTS), "D": rng.choice(dates), "T": rng.choice(times),
            "Y": year}))
    return events


def render_chapter(style: VersionStyle, chapter: int, title: str, events: list[Event],
                   rng: random.Random, hard: bool = False) -> list[str]:
    """Paragraphs of one chapter in one version: dropped and merged sentences (``hard``:
    more dropped, the translator's own sentences added, neighbours swapped)."""
    drop = HARD["drop"] if hard else DROP
    sentences = []
    for e in events:
        if rng.random() >= drop:
            sentences.append(style.render(e))
        if hard and rng.random() < HARD["filler"]:
            sentences.append(rng.choice(FILLERS).format(P=e.slots["P"]))
    if hard:
        for k in range(len(sentences) - 1):
            if rng.random() < HARD["swap"]:
                sentences[k], sentences[k + 1] = sentences[k + 1], sentences[k]
    merged: list[str] = []
    for sentence in sentences:
        if merged and rng.random() < MERGE:
            merged[-1] = merged[-1][:-1] + "，" + sentence
        else:
            merged.append(sentence)
    paragraphs = ["".join(merged[k:k + 4]) for k in range(0, len(merged), 4)]
    heading = style.heading_line(chapter, title)
    return ([heading] if heading else [title]) + paragraphs


def _merge_files(holds: dict[int, list[list[int]]], sizes: tuple[int, ...], chapters: int,
                 versions: int, rng: random.Random) -> None:
    """Merge runs of ``sizes`` consecutive chapters into one file each (the k-th run in
    version k % versions), runs not overlapping."""
    taken: set[int] = set()
    for k, size in enumerate(sizes):
        v = k % versions
        while True:
            first = rng.randint(1, chapters - size + 1)
            run = list(range(first, first + size))
            if not taken & set(range(first - 1, first + size + 1)):
                break
        taken.update(run)
        holds[v] = [h for h in holds[v] if h[0] not in run[1:]]
        holds[v][[h[0] for h in holds[v]].index(first)] = run


def make_collection(root: str | Path, seed: int = 0, *, versions: int = 3, chapters: int = 40,
                    extras: int = 5, merged: bool = True, events: tuple[int, int] = (50, 90),
                    hard: bool = False, merged_sizes: tuple[int, ...] = (2,),
                    merged_headings: bool = True) -> dict:
    """Write the collection under ``root``; returns the gold mapping (also gold.json)."""
    rng = random.Random(seed)
    root = Path(root)
    names = make_names(rng, 60, versions)
    main = [0, 1, 2]
    plots = {}
    for c in range(1, chapters + extras + 1):
        cast = rng.sample(range(3, 3 + CAST_POOL), 5)
        plots[c] = make_events(rng, cast, main, rng.randint(*events))
    titles = {c: rng.choice(PLACES) + rng.choice(("的夜晚", "之行", "的来信", "的秘密", "归来"))
              for c in plots}
    styles = [VersionStyle(v, names, random.Random(seed * 100 + v)) for v in range(versions)]
    # which chapters each version holds: all real ones, plus its extras
    holds = {v: [[c] for c in range(1, chapters + 1)] for v in range(versions)}
    for k in range(extras):
        holds[k % versions].append([chapters + 1 + k])
    if merged and merged_sizes == (2,) and merged_headings:
        v = next(s.version for s in styles if s.heading != "none")
        first = rng.randint(2, chapters - 2)
        holds[v] = [h for h in holds[v] if h != [first + 1]]
        holds[v][[h[0] for h in holds[v]].index(first)] = [first, first + 1]
    elif merged:
        _merge_files(holds, merged_sizes, chapters, versions, rng)
    gold: dict[str, dict[str, list[str]]] = {}
    starts: dict[str, dict[str, list[int]]] = {}
    for v, style in enumerate(styles):
        directory = root / f"v{v}"
        directory.mkdir(parents=True, exist_ok=True)
        order = list(holds[v])
        rng.shuffle(order)
        gold[str(v)] = {}
        for chapter_list in order:
            name = f"{rng.getrandbits(32):08x}.txt"
            parts = [render_chapter(style, c, titles[c], plots[c], style.rng, hard)
                     [(0 if merged_headings or k == 0 else 1):]
                     for k, c in enumerate(chapter_list)]
            lines = [line for part in parts for line in part]
            (directory / name).write_text("\n".join(lines) + "\n", "utf-8")
            gold[str(v)][name] = [str(c) if c <= chapters else f"x{c - chapters}"
                                  for c in chapter_list]
            if len(parts) > 1:
                sizes = [len(part) for part in parts]
                starts.setdefault(str(v), {})[name] = [sum(sizes[:k]) for k in range(len(parts))]
    (root / "gold.json").write_text(json.dumps(gold, ensure_ascii=False, indent=1), "utf-8")
    # the first line of each chapter in the files that hold several (lines as written)
    (root / "merged_starts.json").write_text(json.dumps(starts, indent=1), "utf-8")
    return gold


if __name__ == "__main__":
    make_collection(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0)
