"""The judged risk check: structural features, the packaged model, its setting."""
from __future__ import annotations

import json

import pytest

from cppdb.errors import BadInputError, ConfigError
from cppdb.extractors.compression.pipeline import CompressionSettings
from cppdb.extractors.compression.risk import (KeptCompression, load_risk_model,
                                               risk_features)
from cppdb.extractors.compression.settings import compression_toml
from cppdb.extractors.compression.surface import object_cut

TOKENS = ("大雨", "导致", "南方", "省份", "出现", "严重", "灾害", "，", "数万", "人", "被", "转移", "。")
UPOS = ("NOUN", "VERB", "NOUN", "NOUN", "VERB", "ADJ", "NOUN", "PUNCT", "NUM", "NOUN", "ADP",
        "VERB", "PUNCT")
RELS = ("nsubj", "root", "nsubj", "nmod", "ccomp", "amod", "obj", "punct", "nummod", "nsubj",
        "aux:pass", "conj", "punct")


def _item(labels, headline="南方多省遭暴雨袭击"):
    return KeptCompression(headline, "".join(TOKENS), TOKENS, UPOS, RELS, labels)


def test_features_name_what_was_dropped_between_kept_words_and_what_the_headline_lost():
    whole_clause = _item((1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0))
    gapped = _item((1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0))
    assert risk_features(whole_clause)["first_upos:NOUN"] == 1
    assert "drop_upos:NOUN" not in risk_features(whole_clause)       # nothing dropped inside
    features = risk_features(gapped)
    assert features["drop_upos:NOUN"] == 2 and features["drop_rel:nsubj"] == 1
    assert features["drop_upos:ADP"] == 1 and "drop_upos:PUNCT" not in features
    assert "drop_clause_mark" not in features                    # the comma itself was kept
    lost = risk_features(_item((0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0)))
    assert lost["headline_lost_chars"] == 4         # 南 方 省 雨 are in S and not in C
    assert risk_features(_item((0,) * len(TOKENS))) == {"empty": 1.0}


def test_the_packaged_model_scores_a_cut_clause_above_the_whole_one():
    model = load_risk_model("")
    whole = _item((1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0))
    cut = _item((0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0))
    risks = model.risk([whole, cut])
    assert 0 <= risks[0] < risks[1] <= 1
    assert list(model.risk([whole, cut])) == list(risks)                  # same answer twice


def test_object_cut_sees_a_verb_whose_object_was_dropped_in_its_clause():
    assert object_cut(TOKENS, UPOS, [0, 1, 2, 3, 4])                # …出现 | 严重 灾害
    assert not object_cut(TOKENS, UPOS, [0, 1, 2, 3, 4, 5, 6])        # the object kept
    assert not object_cut(TOKENS, UPOS, [8, 9, 10, 11])               # ends the sentence


def test_bad_model_files_and_bad_max_risk_are_refused(tmp_path):
    missing = tmp_path / "none.json"
    with pytest.raises(BadInputError, match="not found"):
        load_risk_model(str(missing))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": "something-else"}), "utf-8")
    with pytest.raises(BadInputError, match="not a cppdb compression risk model"):
        load_risk_model(str(other))
    with pytest.raises(ConfigError, match="max_risk"):
        CompressionSettings.from_config(compression_toml({"max_risk": 1.5}))
