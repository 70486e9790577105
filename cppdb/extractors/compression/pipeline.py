"""Per-batch compression: filter -> jieba -> align -> overlap filter -> parse -> subtree -> DTT.

Cheap work first: text rules, then jieba + the cheap aligners, then the content-overlap rule;
only the survivors are parsed (one parser call per batch).  Each pair ends as an
:class:`Outcome` — kept, or rejected with the name of the rule — so nothing is lost.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cppdb.annotate.types import AnnotatedSentence
from cppdb.annotate.ud import TaggedText, is_time_word, tokenize_tag
from cppdb.defaults import toml_defaults
from cppdb.errors import BadInputError, ConfigError
from cppdb.extractors.compression.bert_e5 import E5BertAligner
from cppdb.extractors.compression.dtt import DTTAddition, DTTRules
from cppdb.extractors.compression.filters import FilterChain, FilterSettings
from cppdb.extractors.compression.keywords import AlignSettings, BertAligner, Link, align_batch
from cppdb.extractors.compression.lexicon import cedict_lexicon
from cppdb.extractors.compression.paraphrase_table import ParaphraseTable, load_paraphrase_table
from cppdb.extractors.compression.reader import NewsPair
from cppdb.extractors.compression.risk import KeptCompression, RiskModel, load_risk_model
from cppdb.extractors.compression.sentence import (PROBLEMS, SentenceRules, Tree,
                                                   complete_sentence, sentence_problem)
from cppdb.extractors.compression.settings import CompressionToml, compression_toml
from cppdb.extractors.compression.subtree import ROOT_POLICIES, minimal_rooted_subtree
from cppdb.extractors.compression.surface import (SurfaceRules, only_a_title, repair_units,
                                                  object_cut, subject_dropped)
from cppdb.registry import load_backend

_COMPRESSION = toml_defaults("compression")

#: output fields the pipeline writes; carried input fields with these names get "input_".
RESERVED = frozenset({
    "line", "headline", "sentence", "tokens", "upos", "heads", "deprels", "labels",
    "compression", "links", "keywords", "dtt_added", "compression_rate", "compression_chars",
    "headline_chars", "sentence_chars", "headline_ratio", "rule", "detail", "status"})


@dataclass(frozen=True)
class CompressionSettings:
    """Everything that changes a compression (built from the ``[compression]`` section)."""

    filters: FilterChain
    align: AlignSettings
    dtt: bool
    dtt_rules: DTTRules
    subtree_root: str
    max_ratio: float
    parser: str
    parser_options: tuple[tuple[str, Any], ...]
    bert_dir: str
    bert_batch_size: int
    bert_min_cosine: float
    bert_encoder: str = _COMPRESSION["bert_encoder"]
    bert_layer: int = _COMPRESSION["bert_layer"]
    sentence: SentenceRules = SentenceRules.from_config(_COMPRESSION)
    ratio_base: str = _COMPRESSION["ratio_base"]
    surface: SurfaceRules = SurfaceRules(tuple(_COMPRESSION["surface_rules"]))
    max_risk: float = _COMPRESSION["max_risk"]
    risk_model: str = _COMPRESSION["risk_model"]

    @classmethod
    def from_config(cls, section: Any) -> "CompressionSettings":
        """From the typed ``[compression]`` section (a loaded table is converted)."""
        toml = compression_toml(section)
        if toml.subtree_root not in ROOT_POLICIES:
            raise ConfigError(f"unknown compression.subtree_root '{toml.subtree_root}'",
                              hint=f"choose from: {', '.join(ROOT_POLICIES)}")
        filters = FilterChain.from_config(toml.filters, FilterSettings.from_config(toml))
        align = AlignSettings(methods=toml.methods, content_upos=frozenset(toml.content_upos),
                              abbrev_upos=frozenset(toml.abbrev_upos),
                              paraphrase_max_tokens=toml.paraphrase_max_tokens)
        if toml.parser == "udchinese":
            options: tuple[tuple[str, Any], ...] = (("tagger", toml.udchinese_tagger),)
        else:
            options = (("stanza_dir", toml.stanza_dir),)
        if not 0.0 <= toml.max_risk <= 1.0:
            raise ConfigError(f"compression.max_risk = {toml.max_risk} is not a probability",
                              hint="use a value in 0..1 (0 turns the risk check off)")
        return cls(filters=filters, align=align, dtt=toml.dtt,
                   dtt_rules=DTTRules.from_config(toml), subtree_root=toml.subtree_root,
                   max_ratio=toml.max_compression_ratio, parser=toml.parser,
                   parser_options=options, bert_dir=toml.bert_dir,
                   bert_batch_size=toml.bert_batch_size, bert_min_cosine=toml.bert_min_cosine,
                   bert_encoder=_bert_encoder(toml), bert_layer=toml.bert_layer,
                   sentence=SentenceRules.from_config(toml), ratio_base=_ratio_base(toml),
                   surface=SurfaceRules(toml.surface_rules), max_risk=toml.max_risk,
                   risk_model=toml.risk_model)


_BERT_ENCODERS = ("auto", "e5-tokens", "transformers")
RATIO_BASES = ("expanded_headline", "headline")


def _ratio_base(toml: CompressionToml) -> str:
    if toml.ratio_base not in RATIO_BASES:
        raise ConfigError(f"unknown compression.ratio_base '{toml.ratio_base}'",
                          hint=f"choose from: {', '.join(RATIO_BASES)}")
    return toml.ratio_base


def _bert_encoder(toml: CompressionToml) -> str:
    """``auto``: a configured local BERT directory wins, else the bundled e5-small."""
    if toml.bert_encoder not in _BERT_ENCODERS:
        raise ConfigError(f"unknown compression.bert_encoder '{toml.bert_encoder}'",
                          hint=f"choose from: {', '.join(_BERT_ENCODERS)}")
    if toml.bert_encoder == "auto":
        return "transformers" if toml.bert_dir else "e5-tokens"
    return toml.bert_encoder


def _bert_aligner(settings: "CompressionSettings") -> BertAligner:
    if settings.bert_encoder == "e5-tokens":
        return E5BertAligner(layer=settings.bert_layer, batch_size=settings.bert_batch_size,
                             min_cosine=settings.bert_min_cosine)
    return BertAligner(settings.bert_dir, batch_size=settings.bert_batch_size,
                       min_cosine=settings.bert_min_cosine)


@dataclass(frozen=True)
class Outcome:
    """One pair's result, one row of ``records.parquet`` (the columns of
    :data:`cppdb.schema.COMPRESSION_RECORD_SCHEMA`, by name): ``status`` is "kept" or
    "rejected" (then ``rule`` and ``detail`` say why); what the pair did not reach is None."""

    line: int
    status: str
    rule: str
    headline: str
    sentence: str
    detail: str | None = None
    carried: tuple[dict[str, str], ...] = ()       # CARRIED_FIELD structs
    links: tuple[dict[str, Any], ...] | None = None   # COMPRESSION_LINK structs
    tokens: tuple[str, ...] | None = None
    upos: tuple[str, ...] | None = None
    heads: tuple[int, ...] | None = None
    deprels: tuple[str, ...] | None = None
    labels: tuple[int, ...] | None = None
    compression: str | None = None
    keywords: tuple[int, ...] | None = None
    dtt_added: tuple[dict[str, Any], ...] | None = None   # DTT_ADDITION structs
    compression_chars: int | None = None
    headline_chars: int | None = None
    sentence_chars: int | None = None
    link_methods: tuple[str, ...] = ()
    link_h_tokens: tuple[int, ...] = ()
    n_keywords: int = 0
    n_headline_content: int = 0
    n_headline_aligned: int = 0
    compression_rate: float | None = None
    headline_ratio: float | None = None
    dtt_rules: tuple[str, ...] = ()


def _carried(pair: NewsPair) -> tuple[dict[str, str], ...]:
    """The input's other fields, renamed ``input_…`` where they clash with an output field."""
    return tuple({"name": f"input_{key}" if key in RESERVED else key,
                  "json": json.dumps(value, ensure_ascii=False)}
                 for key, value in pair.extra.items())


def _chars(text: str) -> int:
    return len("".join(text.split()))


class CompressionPipeline:
    """Holds the loaded parser / table / BERT and processes batches of pairs."""

    def __init__(self, settings: CompressionSettings, table: ParaphraseTable | None,
                 parser: Any, bert: BertAligner | None = None,
                 risk: RiskModel | None = None) -> None:
        self.settings = settings
        self.table = table
        self.parser = parser
        self.bert = bert
        self.risk = risk

    def process(self, pairs: Sequence[NewsPair]) -> list[Outcome]:
        outcomes: dict[int, Outcome] = {}
        survivors: list[NewsPair] = []
        for pair in pairs:
            failed = self.settings.filters.check_text(pair.headline, pair.sentence)
            if failed:
                outcomes[pair.line] = self._reject(pair, *failed)
            else:
                survivors.append(pair)
        tagged = tokenize_tag([t for p in survivors for t in (p.headline, p.sentence)])
        heads_tt, sents_tt = tagged[0::2], tagged[1::2]
        links = align_batch(heads_tt, sents_tt, self.settings.align, self.table, self.bert)
        to_parse: list[tuple[NewsPair, TaggedText, TaggedText, list[Link]]] = []
        for pair, h_tt, s_tt, pair_links in zip(survivors, heads_tt, sents_tt, links):
            aligned = frozenset(i for link in pair_links for i in range(link.h_start, link.h_end))
            failed = self.settings.filters.check_tagged(h_tt, s_tt, aligned)
            if not failed and not s_tt.tokens:
                failed = ("no_keywords", "the sentence has no tokens")
            if not failed and not pair_links:
                failed = ("no_keywords", "no headline word aligned to the sentence")
            if failed:
                outcomes[pair.line] = self._reject(pair, *failed, h_tt, s_tt, pair_links)
            else:
                to_parse.append((pair, h_tt, s_tt, pair_links))
        parsed = self.parser.parse([item[2] for item in to_parse]) if to_parse else []
        for (pair, h_tt, s_tt, pair_links), tree in zip(to_parse, parsed):
            if tree.tokens != s_tt.tokens:
                raise BadInputError(f"line {pair.line}: the parser changed the tokenisation "
                                    f"({len(s_tt.tokens)} -> {len(tree.tokens)} tokens)")
            outcomes[pair.line] = self._compress(pair, h_tt, tree, pair_links, s_tt.upos)
        self._check_risk(outcomes)
        return [outcomes[p.line] for p in pairs]

    def _check_risk(self, outcomes: dict[int, Outcome]) -> None:
        """Reject the kept compressions a reader would likely reject (one model call)."""
        if self.risk is None or self.settings.max_risk <= 0:
            return
        kept = [o for o in outcomes.values() if o.status == "kept"]
        risks = self.risk.risk([kept_compression(o) for o in kept])
        for outcome, risk in zip(kept, risks):
            if risk > self.settings.max_risk:
                outcomes[outcome.line] = replace(
                    outcome, status="rejected", rule="unacceptable_risk",
                    detail=f"risk {risk:.2f} > max_risk {self.settings.max_risk}")

    def _reject(self, pair: NewsPair, rule: str, detail: str, headline: TaggedText | None = None,
                sentence: TaggedText | None = None, links: Sequence[Link] = ()) -> Outcome:
        aligned = sentence is not None and headline is not None
        return Outcome(pair.line, "rejected", rule, pair.headline, pair.sentence, detail=detail,
                       carried=_carried(pair),
                       links=(tuple(link.to_json(headline.tokens, sentence.tokens)
                                    for link in links) if aligned else None),
                       link_methods=tuple(link.method for link in links),
                       link_h_tokens=tuple(link.h_end - link.h_start for link in links),
                       n_headline_aligned=len({i for link in links
                                               for i in range(link.h_start, link.h_end)}),
                       n_headline_content=(0 if headline is None else sum(
                           1 for u in headline.upos if u in self.settings.align.content_upos)))

    def _compress(self, pair: NewsPair, headline: TaggedText, tree: AnnotatedSentence,
                  links: Sequence[Link], jieba_upos: Sequence[str]) -> Outcome:
        keywords = sorted({i for link in links for i in link.sentence_tokens()})
        kept, added = self._kept(tree, keywords, jieba_upos)
        labels = [1 if i in kept else 0 for i in range(len(tree.tokens))]
        compression = "".join(t for t, keep in zip(tree.tokens, labels) if keep)
        c_chars, h_chars = _chars(compression), _chars(pair.headline)
        s_chars = _chars(pair.sentence)
        rate = c_chars / s_chars if s_chars else 0.0
        base = (_expanded_chars(headline, tree.tokens, links, h_chars)
                if self.settings.ratio_base == "expanded_headline" else h_chars)
        ratio = c_chars / base if base else float("inf")
        status, rule, detail = "kept", "", None
        problem = (_problem(tree, kept, keywords, jieba_upos) if self.settings.sentence.check
                   else None)
        if problem is not None:
            status, rule, detail = "rejected", "not_a_sentence", f"{problem[0]}: {problem[1]}"
        elif self.settings.max_ratio > 0 and ratio > self.settings.max_ratio:
            status, rule = "rejected", "compression_too_long"
            detail = (f"compression has {c_chars} characters > {self.settings.max_ratio} x "
                      f"headline ({h_chars}, {base} with abbreviations expanded)")
        content = self.settings.align.content_upos
        return Outcome(pair.line, status, rule, pair.headline, pair.sentence, detail=detail,
                       carried=_carried(pair),
                       links=tuple(link.to_json(headline.tokens, tree.tokens) for link in links),
                       tokens=tuple(tree.tokens), upos=tuple(tree.pos), heads=tuple(tree.heads),
                       deprels=tuple(tree.deprels), labels=tuple(labels),
                       compression=compression, keywords=tuple(keywords),
                       dtt_added=tuple({"token": a.token, "word": tree.tokens[a.token],
                                        "head": a.head, "rule": a.rule, "deprel": a.deprel}
                                       for a in added),
                       compression_chars=c_chars, headline_chars=h_chars, sentence_chars=s_chars,
                       link_methods=tuple(link.method for link in links),
                       link_h_tokens=tuple(link.h_end - link.h_start for link in links),
                       n_keywords=len(keywords),
                       n_headline_content=sum(1 for u in headline.upos if u in content),
                       n_headline_aligned=len({i for link in links
                                               for i in range(link.h_start, link.h_end)}),
                       compression_rate=rate, headline_ratio=ratio,
                       dtt_rules=tuple(a.rule for a in added))

    def _kept(self, tree: AnnotatedSentence, keywords: Sequence[int], jieba_upos: Sequence[str]
              ) -> tuple[frozenset[int], tuple[DTTAddition, ...]]:
        """Minimal subtree over the keywords, closed under the DTT and the sentence rules,
        then with the units the parse cut through made whole (surface rules)."""
        parse = _tree(tree)
        kept = minimal_rooted_subtree(parse.heads, keywords, root=self.settings.subtree_root)
        dtt = self.settings.dtt_rules if self.settings.dtt else None
        kept, added = complete_sentence(parse, kept, self.settings.sentence, dtt)
        kept, repaired = repair_units(parse.tokens, jieba_upos, kept, keywords,
                                      self.settings.surface, parse.upos,
                                      cedict_lexicon().is_verb)
        return kept, added + tuple(DTTAddition(token, parse.heads[token], rule,
                                               parse.deprels[token]) for token, rule in repaired)


def _problem(tree: AnnotatedSentence, kept: frozenset[int], keywords: Sequence[int],
             jieba_upos: Sequence[str]) -> tuple[str, str] | None:
    if only_a_title(tree.tokens, jieba_upos, kept):
        return "only_a_title", PROBLEMS["only_a_title"]
    if subject_dropped(tree.tokens, jieba_upos, kept, is_time_word):
        return "subject_dropped", PROBLEMS["subject_dropped"]
    if object_cut(tree.tokens, jieba_upos, kept):
        return "object_cut", PROBLEMS["object_cut"]
    return sentence_problem(_tree(tree), kept, keywords)


def _expanded_chars(headline: TaggedText, sentence: Sequence[str], links: Sequence[Link],
                    h_chars: int) -> int:
    """Characters of H with each abbreviation read as its long form in S (京 as 北京, 中俄 as
    中国 + 俄罗斯): the long form says no more than the headline, so the length rule must not
    count it against the compression."""
    spans: dict[tuple[int, int], int] = {}
    for link in links:
        if link.method == "abbrev":
            key = (link.h_start, link.h_end)
            spans[key] = spans.get(key, 0) + _chars("".join(sentence[link.s_start:link.s_end]))
    return h_chars + sum(max(0, n - _chars("".join(headline.tokens[a:b])))
                         for (a, b), n in spans.items())


def _tree(tree: AnnotatedSentence) -> Tree:
    return Tree(tree.tokens, tree.pos, tree.heads, tree.deprels)


def kept_compression(outcome: Outcome) -> KeptCompression:
    """What the risk model reads of a kept outcome."""
    return KeptCompression(outcome.headline, outcome.sentence, outcome.tokens or (),
                           outcome.upos or (), outcome.deprels or (), outcome.labels or ())


def load_pipeline(settings: CompressionSettings, table_path: str | Path | None,
                  table_options: tuple[tuple[str, Any], ...] = ()) -> CompressionPipeline:
    """Build the pipeline in this process (also the initializer of worker processes)."""
    table = load_paraphrase_table(table_path, **dict(table_options)) if table_path else None
    parser = load_backend("ud_parser", settings.parser, **dict(settings.parser_options))
    bert = None
    if "bert" in settings.align.methods:
        bert = _bert_aligner(settings)
        bert.check()
    risk = load_risk_model(settings.risk_model) if settings.max_risk > 0 else None
    return CompressionPipeline(settings, table, parser, bert, risk)
