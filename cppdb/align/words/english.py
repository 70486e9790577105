"""Small English helpers for dictionary matching: a rule lemmatiser, stopwords, token keys.

The rule lemmatiser is used when no spaCy lemma is given.  It proposes candidate base forms
(cats→cat, studies→study, stopped→stop, making→make) and keeps the first one the dictionary
knows, so it never invents a form that matches nothing.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from cppdb.text.numerals import numeral_value

#: function words that CC-CEDICT glosses are full of ("to go", "of", "a kind of ...")
STOPWORDS = frozenset("""
a an the to of in on at by for from with as and or but not no nor so if than then that this
these those it its it's is are was were be been being am do does did done have has had having
i me my we us our you your he him his she her they them their one ones oneself sb sth something
someone somebody etc e.g. i.e. also used abbr variant see pr cl kind sort type way up out
""".split())

_IRREGULAR = {
    "went": "go", "gone": "go", "was": "be", "were": "be", "is": "be", "are": "be", "am": "be",
    "been": "be", "had": "have", "has": "have", "did": "do", "does": "do", "done": "do",
    "made": "make", "said": "say", "took": "take", "taken": "take", "came": "come",
    "saw": "see", "seen": "see", "got": "get", "gave": "give", "given": "give", "knew": "know",
    "known": "know", "thought": "think", "told": "tell", "found": "find", "left": "leave",
    "felt": "feel", "brought": "bring", "bought": "buy", "began": "begin", "begun": "begin",
    "kept": "keep", "held": "hold", "wrote": "write", "written": "write", "stood": "stand",
    "heard": "hear", "met": "meet", "ran": "run", "paid": "pay", "sat": "sit", "spoke": "speak",
    "spoken": "speak", "lay": "lie", "led": "lead", "grew": "grow", "grown": "grow",
    "lost": "lose", "fell": "fall", "fallen": "fall", "sent": "send", "built": "build",
    "understood": "understand", "drew": "draw", "drawn": "draw", "broke": "break",
    "broken": "break", "spent": "spend", "rose": "rise", "risen": "rise", "drove": "drive",
    "driven": "drive", "ate": "eat", "eaten": "eat", "fled": "flee", "won": "win",
    "sold": "sell", "taught": "teach", "caught": "catch", "fought": "fight", "chose": "choose",
    "chosen": "choose", "slept": "sleep", "flew": "fly", "flown": "fly", "forgot": "forget",
    "children": "child", "men": "man", "women": "woman", "people": "person", "feet": "foot",
    "teeth": "tooth", "mice": "mouse", "better": "good", "best": "good", "worse": "bad",
    "worst": "bad", "countries": "country", "n't": "not", "'s": "'s", "'re": "be", "'m": "be",
}

#: full-width / CJK punctuation and PTB escapes mapped to one shared key
_PUNCT = {
    "，": ",", "、": ",", "。": ".", "．": ".", "：": ":", "；": ";", "？": "?", "！": "!",
    "（": "(", "）": ")", "-lrb-": "(", "-rrb-": ")", "【": "[", "】": "]", "-lsb-": "[",
    "-rsb-": "]", "“": '"', "”": '"', "‘": "'", "’": "'", "《": '"', "》": '"', "``": '"',
    "''": '"', "「": '"', "」": '"', "『": '"', "』": '"', "…": "...", "——": "--", "—": "--",
    "－": "-", "／": "/", "％": "%", "＄": "$",
}



def punct_key(token: str) -> str | None:
    """Shared key of a punctuation token, or None if it is not punctuation."""
    low = token.lower()
    if low in _PUNCT:
        return "P:" + _PUNCT[low]
    if all(not c.isalnum() for c in token):
        return "P:" + token
    return None


def number_key(token: str) -> str | None:
    """'N:<digits>' for tokens carrying a number: 22日 / 22nd / 1,000 / 三十 / 2002年."""
    digits = "".join(c for c in token if c.isdigit() and c.isascii())
    if digits:
        return "N:" + digits.lstrip("0") if digits.strip("0") else "N:0"
    value = numeral_value(token.rstrip("年月日号个"))
    return None if value is None else f"N:{value}"


def latin_key(token: str) -> str | None:
    """'L:<lowercase>' for tokens written in Latin letters (names, acronyms)."""
    if any(c.isascii() and c.isalpha() for c in token):
        return "L:" + token.lower()
    return None


def lemma_candidates(word: str) -> list[str]:
    """Candidate base forms of a lowercase English word, most specific first."""
    out = [word]
    if word in _IRREGULAR:
        out.insert(0, _IRREGULAR[word])
    if word.endswith("ies") and len(word) > 4:
        out.append(word[:-3] + "y")
    if word.endswith("es") and len(word) > 3:
        out.append(word[:-2])
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        out.append(word[:-1])
    if word.endswith("ied") and len(word) > 4:
        out.append(word[:-3] + "y")
    if word.endswith("ed") and len(word) > 4:
        out.extend([word[:-2], word[:-1]])
        if word[-3] == word[-4]:
            out.append(word[:-3])
    if word.endswith("ing") and len(word) > 5:
        out.extend([word[:-3], word[:-3] + "e"])
        if word[-4] == word[-5]:
            out.append(word[:-4])
    if word.endswith("ly") and len(word) > 4:
        out.append(word[:-2])
    if word.endswith("er") and len(word) > 4:
        out.extend([word[:-2], word[:-1]])
    if word.endswith("est") and len(word) > 5:
        out.extend([word[:-3], word[:-2]])
    return out


def make_lemmatiser(known: Callable[[str], bool]) -> Callable[[str], str]:
    """Lemmatiser returning the first base form (other than the word) ``known`` accepts,
    else the word itself."""
    cache: dict[str, str] = {}

    def lemma(word: str) -> str:
        low = word.lower()
        if low not in cache:
            cache[low] = next((c for c in lemma_candidates(low) if c != low and known(c)),
                              low)
        return cache[low]

    return lemma


_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_GLOSS_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*")
_SKIP_PREFIXES = ("CL:", "see ", "variant of", "old variant", "surname ", "abbr. for")


def gloss_words(definition: str) -> list[str]:
    """Content words of one CC-CEDICT definition (parentheses, CL: and stopwords dropped)."""
    text = _BRACKETED.sub(" ", _BRACKETED.sub(" ", definition))
    if text.startswith(_SKIP_PREFIXES):
        return []
    words = []
    for raw in _GLOSS_WORD.findall(text):
        word = raw.strip("'-").lower()
        if len(word) > 1 and word not in STOPWORDS:
            words.append(word)
    return words
