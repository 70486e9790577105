"""``align_tokenized(workers=N)``: the aligners that need no training run in worker processes
while thot trains here and reuses its training alignments — same links, failures mapped back
to the right pair."""
from __future__ import annotations

from pathlib import Path

import pytest

import cppdb.align.words.api as api
from cppdb.align.words.settings import AlignWordsSettings
from cppdb.align.words.dictionary import DictionaryAligner
from cppdb.config import load_config, resolve

from tests.align.test_align_failures import EN, FAST, ZH

REPO = Path(__file__).resolve().parents[2]


class BoomDictionary(DictionaryAligner):
    """Fails on any batch holding the English token BOOM (importable by the spawned workers)."""

    def align(self, pairs, *, en_lemmas=None):
        if any("BOOM" in en for _, en in pairs):
            raise ValueError("invalid literal for int() with base 10: '²'")
        return super().align(pairs, en_lemmas=en_lemmas)


def _sample_pairs(n: int) -> tuple[list[list[str]], list[list[str]]]:
    lines = (REPO / "data" / "parallel" / "sample.tok.txt").read_text("utf-8").splitlines()[:n]
    zh, en = zip(*(line.split(" ||| ")[:2] for line in lines))
    return [z.split() for z in zh], [e.split() for e in en]


def test_workers_give_the_links_and_tables_of_one_process():
    zh, en = _sample_pairs(60)
    # thot + dictionary: float64 numpy, exact
    config = resolve(AlignWordsSettings, load_config(overrides=FAST))
    one = api.align_tokenized(zh, en, config, workers=1)
    two = api.align_tokenized(zh, en, config, workers=2)
    assert two.links == one.links
    assert sum(map(len, two.links)) > 60
    assert two.lex_en_given_zh.equals(one.lex_en_given_zh)
    assert two.signatures == one.signatures and two.degraded == ()


def test_a_failure_in_a_worker_is_recorded_against_its_pair(monkeypatch):
    config = resolve(AlignWordsSettings, load_config(overrides=FAST))
    zh, en = ZH * 3, EN * 3                   # BOOM in pairs 1, 5 and 9, across slices
    clean = api.align_tokenized(zh, en, config)
    build = api.build_aligners

    def with_boom(config, names=None):
        aligners, skipped = build(config, names)
        aligners["dictionary"] = BoomDictionary()
        return aligners, skipped

    monkeypatch.setattr(api, "build_aligners", with_boom)
    result = api.align_tokenized(zh, en, config, workers=2)
    assert [d.index for d in result.degraded] == [1, 5, 9]
    assert all("dictionary failed (ValueError" in d.reason for d in result.degraded)
    keep = [k for k in range(len(zh)) if k not in (1, 5, 9)]
    assert [result.links[k] for k in keep] == [clean.links[k] for k in keep]
    assert all(result.links[k] for k in (1, 5, 9))     # thot's links remain


def test_no_pool_without_a_statistical_aligner_or_with_one_worker():
    config = resolve(AlignWordsSettings, load_config(overrides={
        "align_words.aligners": ["dictionary"], "align_words.tuned_file": ""}))
    aligners, _ = api.build_aligners(config, ["dictionary"])
    assert api._fixed_pool(aligners, 4) is None
    aligners, _ = api.build_aligners(resolve(AlignWordsSettings, load_config(overrides=FAST)),
                                     ["thot", "dictionary"])
    assert api._fixed_pool(aligners, 1) is None


@pytest.mark.slow
def test_default_ensemble_with_two_workers_aligns_every_pair():
    zh, en = _sample_pairs(40)
    result = api.align_tokenized(zh, en, resolve(AlignWordsSettings, load_config()), workers=2)
    assert result.aligners_used == ("thot", "dictionary", "simalign-e5")
    assert all(result.links) and result.degraded == ()
