"""One pair an aligner cannot handle costs that pair that aligner's votes, recorded — never
the whole run (an `m²` once stopped a 77,000-pair extraction in the dictionary aligner)."""
from __future__ import annotations

import pytest

from cppdb.align.words.settings import AlignWordsSettings
from cppdb.align.words.api import align_tokenized
from cppdb.align.words.dictionary import DictionaryAligner
from cppdb.config import load_config, resolve
from cppdb.errors import ConfigError

ZH = [["他", "死", "了"], ["炸弹", "爆炸"], ["我", "喜欢", "猫"], ["我", "很", "好"]]
EN = [["he", "died"], ["BOOM", "exploded"], ["I", "like", "cats"], ["I", "am", "fine"]]
FAST = {"align_words.tuned_file": "builtin:fast"}        # thot + dictionary: no encoder


def _failing_on_boom(monkeypatch, error: Exception):
    original = DictionaryAligner.align

    def align(self, pairs, *, en_lemmas=None):
        if any("BOOM" in en for _, en in pairs):
            raise error
        return original(self, pairs, en_lemmas=en_lemmas)

    monkeypatch.setattr(DictionaryAligner, "align", align)


def test_a_pair_the_dictionary_fails_on_keeps_the_other_aligners(monkeypatch):
    config = resolve(AlignWordsSettings, load_config(overrides=FAST))
    clean = align_tokenized(ZH, EN, config)
    _failing_on_boom(monkeypatch, ValueError("invalid literal for int() with base 10: '²'"))
    result = align_tokenized(ZH, EN, config)
    assert [d.index for d in result.degraded] == [1]
    assert "dictionary failed (ValueError" in result.degraded[0].reason
    assert result.rejected == ()
    # every other pair is aligned exactly as without the failure; the bad one still has
    # thot's links
    assert [result.links[k] for k in (0, 2, 3)] == [clean.links[k] for k in (0, 2, 3)]
    assert result.links[1]


def test_coded_errors_still_stop_the_run(monkeypatch):
    _failing_on_boom(monkeypatch, ConfigError("a setting is wrong"))
    with pytest.raises(ConfigError):
        align_tokenized(ZH, EN, resolve(AlignWordsSettings, load_config(overrides=FAST)))


def test_a_clean_run_reports_nothing_degraded():
    result = align_tokenized(ZH, EN, resolve(AlignWordsSettings, load_config(overrides=FAST)))
    assert result.degraded == ()
