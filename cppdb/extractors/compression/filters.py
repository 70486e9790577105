"""The SPEC §4 pair filters, each a named, configurable rule.

Zhao et al. (2022, App. A) keep a (headline H, first sentence S) pair only if: content-word
overlap R >= 0.35; neither contains Latin letters; S ends with a full stop; H is shorter than
S; both have 5..100 Chinese characters; both are simplified Chinese.  Text rules run before
tokenisation (cheap); ``content_overlap`` needs UPOS tags and the keyword alignment, and runs
after jieba + alignment but before the (expensive) dependency parse.  A pair is
rejected by the first rule it fails, in the configured order, and the rule name is recorded.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cppdb.annotate.ud import TaggedText
from cppdb.defaults import toml_defaults
from cppdb.errors import ConfigError
from cppdb.extractors.compression.settings import compression_toml
from cppdb.text.convert import default_converter

_COMPRESSION = toml_defaults("compression")

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z\uff21-\uff3a\uff41-\uff5a]")
_CLOSERS = "”’」』）)》】\"' \t\u3000"
OVERLAP_DENOMINATORS = ("sentence_tokens", "headline_content", "sentence_content")
OVERLAP_SOURCES = ("alignment", "word_match")


@dataclass(frozen=True)
class FilterSettings:
    """The thresholds of the filters (``[compression]`` config keys of the same names)."""

    min_chars: int = _COMPRESSION["min_chars"]
    max_chars: int = _COMPRESSION["max_chars"]
    sentence_end: str = _COMPRESSION["sentence_end"]
    min_content_overlap: float = _COMPRESSION["min_content_overlap"]
    overlap_denominator: str = _COMPRESSION["overlap_denominator"]
    overlap_source: str = _COMPRESSION["overlap_source"]
    content_upos: frozenset[str] = frozenset(_COMPRESSION["content_upos"])

    @classmethod
    def from_config(cls, section: Any) -> "FilterSettings":
        toml = compression_toml(section)
        if toml.overlap_denominator not in OVERLAP_DENOMINATORS:
            raise ConfigError(
                f"unknown compression.overlap_denominator '{toml.overlap_denominator}'",
                hint=f"choose one of: {', '.join(OVERLAP_DENOMINATORS)}")
        if toml.overlap_source not in OVERLAP_SOURCES:
            raise ConfigError(
                f"unknown compression.overlap_source '{toml.overlap_source}'",
                hint=f"choose one of: {', '.join(OVERLAP_SOURCES)}")
        return cls(min_chars=toml.min_chars, max_chars=toml.max_chars,
                   sentence_end=toml.sentence_end,
                   min_content_overlap=toml.min_content_overlap,
                   overlap_denominator=toml.overlap_denominator,
                   overlap_source=toml.overlap_source,
                   content_upos=frozenset(toml.content_upos))


def han_count(text: str) -> int:
    """Number of Chinese (Han) characters: the unit of the length rules and rates."""
    return len(_HAN.findall(text))


# -- text rules: (headline, sentence, settings) -> None if the pair passes, else a detail -----
def rule_simplified(headline: str, sentence: str, settings: FilterSettings) -> str | None:
    converter = default_converter("t2s")   # the shared `converter` backend
    for name, text in (("headline", headline), ("sentence", sentence)):
        simplified = converter.convert_one(text)
        if simplified != text:
            changed = "".join(sorted({a for a, b in zip(text, simplified) if a != b}))
            return f"{name} has traditional characters: {changed[:10]}"
    return None


def rule_no_latin(headline: str, sentence: str, settings: FilterSettings) -> str | None:
    for name, text in (("headline", headline), ("sentence", sentence)):
        found = _LATIN.search(text)
        if found:
            return f"{name} has Latin letters at {found.start()}: {found.group()!r}"
    return None


def rule_full_stop(headline: str, sentence: str, settings: FilterSettings) -> str | None:
    core = sentence.rstrip(_CLOSERS)
    if core and core[-1] in settings.sentence_end:
        return None
    return f"sentence does not end with one of {settings.sentence_end!r}"


def rule_length(headline: str, sentence: str, settings: FilterSettings) -> str | None:
    for name, text in (("headline", headline), ("sentence", sentence)):
        count = han_count(text)
        if not settings.min_chars <= count <= settings.max_chars:
            return (f"{name} has {count} Chinese characters, outside "
                    f"{settings.min_chars}..{settings.max_chars}")
    return None


def rule_headline_shorter(headline: str, sentence: str, settings: FilterSettings) -> str | None:
    h_len, s_len = len(headline.strip()), len(sentence.strip())
    if h_len < s_len:
        return None
    return f"headline ({h_len} characters) is not shorter than the sentence ({s_len})"


# -- tagged rule --------------------------------------------------------------------------------
def content_overlap(headline: TaggedText, sentence: TaggedText, settings: FilterSettings,
                    aligned: frozenset[int] | None = None) -> float:
    """R = overlapping content words / the configured denominator.

    Overlapping content words are, with ``aligned`` (headline token indices linked by the
    enabled alignment methods; ``overlap_source = "alignment"``), the aligned headline content
    tokens — so abbreviations and paraphrases count; without it (``"word_match"``, the paper),
    the distinct content words occurring in both H and S.
    """
    content = settings.content_upos
    h_content = [i for i, u in enumerate(headline.upos) if u in content]
    s_words = {t for t, u in zip(sentence.tokens, sentence.upos) if u in content}
    if aligned is None:
        shared = len({headline.tokens[i] for i in h_content} & s_words)
    else:
        shared = sum(1 for i in h_content if i in aligned)
    if settings.overlap_denominator == "sentence_tokens":
        denominator = len(sentence.tokens)
    elif settings.overlap_denominator == "headline_content":
        denominator = len(h_content)
    else:
        denominator = len(s_words)
    return shared / denominator if denominator else 0.0


def rule_content_overlap(headline: TaggedText, sentence: TaggedText, settings: FilterSettings,
                         aligned: frozenset[int] | None = None) -> str | None:
    ratio = content_overlap(headline, sentence, settings, aligned)
    if ratio >= settings.min_content_overlap:
        return None
    return (f"content-word overlap R={ratio:.3f} < {settings.min_content_overlap} "
            f"({settings.overlap_source}/{settings.overlap_denominator})")


@dataclass(frozen=True)
class FilterRule:
    """A named filter: ``kind`` is "text" (raw strings) or "tagged" (jieba tokens + UPOS);
    a tagged rule with ``alignment`` reads the aligned headline tokens whatever the overlap
    source."""

    name: str
    kind: str
    description: str
    check: Callable[..., str | None]
    alignment: bool = False


def rule_headline_actor(headline: TaggedText, sentence: TaggedText, settings: FilterSettings,
                        aligned: frozenset[int] | None = None) -> str | None:
    """A headline that opens with a name S never links to (李克强对…作出批示 over a first
    sentence about the meeting) reports another event or another angle of it: no deletion of
    S says what the headline says."""
    if not headline.upos or headline.upos[0] != "PROPN" or aligned is None or 0 in aligned:
        return None
    return f"the headline opens with the name {headline.tokens[0]}, which S does not mention"


RULES: dict[str, FilterRule] = {r.name: r for r in (
    FilterRule("simplified", "text", "H and S are simplified Chinese (OpenCC t2s is a no-op)",
               rule_simplified),
    FilterRule("no_latin", "text", "no Latin letters in H or S", rule_no_latin),
    FilterRule("full_stop", "text", "S ends with a full stop", rule_full_stop),
    FilterRule("length", "text", "H and S have min_chars..max_chars Chinese characters",
               rule_length),
    FilterRule("headline_shorter", "text", "H is shorter than S", rule_headline_shorter),
    FilterRule("content_overlap", "tagged", "content-word overlap R >= min_content_overlap",
               rule_content_overlap),
    FilterRule("headline_actor", "tagged", "a name opening the headline is aligned to S",
               rule_headline_actor, alignment=True),
)}

#: rules applied after parsing/alignment by the builder (not configurable away: they are what
#: makes a pair a compression at all), listed here so reports can name every rule in one place.
POST_RULES: dict[str, str] = {
    "no_keywords": "no headline word could be aligned to the sentence",
    "not_a_sentence": "the compression does not read as a sentence (the detail names the "
                      "reason: no_predicate, not_a_clause, ends_in_function_word, "
                      "verb_without_object)",
    "compression_too_long": "chars(C) > max_compression_ratio * chars(H)",
    "unacceptable_risk": "P(a reader finds the compression unacceptable) > max_risk "
                         "(the judged risk model, compression/risk.py)",
}


@dataclass(frozen=True)
class FilterChain:
    """The configured rules, split into the cheap text stage and the tagged stage."""

    text_rules: tuple[FilterRule, ...]
    tagged_rules: tuple[FilterRule, ...]
    settings: FilterSettings

    @classmethod
    def from_config(cls, names: Sequence[str], settings: FilterSettings) -> "FilterChain":
        unknown = [n for n in names if n not in RULES]
        if unknown:
            raise ConfigError(f"unknown compression filter(s): {', '.join(unknown)}",
                              hint=f"known filters: {', '.join(RULES)}")
        rules = [RULES[n] for n in names]
        return cls(tuple(r for r in rules if r.kind == "text"),
                   tuple(r for r in rules if r.kind == "tagged"), settings)

    def check_text(self, headline: str, sentence: str) -> tuple[str, str] | None:
        """(rule, detail) of the first failing text rule, or None."""
        for rule in self.text_rules:
            detail = rule.check(headline, sentence, self.settings)
            if detail is not None:
                return rule.name, detail
        return None

    def check_tagged(self, headline: TaggedText, sentence: TaggedText,
                     aligned: frozenset[int]) -> tuple[str, str] | None:
        """(rule, detail) of the first failing tagged rule; ``aligned`` = linked H tokens."""
        use = aligned if self.settings.overlap_source == "alignment" else None
        for rule in self.tagged_rules:
            detail = rule.check(headline, sentence, self.settings,
                                aligned if rule.alignment else use)
            if detail is not None:
                return rule.name, detail
        return None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.text_rules + self.tagged_rules)
