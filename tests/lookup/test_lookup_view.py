"""`cppdb lookup`'s 80-column view, `--wide`, and `--explain` on every pair type."""
from __future__ import annotations

import io
import json
import shutil

import numpy as np
import polars as pl
import pytest
from rich.cells import cell_len
from rich.console import Console
from typer.testing import CliRunner

import cppdb
from cppdb import schema as S
from cppdb.errors import BadInputError
from cppdb.lookup.explain import LOG_ODDS, SCORE_POINTS, explain_pairs
from cppdb.lookup.view import (compact_tables, explanation_renderables, merged_targets,
                               ordered_targets)
from cppdb.rank.relation_groups import GROUP, RELATED

QUERIES = ("这座城市", "每天早上", "出生于", "[NP1] 出生于 [NP2]", "丧生")


def rendered(parts, width: int = 80) -> list[str]:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    for part in parts:
        console.print(part)
    return console.export_text().splitlines()


@pytest.fixture(scope="module")
def db(ranked_bilingual_run):
    database = cppdb.open_database(ranked_bilingual_run)
    yield database
    database.close()


def row_lines(lines: list[str], row: dict) -> list[str]:
    """The rendered lines that are this merged row: its whole target, then its cells."""
    cells = [row["entailment"] or "-", f"{row['score']:.2f}", row["tier"],
             str(row["n_pivots"]), row["lhs"]]
    return [line for line in lines
            if line.startswith(row["target"] + " ") and line[len(row["target"]):].split() == cells]


@pytest.mark.parametrize("query", QUERIES)
def test_default_view_fits_80_columns_one_row_per_target(db, query):
    found = db.lookup(query, top=10, extra=("entailment",))
    assert found.height, query
    merged = ordered_targets(found, query)
    tables = compact_tables(found, query)
    groups = list(merged.group_by("type", "source", maintain_order=True))
    assert len(tables) == len(groups)
    for table, (_, part) in zip(tables, groups):
        lines = rendered([table])
        assert max(cell_len(line) for line in lines) <= 80
        # no cell wraps: each target whole on one line with all its cells, exactly once
        for row in part.iter_rows(named=True):
            assert len(row_lines(lines, row)) == 1, (row, lines)
        # title (may wrap), header, rule; a blank line before related rows that follow others
        groups = part[GROUP].to_list()
        blank = int(RELATED in groups and any(g != RELATED for g in groups))
        assert len(lines) - part.height <= 4 + blank


def test_targets_with_several_labels_are_one_row():
    frame = pl.DataFrame({
        "type": ["phrase"] * 4, "source": ["海洋"] * 4,
        "target": ["大洋", "大海", "大洋", "海底"], "lhs": ["NN", "NP", "NP", "NP"],
        "score": [4.1, 4.5, 4.3, 3.0], "tier": ["S", "S", "S", "M"],
        "n_pivots": [2, 5, 3, 1], "pivots": [["ocean"]] * 4})
    merged = merged_targets(frame)
    assert merged["target"].to_list() == ["大海", "大洋", "海底"]
    ocean = merged.row(1, named=True)
    # the best row's score, tier and pivots; every label, best first
    assert (ocean["lhs"], ocean["score"], ocean["n_pivots"]) == ("NP,NN", 4.3, 3)
    assert merged["entailment"].to_list() == ["", "", ""]
    lines = rendered(compact_tables(frame, "海洋"))
    assert sum("大洋" in line for line in lines) == 1
    # --top counts targets in this view, not rows: the two best targets, all their labels
    two = "\n".join(rendered(compact_tables(frame, "海洋", top=2)))
    assert "大海" in two and "NP,NN" in two and "海底" not in two


def test_the_queried_text_comes_before_the_patterns_that_contain_it():
    frame = pl.DataFrame({
        "type": ["pattern", "phrase", "phrase"],
        "source": ["另 一 个 集合 的 [NP1]", "集合", "集合"],
        "target": ["其他 集合 的 [NP1]", "set", "集 合体"], "lhs": ["NP"] * 3,
        "score": [4.4, 4.3, 2.0], "relation": ["Equivalence", "Equivalence", "OtherRelated"]})
    titles = [line for line in rendered(compact_tables(frame, "集合"))
              if "paraphrases of" in line]
    assert titles == ["phrase paraphrases of 集合",
                      "pattern paraphrases of 另 一 个 集合 的 [NP1] (contains 集合)"]
    # a query in traditional script or with other spaces is the same text
    examples = frame.with_columns(pl.col("source").str.replace("集合", "范例"))
    assert ordered_targets(examples, "範 例")["source"].to_list()[:2] == ["范例", "范例"]


def test_relation_column_is_the_exports_entailment_field():
    frame = pl.DataFrame({"type": ["phrase"] * 2, "source": ["这 座 城市"] * 2,
                          "target": ["城市", "该市"], "score": [3.0, 4.0], "lhs": ["NP"] * 2})
    merged = merged_targets(frame)
    assert dict(zip(merged["target"], merged["entailment"])) == {"城市": "ForwardEntailment",
                                                                 "该市": ""}
    kept = frame.with_columns(pl.Series("entailment", ["Equivalence", None]))
    assert merged_targets(kept)["entailment"].to_list() == ["", "Equivalence"]


def test_cli_default_wide_and_json(ranked_bilingual_run):
    from cppdb.cli import app

    base = ["lookup", "出生于", "--db", str(ranked_bilingual_run)]
    narrow = CliRunner().invoke(app, base, env={"COLUMNS": "80"})
    assert narrow.exit_code == 0, narrow.output
    assert max(cell_len(line) for line in narrow.stdout.splitlines()) <= 80
    assert "relation" in narrow.stdout and "[NP1] 生 在 [NP2]" in narrow.stdout
    wide = CliRunner().invoke(app, [*base, "--wide"], env={"COLUMNS": "250"})
    assert wide.exit_code == 0 and "percentile" not in wide.stdout
    for column in ("rank", "pivots", "n_pivots", "lhs"):
        assert column in wide.stdout
    as_json = CliRunner().invoke(app, [*base, "--json"])
    rows = json.loads(as_json.stdout)
    with cppdb.open_database(ranked_bilingual_run) as database:
        # the command's default is --relation all: the groups in order, best first in each
        assert rows == json.loads(json.dumps(database.lookup("出生于", relation="all").to_dicts(),
                                             default=str))
    assert "entailment" not in rows[0]


def predicted(run, row: pl.DataFrame) -> float:
    from cppdb.rank.by_type import load_model

    return float(load_model(run / "ranking" / "ranker.json").predict(row)[0])


@pytest.mark.parametrize("text, target", [("这座城市", "该市"),
                                          ("[NP1] 出生于 [NP2]", "[NP1] 生在 [NP2]"),
                                          ("出生于", "[X] 生 在 [X]")])
def test_explain_adds_up_to_the_models_score_and_the_pivots_to_p_t_given_s(
        db, ranked_bilingual_run, text, target):
    explained = explain_pairs(db, text, target)
    assert explained
    for explanation in explained:
        pair, contributions = explanation.pair, explanation.contributions
        row = db.find_pair(text, target).filter(pl.col("source") == pair["source"])
        assert explanation.model_score == pytest.approx(predicted(ranked_bilingual_run, row))
        raw = explanation.base + contributions["contribution"].sum()
        score = 1 + 4 / (1 + np.exp(-raw)) if explanation.unit == LOG_ODDS else raw
        assert score == pytest.approx(explanation.model_score)
        sizes = contributions["contribution"].abs().to_list()
        assert sizes == sorted(sizes, reverse=True)
        assert explanation.penalty >= -1e-9            # penalties only ever lower a score
        pivots = explanation.pivots
        assert pivots["pivot"].to_list() == pair["pivots"]
        if pair["n_pivots"] == len(pair["pivots"]):
            assert pivots["product"].sum() == pytest.approx(pair["p_t_given_s"])
        assert (pivots["product"] == pivots["p_e_given_source"]
                * pivots["p_target_given_e"]).all()
        lines = rendered(explanation_renderables(explanation))
        assert max(cell_len(line) for line in lines) <= 80
        assert any(line.startswith(contributions["feature"][0]) for line in lines)


def test_cli_explain_reads_naturally(ranked_bilingual_run):
    from cppdb.cli import app

    result = CliRunner().invoke(app, ["lookup", "这座城市", "--db", str(ranked_bilingual_run),
                                      "--explain", "该市"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "这 座 城市 → 该市" in out and "features that moved it most" in out
    assert "English pivots" in out and "p(e|source)" in out
    missing = CliRunner().invoke(app, ["lookup", "这座城市", "--db", str(ranked_bilingual_run),
                                       "--explain", "飞机场"])
    assert missing.exit_code == 2 and "no pair" in missing.output
    as_json = CliRunner().invoke(app, ["lookup", "这座城市", "--db", str(ranked_bilingual_run),
                                       "--explain", "该市", "--json"])
    (record,) = json.loads(as_json.stdout)
    assert record["contributions"] and record["pivots"] and record["notes"] == []


def test_explain_says_plainly_what_an_export_or_an_unranked_run_lacks(
        ranked_bilingual_run, tmp_path):
    from cppdb.export_ranked import export_run

    path, _ = export_run(ranked_bilingual_run, top="S", format="parquet",
                         out=tmp_path / "top.parquet")
    with cppdb.open_database(path) as database:
        (explanation,) = explain_pairs(database, "这座城市", "该市")
    assert explanation.contributions is None and explanation.pivots["pivot"].to_list()
    assert any("export" in note and "features" in note for note in explanation.notes)
    unranked = tmp_path / "unranked"
    unranked.mkdir()
    for name in (S.PHRASE_PAIRS_FILE, S.PATTERN_PAIRS_FILE, S.OCCURRENCES_FILE):
        shutil.copy(ranked_bilingual_run / name, unranked / name)
    with cppdb.open_database(unranked) as database:
        (explanation,) = explain_pairs(database, "这座城市", "该市")
    assert explanation.contributions is None and "cppdb rank" in explanation.notes[0]
    assert explanation.pivots["product"].sum() == pytest.approx(explanation.pair["p_t_given_s"])


def test_each_lhs_row_of_a_pair_is_explained_by_its_own_features(ranked_bilingual_run,
                                                                  tmp_path):
    """A pair ranked under two LHS labels (NP and NN: other pivots, other features, another
    score) gets, in every lookup row and explanation, the features of its own label."""
    run = tmp_path / "two-labels"
    shutil.copytree(ranked_bilingual_run, run, ignore=shutil.ignore_patterns("lookup"))
    ranking = run / "ranking"
    key = ((pl.col("source").str.replace_all(" ", "") == "这座城市")
           & (pl.col("target").str.replace_all(" ", "") == "该市"))
    ranked = pl.read_parquet(ranking / S.RANKED_FILE)
    features = pl.read_parquet(ranking / S.FEATURES_FILE)
    (lhs,) = ranked.filter(key)["lhs"].to_list()
    other = "NN" if lhs != "NN" else "NP"
    changed = {"f_p_t_given_s": 0.011, "f_p_s_given_t": 0.013, "f_n_pivots": 1.0}
    extra = features.filter(key).with_columns(pl.lit(other).alias("lhs"), *[
        pl.lit(value, dtype=features.schema[name]).alias(name) for name, value in changed.items()])
    pl.concat([extra, features]).write_parquet(ranking / S.FEATURES_FILE)
    row = ranked.filter(key).with_columns(pl.lit(other).alias("lhs"))
    row = row.with_columns(pl.lit(predicted(run, extra)).alias("score"))
    pl.concat([ranked, row]).write_parquet(ranking / S.RANKED_FILE)
    with cppdb.open_database(run) as database:
        rows = database.find_pair("这座城市", "该市")
        explained = explain_pairs(database, "这座城市", "该市")
    assert sorted(rows["lhs"].to_list()) == sorted([lhs, other])
    for found in rows.iter_rows(named=True):
        own = features.filter(key) if found["lhs"] == lhs else extra
        assert found["f_p_t_given_s"] == pytest.approx(own["f_p_t_given_s"][0])
    for explanation in explained:
        own = features.filter(key) if explanation.pair["lhs"] == lhs else extra
        assert explanation.model_score == pytest.approx(predicted(run, own))
        assert explanation.penalty >= -1e-9


def sentence_run(tmp_path, repo_root):
    """A ranked run of three sentence pairs scored by the shipped sentence model (anchored
    on the cosine): what `cppdb rank` writes for a monolingual run, made by hand."""
    from cppdb.rank.ranker import Ranker

    run = tmp_path / "sentences"
    (run / "ranking").mkdir(parents=True)
    shutil.copy(repo_root / "cppdb" / "resources" / "default_ranker.json",
                run / "ranking" / "ranker.json")
    pairs = pl.DataFrame({
        "source": ["他 明天 来。", "我 饿 了。", "天 黑 了。"],
        "target": ["他 明日 会 来。", "我 不 饿。", "天色 暗 了。"],
        "type": ["sentence"] * 3, "lhs": ["S"] * 3, "n_pivots": [0] * 3,
        "pivots": [[], [], []], "f_cosine": [0.93, 0.88, 0.90],
        "f_numbers_identical": [1.0, 1.0, 1.0], "f_negation_flip": [0.0, 1.0, 0.0],
        "f_argument_swap": [0.0, 0.0, 0.0]})
    model = Ranker.load(run / "ranking" / "ranker.json")
    scored = pairs.with_columns(pl.Series("score", model.predict(pairs)))
    ranked = scored.with_columns(pl.col("score").rank("ordinal", descending=True)
                                 .cast(pl.Int64).alias("rank"), pl.lit("S").alias("tier"))
    ranked.drop([c for c in pairs.columns if c.startswith("f_")]).write_parquet(
        run / "ranking" / S.RANKED_FILE)
    scored.write_parquet(run / "ranking" / S.FEATURES_FILE)
    return run


def test_explain_a_sentence_pair_of_an_anchored_model(tmp_path, repo_root):
    run = sentence_run(tmp_path, repo_root)
    with cppdb.open_database(run) as database:
        (explanation,) = explain_pairs(database, "我饿了。", "我 不 饿。")
    assert explanation.unit == SCORE_POINTS and explanation.penalty == pytest.approx(0.0)
    assert explanation.model_score == pytest.approx(explanation.pair["score"])
    total = explanation.base + explanation.contributions["contribution"].sum()
    assert total == pytest.approx(explanation.model_score)
    # the anchor line's slope·cosine is the cosine's contribution: the largest here
    assert explanation.contributions["feature"][0] == "f_cosine"
    assert explanation.pivots is None and "no English pivots" in explanation.notes[0]


def test_explain_needs_a_pair_the_database_has(db):
    with pytest.raises(BadInputError, match="no pair"):
        explain_pairs(db, "这座城市", "飞机场")


def _rejected_only_source(run) -> str:
    """A phrase source whose candidate pairs the ranker all rejected (filters, pruning)."""
    rejected = pl.read_parquet(run / "ranking" / "filtered_pairs.parquet")
    ranked = pl.read_parquet(run / "ranking" / "ranked_pairs.parquet")
    key = pl.col("source").str.replace_all(r"\s+", "")
    kept = ranked.select(key.alias("k"))["k"].implode()
    only = (rejected.filter((pl.col("type") == "phrase") & ~key.is_in(kept))
            .select("source").unique().sort("source"))
    assert only.height, "the bundled run has phrases the filters rejected whole"
    # and inside no ranked pattern (the lookup would answer with those patterns)
    patterns = " ".join(ranked.filter(pl.col("type") == "pattern")["source"]
                        .str.replace_all(r"\s+", "").to_list())
    return next(s for s in only["source"] if s.replace(" ", "") not in patterns)


def test_no_answer_says_why_and_what_is_near(ranked_bilingual_run):
    from cppdb.cli import app

    source = _rejected_only_source(ranked_bilingual_run)
    rejected = pl.read_parquet(ranked_bilingual_run / "ranking" / "filtered_pairs.parquet")
    pruned = pl.read_parquet(ranked_bilingual_run / "ranking" / "pruned_pairs.parquet")
    reasons = pl.concat([rejected.filter(pl.col("source") == source).select("filter_reason"),
                         pruned.filter(pl.col("source") == source)
                         .select(("pruned " + pl.col("relation")).alias("filter_reason"))])
    expected = (reasons.group_by("filter_reason").len()
                .sort("len", "filter_reason", descending=[True, False]))
    with cppdb.open_database(ranked_bilingual_run) as database:
        assert database.paraphrases(source).height == 0
        why = database.rejected(source.replace(" ", ""))       # as a user types it
        assert why.rows() == expected.rows()
        # a pair the score stage pruned is named with its relation
        assert pruned.height, "the bundled run has low-ranked unrelated pairs"
        low = pruned.row(0, named=True)
        assert f"pruned {low['relation']}" in database.rejected(low["source"])["filter_reason"]
        # phrases inside a longer text, and phrases that contain a text
        phrase = database.sample(tier="S", n=1, type="phrase")["source"][0]
        near = database.nearby(phrase.replace(" ", "") + "吗吗吗")
        assert (phrase, "inside") in [(p, w) for p, _, w in near.iter_rows()]
        assert database.nearby(phrase.replace(" ", "")[:1]).filter(
            pl.col("where") == "containing").height > 0
    result = CliRunner().invoke(app, ["lookup", source, "--db", str(ranked_bilingual_run)],
                                env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert f"no paraphrases of '{source}'" in result.stdout
    assert expected["filter_reason"][0] in result.stdout and "filtered_pairs" in result.stdout
    assert max(cell_len(line) for line in result.stdout.splitlines()) <= 80


def test_a_word_answered_by_patterns_alone_says_so(ranked_bilingual_run):
    from cppdb.cli import app

    with cppdb.open_database(ranked_bilingual_run) as database:
        words = sorted({w for source in database.lookup("的", top=1000, type="pattern")["source"]
                        for w in source.split() if len(w) >= 2 and "[" not in w})
        word = next(w for w in words
                    if set(database.lookup(w, top=50)["type"].to_list()) == {"pattern"})
    result = CliRunner().invoke(app, ["lookup", word, "--db", str(ranked_bilingual_run)],
                                env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"no phrase paraphrases of '{word}' itself")
    assert "pattern paraphrases of" in result.stdout


def test_no_answer_under_options_says_the_text_has_answers_without_them(ranked_bilingual_run):
    from cppdb.cli import app

    ranked = pl.read_parquet(ranked_bilingual_run / "ranking" / "ranked_pairs.parquet")
    in_s = (ranked.filter(pl.col("type") == "phrase").group_by("source")
            .agg((pl.col("tier") == "S").any().alias("in_s")).sort("source"))
    # phrases outside tier S only, and inside no tier-S pattern (those would be shown instead)
    s_patterns = " ".join(ranked.filter((pl.col("type") == "pattern") & (pl.col("tier") == "S"))
                          ["source"].str.replace_all(r"\s+", "").to_list())
    source = next(s for s in in_s.filter(~pl.col("in_s"))["source"]
                  if s.replace(" ", "") not in s_patterns)
    result = CliRunner().invoke(app, ["lookup", source, "--db", str(ranked_bilingual_run),
                                      "--tier", "S"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "with these filters; it has some without them" in result.stdout
    assert "rejected" not in result.stdout
