"""Minimal-edit meaning-change detectors: a negation flip, an argument swap, and closed-class
changes (determiners/classifiers only, deixis/person/number flips, classifier clashes, head
changes; see the functions at the end of this module).

Both fire only when the two sides are otherwise the same text, so they stay silent on the
loosely related pairs of natural data (where a negation word on one side is incidental) and
speak up on the PAWS-style near-copies that an embedding cosine ranks as paraphrases:

* ``f_negation_flip`` = 1 when the sides differ in the parity of their negation words
  (:mod:`cppdb.text.negation`; tokens, so 不是 counts once and 不是不想 is no negation) and are
  identical once the one-character negators (不 没 未 无 非 别 …), the particles 的了地得,
  punctuation and spaces are deleted.  他是医生 / 他不是医生 → 1, 我没有钱 / 我有钱 → 1,
  他不来 / 他不会来 → 0 (both negated), 我不想去 / 我不想去了 → 0.
* ``f_argument_swap`` = 1 when the token sequences are the same words in another order and
  the difference is two nominal spans exchanged (s = A X B Y C, t = A Y B X C): each span
  holds a noun, name, pronoun or slot and no verb or preposition.  张三打败了李四 /
  李四打败了张三 → 1; 我昨天去了北京 / 昨天我去了北京 → 0 (a time word moved);
  在北京我见了他 / 我在北京见了他 → 0 (a prepositional phrase moved).

The negation flip is a polars expression.  The swap needs a search over span splits, so a
polars filter (same sorted tokens, different order) picks the few candidate rows and only
those are checked in Python.
"""
from __future__ import annotations

import re

import polars as pl

from cppdb import schema as S
from cppdb.annotate.classifiers import compatible_pairs, known_classifiers
from cppdb.annotate.ctb_map import CLASSIFIERS, DETERMINERS
from cppdb.text.function_words import ZH_CONTRAST_SETS
from cppdb.text.kinship import KIN_RELATION, kin_relations
from cppdb.text.negation import packaged_negation_words

#: the one-character words of the negation list, deleted (with the particles, punctuation
#: and spaces) before the "otherwise identical" comparison
_NEGATOR_CHARS = "".join(sorted(w for w in packaged_negation_words() if len(w) == 1))
_IGNORED = rf"[{_NEGATOR_CHARS}的了地得\s\p{{P}}\p{{S}}]"
#: CTB tags that make a span nominal / that a nominal span may not contain
NOMINAL_TAGS = frozenset({"NN", "NR", "PN"})
BLOCKING_TAGS = frozenset({"P", "BA", "LB", "SB", "VV", "VA", "VC", "VE", "CS"})
_SLOT = re.compile(r"^\[?[A-Z$]+\d+\]?$")
#: windows longer than this (tokens) are not searched for a swap
MAX_SWAP_WINDOW = 24


def _negation_parity(tokens: str) -> pl.Expr:
    words = sorted(packaged_negation_words())
    return pl.col(tokens).list.eval(pl.element().is_in(words)).list.sum() % 2


def negation_flip(source_chars: str, target_chars: str) -> pl.Expr:
    """``f_negation_flip`` from the token columns and the two character-text columns.

    "The rest" is compared twice: without the one-character negators (他 是 / 他 不是) and
    without whole negation tokens (区分 X / 无法 区分 X: 无法 is one token, not a negator
    character plus 法); either equality counts."""
    same_chars = (pl.col(source_chars).str.replace_all(_IGNORED, "")
                  == pl.col(target_chars).str.replace_all(_IGNORED, ""))
    same_tokens = (_without_negation(S.SOURCE_TOKENS) == _without_negation(S.TARGET_TOKENS))
    flipped = _negation_parity(S.SOURCE_TOKENS) != _negation_parity(S.TARGET_TOKENS)
    same_rest = same_chars | same_tokens.fill_null(False)
    return (flipped & same_rest).fill_null(False).cast(pl.Int8).alias("f_negation_flip")


def _without_negation(tokens: str) -> pl.Expr:
    words = sorted(packaged_negation_words())
    kept = pl.col(tokens).list.eval(pl.element().filter(~pl.element().is_in(words))).list.join("")
    return kept.str.replace_all(_IGNORED, "")


def _nominal(tokens: list[str], tags: list[str]) -> bool:
    if any(tag in BLOCKING_TAGS for tag in tags):
        return False
    return any(tag in NOMINAL_TAGS or _SLOT.match(tok) for tok, tag in zip(tokens, tags))


def is_argument_swap(src: list[str], src_pos: list[str] | None,
                     tgt: list[str], tgt_pos: list[str] | None) -> bool:
    """Whether ``tgt`` is ``src`` with two nominal spans exchanged (see the module doc)."""
    if len(src) != len(tgt) or src == tgt or sorted(src) != sorted(tgt):
        return False
    src_pos = list(src_pos) if src_pos and len(src_pos) == len(src) else [""] * len(src)
    tgt_pos = list(tgt_pos) if tgt_pos and len(tgt_pos) == len(tgt) else [""] * len(tgt)
    first = next(i for i in range(len(src)) if src[i] != tgt[i])
    last = next(i for i in range(len(src) - 1, -1, -1) if src[i] != tgt[i])
    window = src[first:last + 1]
    if len(window) > MAX_SWAP_WINDOW:
        return False
    other = tgt[first:last + 1]
    n = len(window)
    for x_len in range(1, n):
        for y_len in range(1, n - x_len + 1):
            x, y = window[:x_len], window[n - y_len:]
            middle = window[x_len:n - y_len]
            if x == y or other != y + middle + x:
                continue
            x_tags = src_pos[first:first + x_len]
            y_tags = src_pos[first + n - y_len:last + 1]
            if _nominal(x, x_tags) and _nominal(y, y_tags):
                return True
    return False


def argument_swap(frame: pl.DataFrame) -> pl.Series:
    """``f_argument_swap`` for every row of a pair table (Int8)."""
    candidate = frame.select(
        ((pl.col(S.SOURCE_TOKENS).list.sort() == pl.col(S.TARGET_TOKENS).list.sort())
         & (pl.col(S.SOURCE_TOKENS) != pl.col(S.TARGET_TOKENS))).fill_null(False)
        .alias("c"))["c"]
    values = [0] * frame.height
    rows = frame.with_row_index("_i").filter(candidate).select(
        "_i", S.SOURCE_TOKENS, S.SOURCE_POS, S.TARGET_TOKENS, S.TARGET_POS)
    for i, src, src_pos, tgt, tgt_pos in rows.iter_rows():
        values[i] = int(is_argument_swap(src, src_pos, tgt, tgt_pos))
    return pl.Series("f_argument_swap", values, dtype=pl.Int8)


# -- closed-class changes: determiners, classifiers, deixis, person, heads --------------------
#: words whose change alone turns a pattern into another pattern of the same slot content:
#: demonstratives/determiners, classifiers and the bare numerals that count with them
DETERMINER_WORDS = sorted(DETERMINERS | CLASSIFIERS | {"一", "两", "几", "些", "一些"})
_CONTRAST_ID = {word: k for k, words in enumerate(ZH_CONTRAST_SETS) for word in words}
#: tags that make the extra words of a longer side a new head (X 的 时候 / X)
HEAD_TAGS = ["NN", "NT", "NR", "LC"]


def _only(side: str, other: str) -> pl.Expr:
    return pl.col(side).list.set_difference(pl.col(other))


def _all_in(expr: pl.Expr, words: list[str]) -> pl.Expr:
    return expr.list.eval(pl.element().is_in(words)).list.all()


def determiner_only() -> pl.Expr:
    """``f_determiner_only``: the sides differ, and only in determiners, classifiers and the
    numerals that count with them (这个[NP1] / 那张[NP1], 一朵[NP1] / 一辆[NP1])."""
    src, tgt = _only(S.SOURCE_TOKENS, S.TARGET_TOKENS), _only(S.TARGET_TOKENS, S.SOURCE_TOKENS)
    differs = (src.list.len() + tgt.list.len()) > 0
    return (differs & _all_in(src, DETERMINER_WORDS) & _all_in(tgt, DETERMINER_WORDS)
            ).fill_null(False).cast(pl.Int8).alias("f_determiner_only")


def deixis_flip() -> pl.Expr:
    """``f_deixis_flip``: the sides differ only in closed-class words, and one of the
    contrast sets of :mod:`cppdb.text.function_words` has a different member on each side
    (我们班 / 你们班, 这 / 那, 他 / 她, 一只 / 所有, 每天晚上 / 夜里)."""
    src, tgt = _only(S.SOURCE_TOKENS, S.TARGET_TOKENS), _only(S.TARGET_TOKENS, S.SOURCE_TOKENS)
    closed = DETERMINER_WORDS + sorted(_CONTRAST_ID)

    def ids(expr: pl.Expr) -> pl.Expr:
        return expr.list.eval(pl.element().replace_strict(_CONTRAST_ID, default=None,
                                                          return_dtype=pl.Int32)).list.drop_nulls()

    shared_set = ids(src).list.set_intersection(ids(tgt)).list.len() > 0
    return (_all_in(src, closed) & _all_in(tgt, closed) & shared_set
            ).fill_null(False).cast(pl.Int8).alias("f_deixis_flip")


def kinship_flip() -> pl.Expr:
    """``f_kinship_flip``: the sides differ only in kinship terms (and closed-class words),
    and the terms name different relations (:mod:`cppdb.text.kinship`): 你 哥哥 / 你 弟弟,
    爷爷 / 外公.  Synonyms of one relation do not fire (哥 / 哥哥, 父亲 / 爸爸), nor does a
    generic term (哥哥 / 兄弟)."""
    src, tgt = _only(S.SOURCE_TOKENS, S.TARGET_TOKENS), _only(S.TARGET_TOKENS, S.SOURCE_TOKENS)
    allowed = DETERMINER_WORDS + sorted(_CONTRAST_ID) + sorted(KIN_RELATION)
    src_rel, tgt_rel = kin_relations(src), kin_relations(tgt)
    differ = (src_rel.list.set_symmetric_difference(tgt_rel).list.len() > 0)
    return (_all_in(src, allowed) & _all_in(tgt, allowed) & (src_rel.list.len() > 0)
            & (tgt_rel.list.len() > 0) & differ).fill_null(False).cast(pl.Int8).alias(
        "f_kinship_flip")


#: personal pronouns (the first two contrast sets: singular and plural persons)
PERSONAL_PRONOUNS = sorted(ZH_CONTRAST_SETS[0] | ZH_CONTRAST_SETS[1])


def person_mismatch() -> pl.Expr:
    """``f_person_mismatch``: both sides name a person by pronoun and share none of them,
    whatever else differs (你 的 母亲 / 我们 的 妈妈, 他家 / 我们 的 房子): the English pivot
    ("my", "your", "the") does not keep the person apart.  我 爸 / 我 和 我 爸爸 → 0."""
    def persons(col: str) -> pl.Expr:
        return pl.col(col).list.eval(pl.element().filter(pl.element().is_in(PERSONAL_PRONOUNS)))
    src, tgt = persons(S.SOURCE_TOKENS), persons(S.TARGET_TOKENS)
    return ((src.list.len() > 0) & (tgt.list.len() > 0)
            & (src.list.set_intersection(tgt).list.len() == 0)
            ).fill_null(False).cast(pl.Int8).alias("f_person_mismatch")


def classifier_clash() -> pl.Expr:
    """``f_classifier_clash``: each side has a classifier the other lacks, and CC-CEDICT
    lists no noun that takes both (:mod:`cppdb.annotate.classifiers`): 一位[ADJP1]的[NP2] /
    一条[ADJP1]的[NP2] → 1; 一位老师 / 一名老师 → 0."""
    known = sorted(known_classifiers())
    src = _only(S.SOURCE_TOKENS, S.TARGET_TOKENS).list.eval(
        pl.element().filter(pl.element().is_in(known))).list.first()
    tgt = _only(S.TARGET_TOKENS, S.SOURCE_TOKENS).list.eval(
        pl.element().filter(pl.element().is_in(known))).list.first()
    clash = ~pl.concat_str([src, pl.lit("|"), tgt]).is_in(sorted(compatible_pairs()))
    return clash.fill_null(False).cast(pl.Int8).alias("f_classifier_clash")


def _extends(short: str, long: str, long_pos: str) -> pl.Expr:
    n = pl.col(short).list.len()
    tail_tags = pl.col(long_pos).list.slice(n)
    return ((pl.col(long).list.len() > n) & (n > 0)
            & (pl.col(long).list.head(n) == pl.col(short))
            & tail_tags.list.last().is_in(HEAD_TAGS))


def head_change() -> pl.Expr:
    """``f_head_change``: one side is the other plus words that end in a new head noun, time
    word or localiser (画画 的 时候 / 画画, 城市 的 中心 / 城市): Chinese phrases are
    head-final, so the longer side names something else.  A modifier added in front keeps
    the head (旧 城市 / 城市 → 0)."""
    return (_extends(S.SOURCE_TOKENS, S.TARGET_TOKENS, S.TARGET_POS)
            | _extends(S.TARGET_TOKENS, S.SOURCE_TOKENS, S.SOURCE_POS)
            ).fill_null(False).cast(pl.Int8).alias("f_head_change")


#: CTB tags of content words: a pattern side needs one outside its slots
CONTENT_TAGS = ["NN", "NR", "NT", "VV", "VA", "VE", "JJ", "AD", "FW", "OD"]


def no_content() -> pl.Expr:
    """``f_no_content``: a side of a pattern has no content word outside its slots, so the
    slots carry all the meaning (他 [VP1], 这 [NP1], [NP1] 的 [NP2], [NP1] 是 [NP2])."""
    def bare(pos: str) -> pl.Expr:
        return ~pl.col(pos).list.eval(pl.element().is_in(CONTENT_TAGS)).list.any()
    is_pattern = pl.col(S.SOURCE).str.contains(r"\[[A-Z$]+\d\]")
    return (is_pattern & (bare(S.SOURCE_POS) | bare(S.TARGET_POS))
            ).fill_null(False).cast(pl.Int8).alias("f_no_content")


def closed_class_detectors() -> list[pl.Expr]:
    return [determiner_only(), deixis_flip(), classifier_clash(), head_change()]


def meaning_change_detectors() -> list[pl.Expr]:
    """Every closed-class detector that is a feature column (the four above + the rest)."""
    return [*closed_class_detectors(), person_mismatch(), kinship_flip(), no_content()]
