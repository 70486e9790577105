"""Word coverage (cppdb.evaluate.coverage): by hand, on a run of the bundled data, and in
`cppdb evaluate` and `cppdb report`."""
from __future__ import annotations

import json

import polars as pl
import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from cppdb import schema as S
from cppdb.config import load_config
from cppdb.evaluate.coverage import (corpus_frequencies, coverage_row, coverage_table,
                                     jieba_frequencies, phrase_sources, top_words)

NO_ENCODER = ["evaluate.embedding=false"]


def annotations(tmp_path):
    path = tmp_path / S.ANNOTATIONS_FILE
    pl.DataFrame({
        S.ann("zh", "tokens"): [["李白", "喜欢", "海洋", "。"], ["海洋", "很", "大"],
                                ["他", "是", "喜欢", "海洋", "的"]],
        S.ann("zh", "pos"): [["NR", "VV", "NN", "PU"], ["NN", "AD", "VA"],
                             ["PN", "VC", "VV", "NN", "DEC"]]}).write_parquet(path)
    return path


RANKING = pl.DataFrame({
    "type": ["phrase", "phrase", "phrase", "pattern"],
    "source": ["海 洋", "喜欢", "大", "大"],        # spaces do not matter: 海 洋 is 海洋
    "target": ["大海", "爱", "巨大", "[NP1] 大"], "tier": ["S", "M", "S", "S"]})


def test_corpus_words_are_counted_content_only(tmp_path):
    freqs = corpus_frequencies(annotations(tmp_path)).sort("word")
    # 李白 (NR), 是 (VC), 很 (AD), 他 (PN), punctuation and particles are not content words
    assert dict(freqs.iter_rows()) == {"海洋": 3, "喜欢": 2, "大": 1}
    assert top_words(freqs, 2)["word"].to_list() == ["海洋", "喜欢"]


def test_coverage_row_by_hand(tmp_path):
    words = top_words(corpus_frequencies(annotations(tmp_path)), 10)
    row = coverage_row("corpus", "NN", words, phrase_sources(RANKING, "S"), "S", examples=5)
    # 海洋: an S phrase pair; 喜欢: only M; 大: S as a phrase pair (a pattern is no help)
    assert (row["words"], row["with_tier"], row["with_any"]) == (3, 2, 3)
    assert row["share"] == pytest.approx(2 / 3) and row["share_any"] == 1.0
    assert row["missing"] == ["喜欢"]
    nothing = coverage_row("corpus", "NN", words, phrase_sources(RANKING.head(0), "S"), "S", 1)
    assert (nothing["with_tier"], nothing["missing"]) == (0, ["海洋"])


def test_jieba_list_keeps_content_tags_and_folds_traditional_script(tmp_path):
    path = tmp_path / "dict.txt"
    path.write_text("的 900 uj\n海洋 50 n\n海洋 5 nz\n發展 30 v\n发展 20 v\n李白 80 nr\n"
                    "美丽 10 a\n", "utf-8")
    freqs = dict(jieba_frequencies(path).iter_rows())
    assert freqs == {"海洋": 50, "发展": 50, "美丽": 10}
    shipped = jieba_frequencies()
    assert shipped.height > 100_000 and shipped["word"].n_unique() == shipped.height


def test_coverage_of_the_bundled_run_matches_the_lookup(ranked_bilingual_run):
    import cppdb
    from cppdb.evaluate.api import evaluate_run_full

    config = load_config().with_overrides(NO_ENCODER + ["evaluate.coverage_words=200"])
    _, signed, coverage = evaluate_run_full(ranked_bilingual_run, config)
    assert coverage["list"].to_list() == ["corpus", "jieba"]
    assert "coverage:top200-content-words" in signed
    frequencies = corpus_frequencies(ranked_bilingual_run / S.ANNOTATIONS_FILE)
    words = top_words(frequencies, 200)["word"].to_list()
    # independently: the words for which `cppdb lookup WORD --tier S --type phrase` answers
    with cppdb.open_database(ranked_bilingual_run) as database:
        found = [w for w in words if database.paraphrases(w, type="phrase", tier="S").height]
    corpus = coverage.row(0, named=True)
    assert corpus["words"] == min(200, frequencies.height)
    assert corpus["with_tier"] == len(found) > 0
    assert set(corpus["missing"]).isdisjoint(found) and len(corpus["missing"]) == 20
    assert corpus["missing"] == [w for w in words if w not in found][:20]
    kept = json.loads((ranked_bilingual_run / "evaluation.json").read_text("utf-8"))
    assert kept["coverage"] == json.loads(json.dumps(coverage.to_dicts()))


def test_a_ranking_without_tiers_or_phrases_has_no_coverage(tmp_path):
    from cppdb.evaluate.api import coverage_of
    from cppdb.evaluate.settings import EvaluateRun

    config = EvaluateRun()
    assert coverage_of(tmp_path, RANKING.drop("tier"), config) is None
    assert coverage_of(tmp_path, RANKING.filter(pl.col("type") == "pattern"), config) is None
    table = coverage_table(RANKING, None, "S", 5, 3)          # a pair file: jieba's list only
    assert table["list"].to_list() == ["jieba"] and table["words"][0] == 5


def test_cli_evaluate_shows_coverage_at_80_columns(ranked_bilingual_run):
    from cppdb.cli import app

    args = ["evaluate", str(ranked_bilingual_run), *[f"--set={o}" for o in NO_ENCODER]]
    shown = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert "word coverage: top content words with a phrase paraphrase in tier S" in lines
    table = lines[lines.index("word coverage: top content words with a phrase paraphrase "
                              "in tier S"):]
    n = min(1000, corpus_frequencies(ranked_bilingual_run / S.ANNOTATIONS_FILE).height)
    assert table[3].split()[:2] == ["corpus", f"{n:,}"]
    assert table[4].split()[:2] == ["jieba", "1,000"]
    assert max(cell_len(line) for line in lines if not line.startswith("signature")) <= 80
    as_json = json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)
    assert [r["list"] for r in as_json["coverage"]] == ["corpus", "jieba"]


def test_report_shows_coverage(ranked_bilingual_run):
    from cppdb.report import render_report

    html = render_report(ranked_bilingual_run, evaluate=False)
    n = min(1000, corpus_frequencies(ranked_bilingual_run / S.ANNOTATIONS_FILE).height)
    assert ('data-kind="table" data-points="2"><figcaption>Word coverage: the most frequent '
            'content words with a first-tier paraphrase (tier S)') in html
    assert f"<td>corpus</td><td>NN NT VV VA JJ</td><td>{n}</td>" in html
