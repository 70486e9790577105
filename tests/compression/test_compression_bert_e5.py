"""BERT-align for compression over the bundled e5-small token vectors (no model directory)."""
from __future__ import annotations

import json

import pytest

from cppdb.config import load_config
from cppdb.errors import ConfigError
from cppdb.extractors.compression.bert_e5 import E5BertAligner
from cppdb.extractors.compression.keywords import BertAligner, Tokens
from cppdb.extractors.compression.pipeline import CompressionSettings, _bert_aligner

CONTENT = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "ADV"})


def toks(text: str) -> Tokens:
    items = [p.rsplit("/", 1) for p in text.split()]
    return Tokens(tuple(w for w, _ in items), tuple(u for _, u in items))


@pytest.fixture(scope="module")
def aligner() -> E5BertAligner:
    return E5BertAligner(layer=7)


@pytest.mark.parametrize("headline, sentence, expected", [
    # headline word -> its paraphrase in the sentence (no shared characters needed)
    ("大会/NOUN 召开/VERB", "大会/NOUN 昨天/NOUN 举行/VERB 。/PUNCT", {1: "举行"}),
    ("今日/NOUN 开幕/VERB", "比赛/NOUN 今天/NOUN 开幕/VERB 。/PUNCT", {0: "今天"}),
    ("暴雨/NOUN 袭击/VERB 南方/NOUN", "南方/NOUN 遭遇/VERB 强降雨/NOUN 。/PUNCT", {0: "强降雨"}),
])
def test_headline_words_link_to_their_paraphrases(aligner, headline, sentence, expected):
    h, s = toks(headline), toks(sentence)
    covered = {i for i, w in enumerate(h.tokens) if w in s.tokens}   # word match did these
    links = aligner.links([h], [s], [covered], CONTENT)[0]
    found = {link.h_start: s.tokens[link.s_start] for link in links}
    for index, word in expected.items():
        assert found[index] == word
    assert all(link.method == "bert" and link.h_start not in covered for link in links)
    assert all(s.upos[link.s_start] != "PUNCT" for link in links)   # never a punctuation


def test_min_cosine_drops_weak_links():
    h, s = toks("故事/NOUN"), toks("统计/VERB 共有/VERB 三人/NOUN 。/PUNCT")
    assert len(E5BertAligner(min_cosine=0.0).links([h], [s], [set()], CONTENT)[0]) == 1
    assert E5BertAligner(min_cosine=0.99).links([h], [s], [set()], CONTENT)[0] == []


@pytest.mark.parametrize("overrides, expected", [
    ({}, E5BertAligner),                                            # auto, no bert_dir
    ({"compression.bert_dir": "/some/bert"}, BertAligner),           # auto picks the local BERT
    ({"compression.bert_encoder": "e5-tokens", "compression.bert_dir": "/x"}, E5BertAligner),
    ({"compression.bert_encoder": "transformers"}, BertAligner),
])
def test_bert_encoder_setting_chooses_the_aligner(overrides, expected):
    section = load_config(overrides={"compression.methods": ["word", "bert"], **overrides}
                          ).section("compression")
    settings = CompressionSettings.from_config(section)
    if expected is BertAligner and not section["bert_dir"]:
        with pytest.raises(ConfigError, match="BERT directory"):
            _bert_aligner(settings)
        return
    assert type(_bert_aligner(settings)) is expected


def test_unknown_bert_encoder_is_refused():
    section = load_config(overrides={"compression.bert_encoder": "gpt"}).section("compression")
    with pytest.raises(ConfigError, match="bert_encoder"):
        CompressionSettings.from_config(section)


def test_describe_names_the_encoder_and_layer(aligner):
    described = aligner.describe()
    assert described["layer"] == 7 and "e5-tokens" in described["signature"]
    json.dumps(described)
