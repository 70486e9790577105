"""Evidence that the two sides of a pair exclude each other (PPDB 2.0's Exclusion).

English pivots join opposites: "increase" links 增加 with 减少 through "increase/decrease"
alignments, "brother" links 哥哥 with 弟弟, "not" drops out of a pivot and leaves 是 / 不是.
Kinds of evidence, each read from the pair's text alone (so they hold on any domain):

``antonym``
    CC-CEDICT glosses (:func:`cppdb.features.glosses.gloss_table`) of the words one side has
    and the other lacks hold the two halves of an English antonym pair
    (:mod:`cppdb.text.antonyms`): 增加 "to increase" / 减少 "to decrease", 男 "male" / 女
    "female", 哥哥 "older brother" / 弟弟 "younger brother".  A side whose glosses hold both
    halves (旧 "old; opposite: new") says nothing.  Phrases and patterns only: a sentence's
    words differ too much for their glosses to mean anything.  When the sides also differ in
    negation the two cancel (不 喜欢 / 讨厌 "dislike" is a paraphrase), so no evidence.
``negation``
    one side is negated and the other is not (parity of negation words: the list of
    :mod:`cppdb.text.negation`, and words that begin with 不 没 未 无 and are no
    dictionary word, 无衣 没少, or with 别 before a verb, 别哭), and the rest is shared: with the negators, the particles
    的了地得, slots and punctuation removed, at least ``negation_overlap`` of the shorter
    side's characters occur on the other side (这 不是 汤姆 的 伞 / 这 是 汤姆 的 雨伞,
    帮 他 / 无法 帮助 他), also once each word only the target has is read as a word only
    the source has that shares half the CC-CEDICT gloss words of the one with fewer
    (``READ_GLOSS_SHARE``; 不是 [NP1] 的 会员 / 是 这 [NP1] 的 成员: 会员 and 成员 both
    "member"; words that hold a negator are not read so; phrases and patterns only, as for
    antonyms).
    A side with a word that holds a negator but may not negate (不满 'dissatisfied', 非常
    'very', 吃不下 'cannot eat more') gives no negation evidence, unless the other side has
    that word without 不, or with 得 in its place (解不开 / 解开, 来不及 / 来得及: a negated
    potential complement; phrases and patterns only).
``number``
    each side names a number value the other does not (:func:`cppdb.features.numbers.
    numbers_changed`, the ``number_flip`` filter's test: 三 名 / 两 名; 三千 / 3000 is kept).
``kin``
    the words one side has and the other lacks name kin of different relations
    (:mod:`cppdb.text.kinship`: 叔叔 / 舅, 侄女 / 外甥女, 妹妹 酷爱 / 女儿 喜欢), whatever else
    differs (the ``kinship_flip`` filter asks that nothing else does).
``person``
    the personal pronouns only one side has name one grammatical person and those only the
    other has another (你 对 我 说 了 谎 / 他 对 我 撒谎: you / he), whatever else differs;
    你 / 您 and 他 / 她 are one person each.  The ``person_mismatch`` filter takes the pairs
    that share no pronoun at all; this kind also sees a swap beside a shared one.  Phrases
    and patterns only: two translations of a sentence may word it from another person.
``name``
    the sides share a word and every word only one side has is a Latin-script word — a name
    or an identifier — with at least one that is no English stopword on each side, and the
    two sides' own words are not spellings of one another (Hayk Baroyan / Hayk Hovsepyan,
    Bruno Fernandes / Bruno Le Maire, 工厂 tuple / 工厂 dict, 输入 py / 输入 pip; Muhammad /
    Mohammad, Mary / Marie, Python / python are kept): English pivots join different
    people of one first name or one surname, and technical text keeps its identifiers in
    Latin script, where another identifier is another thing.

:func:`exclusion_evidence` gives the first evidence per pair (``relation_evidence``); the
ranker marks those pairs ``relation = "Exclusion"`` and ranks them below every other pair of
their type (``rank.exclusion``).  The relation classifier reads the same evidence as
features (:mod:`cppdb.rank.relations`).
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import polars as pl

from cppdb import schema as S
from cppdb.align.words.english import STOPWORDS
from cppdb.annotate.lexicon import cedict_entries
from cppdb.features.glosses import GLOSSED_TYPES, gloss_table
from cppdb.features.numbers import numbers_changed
from cppdb.features.table import number_text
from cppdb.text.antonyms import OPPOSITE, WORD, antonym_table
from cppdb.text.function_words import (
    ZH_COUNTING_CLASSIFIERS,
    ZH_NEAR_IDENTITY_WORDS,
    ZH_PRONOUN_PERSON,
)
from cppdb.text.kinship import GENERIC_KIN_TERMS, kin_relations
from cppdb.text.negation import packaged_negation_words

EVIDENCE = ("antonym", "negation", "number", "kin", "person", "name")
#: a word of Latin script: an English word, a name, an identifier (``os.path``, ``a85encode``)
LATIN_WORD = r"^[A-Za-z][A-Za-z0-9_.'’\-]*$"
#: two sides' own names at least this similar (rapidfuzz ratio, 0-100) are one name spelt twice
NAME_SPELLING_SIMILARITY = 65
EXCLUSION = "Exclusion"
#: the one-character negators of the negation list (removed from a negated word's rest)
NEGATOR_CHARS = "".join(sorted(w for w in packaged_negation_words() if len(w) == 1))
#: those that also negate as the first character of a word the dictionary lacks (无衣, 没少);
#: 别 and 非 there mostly mean "other" and "Africa" or begin a name (别国, 非裔, 非利士)
PREFIX_NEGATORS = "不没未无"
#: 别 negates as the first character of such a word when the rest is a verb, an aspect marker
#: allowed (别哭, 别忘了 "don't"); before a noun it means "other" (别国, 别家)
PROHIBITIVE = "别"
_ASPECT_END = r"[了着过]$"
#: a negated potential complement, V不C (活不下去, 解不开, 来不及)
_INFIX_NEGATION = "^.+不.+$"
#: the share of the CC-CEDICT gloss words of the word with fewer that two words must share
#: to be read as one by the negation evidence (a single shared "feel" or "thing" is not enough)
READ_GLOSS_SHARE = 0.5
_SLOT = r"\[[A-Z$]+\d*\]"
_IGNORED = r"[的了地得\s\p{P}\p{S}]"
#: words whose glosses are not read for antonyms: function words and classifiers (别 "to
#: separate", 间 "to separate" would oppose 进入 "to join") and the negation words (their
#: opposition is the negation evidence's), and generic kin terms (兄弟 "younger brother")
CLOSED_WORDS = sorted(ZH_NEAR_IDENTITY_WORDS | ZH_COUNTING_CLASSIFIERS
                      | packaged_negation_words() | GENERIC_KIN_TERMS)


def side_words(column: str) -> pl.Expr:
    """The side's words (space-separated; slots and empty strings left out)."""
    return pl.col(column).str.split(" ").list.eval(
        pl.element().filter(~pl.element().str.contains(f"^{_SLOT}$") & (pl.element() != "")))


def own_words() -> tuple[pl.Expr, pl.Expr]:
    """The words the source has and the target lacks, and the reverse (slots left out)."""
    src, tgt = side_words(S.SOURCE), side_words(S.TARGET)
    return src.list.set_difference(tgt), tgt.list.set_difference(src)


def _negated(word: pl.Expr) -> pl.Expr:
    """A word of the negation list, or one that begins with a one-character negator and is no
    dictionary word (无衣, 没少; 非常 'very', 别人 'others', 不同 'different' are words of
    their own), or 别 + a verb (别哭)."""
    unlisted = ~word.is_in(gloss_table()["headword"].implode())
    prohibited = word.str.slice(len(PROHIBITIVE)).str.replace(_ASPECT_END, "")
    return (word.is_in(sorted(packaged_negation_words()))
            | (word.str.contains(f"^[{PREFIX_NEGATORS}]") & unlisted)
            | (word.str.starts_with(PROHIBITIVE) & unlisted & prohibited.is_in(_verbs())))


@lru_cache(maxsize=1)
def _verbs() -> list[str]:
    """CC-CEDICT headwords with a verb sense (a gloss that starts with "to ")."""
    return sorted(word for word, entry in cedict_entries().items() if entry.verb_share > 0)


def _undecided(word: pl.Expr) -> pl.Expr:
    """A word that holds a negator but may not negate: a dictionary word that begins with one
    (不满 'dissatisfied', 非常 'very') or one with a negator inside (吃不下 'cannot eat more')."""
    return (word.str.contains(f"[{NEGATOR_CHARS}]") & ~_negated(word))


def _negation_parity(words: pl.Expr) -> pl.Expr:
    return words.list.eval(_negated(pl.element())).list.sum() % 2


def _rest(words: pl.Expr) -> pl.Expr:
    """The side's distinct characters once the negators, particles and punctuation are gone
    (a negation word without a negator character, 难以, goes whole)."""
    kept = words.list.eval(
        pl.when(_negated(pl.element()))
        .then(pl.element().str.replace_all(f"[{NEGATOR_CHARS}]", "")
              .str.replace_all(r"^(?:难以|何尝)$", ""))
        .otherwise(pl.element())).list.join("")
    return kept.str.replace_all(_IGNORED, "").str.split("").list.unique()


def negation_flip(overlap: float) -> pl.Expr:
    """True where one side is negated and the other is not over a shared rest."""
    src, tgt = side_words(S.SOURCE), side_words(S.TARGET)
    rest_s, rest_t = _rest(src), _rest(tgt)
    shorter = pl.min_horizontal(rest_s.list.len(), rest_t.list.len())
    shared = rest_s.list.set_intersection(rest_t).list.len()
    undecided = (src.list.eval(_undecided(pl.element())).list.any()
                 | tgt.list.eval(_undecided(pl.element())).list.any())
    return ((_negation_parity(src) != _negation_parity(tgt)) & (shorter > 0) & ~undecided
            & (shared >= overlap * shorter)).fill_null(False)


def potential_flip() -> pl.Expr:
    """True where a word only one side has is V不C and the other side has VC or V得C (活不下去
    / 活下去, 解不开 / 解开, 来不及 / 来得及); 对不起 "sorry" and 了不起 "amazing" have no
    such partner.  :func:`evidence_columns` counts it only where the sides' other
    negations agree (没 看见 / 看不见 both negate)."""
    own_s, own_t = own_words()

    def affirmed(own: pl.Expr) -> pl.Expr:
        negated = own.list.eval(pl.element().filter(pl.element().str.contains(_INFIX_NEGATION)))
        return pl.concat_list(
            negated.list.eval(pl.element().str.replace("不", "", literal=True)),
            negated.list.eval(pl.element().str.replace("不", "得", literal=True)))

    return ((affirmed(own_s).list.set_intersection(own_t).list.len() > 0)
            | (affirmed(own_t).list.set_intersection(own_s).list.len() > 0)).fill_null(False)


def _gloss_read_target(frame: pl.DataFrame) -> pl.Series:
    """The target with each word only it has replaced by a word only the source has that
    shares READ_GLOSS_SHARE of the gloss words of the one with fewer (the first such, in sort
    order; 会员 / 成员 "member", 还有 / 仍然 "still"; not 难过 / 开心, which share only
    "feel"); words that hold a negator character are neither replaced nor a replacement
    (没有 "not have" / 有)."""
    holds_negator = pl.element().str.contains(f"[{NEGATOR_CHARS}{PREFIX_NEGATORS}]")
    glosses = (gloss_table().with_columns(pl.col("gloss").list.len().alias("_n"))
               .explode("gloss"))

    def glossed(own: pl.Expr, name: str) -> pl.DataFrame:
        return (frame.select(pl.int_range(pl.len()).alias("_row"),
                             own.list.eval(pl.element().filter(~holds_negator)).alias(name))
                .explode(name).drop_nulls(name)
                .join(glosses, left_on=name, right_on="headword")
                .select("_row", name, "gloss", pl.col("_n").alias(f"{name}_n")))

    own_s, own_t = own_words()
    read_as = (glossed(own_t, "_word").join(glossed(own_s, "_as"), on=["_row", "gloss"])
               .group_by("_row", "_word", "_as")
               .agg(pl.len().alias("_shared"), pl.min_horizontal("_word_n", "_as_n").first()
                    .alias("_fewer"))
               .filter(pl.col("_shared") >= READ_GLOSS_SHARE * pl.col("_fewer"))
               .group_by("_row", "_word").agg(pl.col("_as").min()))
    tokens = (frame.select(pl.int_range(pl.len()).alias("_row"),
                           pl.col(S.TARGET).str.split(" ").alias("_word"))
              .explode("_word").with_row_index("_at"))
    # every row has a token (an empty target splits into ""), and groups keep row order
    return (tokens.join(read_as, on=["_row", "_word"], how="left")
            .sort("_at").group_by("_row", maintain_order=True)
            .agg(pl.coalesce("_as", "_word").str.join(" ").alias(S.TARGET)))[S.TARGET]


def _negation_read(frame: pl.DataFrame, plain: pl.Series, open_rows: pl.Series,
                   overlap: float) -> pl.Series:
    """``plain`` (:func:`negation_flip` of the rows), also true on the ``open_rows`` whose
    target read through the dictionary (:func:`_gloss_read_target`) flips: 不是 [NP1] 的
    会员 / 是 这 [NP1] 的 成员.  Only those rows are read."""
    if not open_rows.any():
        return plain
    candidates = frame.filter(open_rows).select(S.SOURCE, S.TARGET)
    read = (candidates.select(S.SOURCE).with_columns(_gloss_read_target(candidates))
            .select(negation_flip(overlap).alias("x"))["x"])
    return plain.scatter(open_rows.arg_true(), read)


def _only_words(frame: pl.DataFrame, side: str, other: str) -> pl.DataFrame:
    """``_row``, ``word``: the words of ``side`` that ``other`` lacks, one row each — less
    closed-class words and words whose characters all occur in ``other`` (上 / 上个月: a cut
    of the same text, not another word)."""
    other_chars = pl.col(other).str.replace_all(r"\s+", "").str.split("")
    return (frame.select(pl.int_range(pl.len()).alias("_row"),
                         side_words(side).list.set_difference(side_words(other)).alias(WORD),
                         other_chars.alias("_other"))
            .explode(WORD).drop_nulls(WORD)
            .filter(~pl.col(WORD).is_in(CLOSED_WORDS)
                    & (pl.col(WORD).str.split("").list.set_difference("_other").list.len() > 0))
            .select("_row", WORD))


def _gloss_words(only: pl.DataFrame, vocabulary: list[str]) -> pl.DataFrame:
    """``_row``, ``gloss``: the antonym-list words in the glosses of each row's words."""
    glosses = (gloss_table().explode("gloss").filter(pl.col("gloss").is_in(vocabulary)))
    return (only.join(glosses, left_on=WORD, right_on="headword")
            .select("_row", "gloss").unique())


def antonyms(frame: pl.DataFrame, table: pl.DataFrame | None = None) -> pl.Series:
    """Per row: ``"a/b"`` when the source's own words gloss as ``a`` and the target's as its
    opposite ``b`` (and neither side glosses as both), else null."""
    table = antonym_table() if table is None else table
    vocabulary = sorted(set(table[WORD]))
    src = _gloss_words(_only_words(frame, S.SOURCE, S.TARGET), vocabulary)
    tgt = _gloss_words(_only_words(frame, S.TARGET, S.SOURCE), vocabulary)
    found = (src.join(table, left_on="gloss", right_on=WORD)
             .join(tgt, left_on=["_row", OPPOSITE], right_on=["_row", "gloss"], how="semi")
             .join(tgt, on=["_row", "gloss"], how="anti")
             .join(src.rename({"gloss": OPPOSITE}), on=["_row", OPPOSITE], how="anti")
             .sort("_row", "gloss", OPPOSITE)
             .group_by("_row", maintain_order=True)
             .agg((pl.col("gloss") + "/" + pl.col(OPPOSITE)).first().alias("pair")))
    rows = pl.DataFrame({"_row": pl.int_range(frame.height, eager=True)})
    return rows.join(found, on="_row", how="left", maintain_order="left")["pair"]


def kin_flip() -> pl.Expr:
    """True where the words only one side has name kin, of different relations per side."""
    own_s, own_t = (kin_relations(own) for own in own_words())
    return ((own_s.list.len() > 0) & (own_t.list.len() > 0)
            & (own_s.list.set_intersection(own_t).list.len() == 0)).fill_null(False)


def person_flip() -> pl.Expr:
    """True where the personal pronouns only one side has name a grammatical person and
    those only the other has another (ZH_PRONOUN_PERSON)."""
    def persons(own: pl.Expr) -> pl.Expr:
        return own.list.eval(pl.element().replace_strict(
            list(ZH_PRONOUN_PERSON), list(ZH_PRONOUN_PERSON.values()), default=None,
            return_dtype=pl.Int8)).list.drop_nulls().list.unique()
    own_s, own_t = (persons(own) for own in own_words())
    return ((own_s.list.len() > 0) & (own_t.list.len() > 0)
            & (own_s.list.set_intersection(own_t).list.len() == 0)).fill_null(False)


def name_change(frame: pl.DataFrame) -> pl.Series:
    """True where the sides share a word, every word only one side has is a Latin-script
    word, each side has such words and one at least that is no English stopword, and the
    two sides' own words are not one spelling of the other (rapidfuzz ratio of the lower-cased
    words below NAME_SPELLING_SIMILARITY)."""
    from rapidfuzz.distance import Indel
    from rapidfuzz.process import cpdist

    src, tgt = side_words(S.SOURCE), side_words(S.TARGET)
    own_s, own_t = own_words()
    stopwords = sorted(STOPWORDS)

    def all_latin(own: pl.Expr) -> pl.Expr:
        return ((own.list.len() > 0)
                & own.list.eval(pl.element().str.contains(LATIN_WORD)).list.all()
                & own.list.eval(~pl.element().str.to_lowercase().is_in(stopwords)).list.any())

    work = frame.select(
        (all_latin(own_s) & all_latin(own_t)
         & (src.list.set_intersection(tgt).list.len() > 0)).fill_null(False).alias("_names"),
        own_s.list.join(" ").fill_null("").str.to_lowercase().alias("_s"),
        own_t.list.join(" ").fill_null("").str.to_lowercase().alias("_t"))
    similarity = 100.0 * (1.0 - cpdist(work["_s"].to_list(), work["_t"].to_list(),
                                       scorer=Indel.normalized_distance))
    return (work["_names"] & pl.Series(similarity < NAME_SPELLING_SIMILARITY)).alias("x_name")


def _phrasal(frame: pl.DataFrame) -> pl.Expr:
    """True for phrases and patterns, the pair types whose words the dictionary speaks to
    (every row of a frame without a type)."""
    return (pl.col(S.TYPE).is_in(GLOSSED_TYPES).fill_null(False) if S.TYPE in frame.columns
            else pl.lit(True))


def evidence_columns(frame: pl.DataFrame, negation_overlap: float) -> pl.DataFrame:
    """``x_antonym`` (the pair of words, or null), ``x_negation``, ``x_number``, ``x_kin``,
    ``x_person`` and ``x_name`` (bool) for every row of ``frame`` (``source``, ``target``,
    optional ``type``); ``x_negation_rest``: the negation evidence over the rest as written
    (:func:`negation_flip`, the relation classifier's ``r_negation_rest``)."""
    glossed = _phrasal(frame)
    pair = antonyms(frame)
    parity_differs = (_negation_parity(side_words(S.SOURCE))
                      != _negation_parity(side_words(S.TARGET)))
    work = frame.select(S.SOURCE, S.TARGET, (glossed & ~parity_differs).alias("_glossed"),
                        (glossed & parity_differs).fill_null(False).alias("_read"),
                        negation_flip(negation_overlap).alias("x_negation_rest"),
                        kin_flip().alias("x_kin"), (glossed & person_flip()).alias("x_person"),
                        # a negation elsewhere cancels it (没 看见 / 看不见)
                        (glossed & ~parity_differs & potential_flip()).alias("_potential"))
    numbers = numbers_changed(work, number_text(S.SOURCE), number_text(S.TARGET))
    plain = work["x_negation_rest"]
    negation = (_negation_read(work, plain, work["_read"] & ~plain, negation_overlap)
                | work["_potential"])
    return work.select(
        pl.when(pl.col("_glossed")).then(pair).alias("x_antonym"),
        negation.alias("x_negation"), "x_negation_rest", numbers.alias("x_number"), "x_kin",
        "x_person", name_change(frame))


def exclusion_evidence(frame: pl.DataFrame, kinds: Sequence[str] = EVIDENCE,
                       negation_overlap: float = 0.75) -> pl.Series:
    """``relation_evidence`` per row: ``"antonym a/b"``, ``"negation"``, ``"number"``,
    ``"kin"``, ``"person"`` or ``"name"`` (the first of ``kinds`` that holds, in the order of
    EVIDENCE), null where none does."""
    if not kinds or frame.height == 0:
        return pl.Series(S.RELATION_EVIDENCE, [None] * frame.height, dtype=pl.String)
    return evidence_text(evidence_columns(frame, negation_overlap), kinds)


def evidence_text(found: pl.DataFrame, kinds: Sequence[str] = EVIDENCE) -> pl.Series:
    """``relation_evidence`` from the columns of :func:`evidence_columns` (the first of
    ``kinds`` that holds; null where none does)."""
    text: pl.Expr = pl.lit(None, dtype=pl.String)
    for kind in reversed(EVIDENCE):
        if kind not in kinds:
            continue
        if kind == "antonym":
            text = pl.when(pl.col("x_antonym").is_not_null()).then(
                pl.lit("antonym ") + pl.col("x_antonym")).otherwise(text)
        else:
            text = pl.when(pl.col(f"x_{kind}")).then(pl.lit(kind)).otherwise(text)
    return found.select(text.alias(S.RELATION_EVIDENCE))[S.RELATION_EVIDENCE]
