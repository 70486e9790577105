"""`cppdb lookup --relation` on a hand-made ranked run, and the relation mix of `evaluate`."""
from __future__ import annotations

import json

import polars as pl
import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

import cppdb
from cppdb import schema as S
from cppdb.cli import app
from cppdb.errors import BadInputError
from cppdb.evaluate.relation_mix import relation_mix
from cppdb.rank.relation_groups import check_relation

#: 增加's answers as the ranker leaves them: the antonym and the negation scored high by
#: their pivots but marked Exclusion (tier XL), a containment pair, two synonyms (one of them
#: under two LHS labels)
PAIRS = [("增加", "减少", "VP", 4.9, "XL", "Exclusion", "antonym increase/decrease"),
         ("增加", "增加 了", "VP", 4.5, "S", None, None),
         ("增加", "提高", "VP", 4.2, "S", None, None),
         ("增加", "不 增加", "VP", 4.0, "XL", "Exclusion", "negation"),
         ("增加", "增多", "VP", 3.9, "M", None, None),
         ("增加", "增多", "VV", 3.1, "L", None, None)]


@pytest.fixture
def run(tmp_path):
    """A ranked run directory with only ``ranking/ranked_pairs.parquet``: all lookup reads."""
    frame = pl.DataFrame(PAIRS, schema=[S.SOURCE, S.TARGET, S.LHS, "score", "tier",
                                        S.RELATION, S.RELATION_EVIDENCE], orient="row")
    frame = frame.with_columns(
        pl.lit("phrase").alias(S.TYPE), pl.lit(3).alias(S.N_PIVOTS),
        pl.lit(["increase"]).alias(S.PIVOTS),
        pl.col("score").rank("ordinal", descending=True).cast(pl.Int64).alias("rank"))
    (tmp_path / "run" / "ranking").mkdir(parents=True)
    frame.write_parquet(tmp_path / "run" / "ranking" / S.RANKED_FILE)
    return tmp_path / "run"


def lookup(run, *args: str) -> list[str]:
    result = CliRunner().invoke(app, ["lookup", "增加", "--db", str(run), "-q", *args],
                                env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def targets(lines: list[str]) -> list[str]:
    """The target of each table row (the first cell; targets hold at most one space)."""
    rows = lines[lines.index(next(l for l in lines if l.startswith("─"))) + 1:]
    return [" ".join(l.split()[:2]) if l.split()[1] in ("增加", "了") else l.split()[0]
            for l in rows if l.strip() and not l.startswith("Exclusion =")]


def test_default_shows_equivalence_then_entailment_then_the_marked_rest(run):
    lines = lookup(run)
    assert max(cell_len(line) for line in lines) <= 80
    # best first within each group, whatever the score across groups (减少 scores 4.9)
    assert targets(lines) == ["提高", "增多", "增加 了", "减少", "不 增加"]
    assert lines == lookup(run, "--relation", "all")
    rows = {l.split()[0]: l.split() for l in lines if l.split() and l.split()[0] in ("减少", "增多")}
    assert rows["减少"][1:] == ["Exclusion", "4.90", "XL", "3", "VP"]     # no cell wraps
    assert rows["增多"][-1] == "VP,VV"                                  # one row per target
    # the related rows stand apart (a blank line) and a note says what Exclusion means
    blank = next(i for i, l in enumerate(lines) if i > 2 and not l.strip())
    assert lines[blank + 1].startswith("减少") and lines[-1].startswith("Exclusion =")


@pytest.mark.parametrize("relation, expected", [
    ("equivalence", ["提高", "增多"]), ("entailment", ["增加 了"]),
    ("related", ["减少", "不 增加"])])
def test_relation_keeps_one_group(run, relation, expected):
    lines = lookup(run, "--relation", relation)
    assert targets(lines) == expected
    assert ("Exclusion =" in lines[-1]) == (relation == "related")
    rows = json.loads(CliRunner().invoke(app, ["lookup", "增加", "--db", str(run), "--json",
                                               "--relation", relation]).stdout)
    assert {r["relation_group"] for r in rows} == {relation}
    assert [r["target"] for r in rows] == sorted(
        (r["target"] for r in rows), key=lambda t: -next(p[3] for p in PAIRS if p[1] == t))


def test_the_python_api_keeps_score_order_unless_asked(run):
    with cppdb.open_database(run) as database:
        plain = database.lookup("增加")
        assert plain["target"][0] == "减少" and plain["score"].is_sorted(descending=True)
        grouped = database.lookup("增加", relation="all")
        assert grouped["relation_group"].to_list() == ["equivalence"] * 3 + [
            "entailment"] + ["related"] * 2
        assert database.lookup("增加", relation="related", top=1)["target"].to_list() == ["减少"]


def test_an_unknown_relation_fails_before_the_index_is_built(run):
    result = CliRunner().invoke(app, ["lookup", "增加", "--db", str(run), "--relation", "synonym"])
    assert result.exit_code == 2 and "[E200] unknown relation 'synonym'" in result.output
    assert not (run / "lookup").exists()
    assert check_relation(None) is None


def test_relation_mix_per_nested_tier(run):
    ranked = pl.read_parquet(run / "ranking" / S.RANKED_FILE)
    mix = relation_mix(ranked, ["S", "M", "L", "XL"])
    shares = {(r["tier"], r["relation"]): (r["pairs"], r["share"])
              for r in mix.iter_rows(named=True)}
    assert shares[("S", "undecided")] == (1, 0.5)
    assert shares[("S", "ReverseEntailment")] == (1, 0.5)
    assert ("S", "Exclusion") not in shares and ("M", "Exclusion") not in shares
    assert shares[("XL", "Exclusion")] == (2, pytest.approx(2 / 6))
    assert mix.group_by("tier").agg(pl.col("share").sum())["share"].to_list() == \
        pytest.approx([1.0] * 4)
    assert mix["tier"].unique(maintain_order=True).to_list() == ["S", "M", "L", "XL"]
    assert set(mix.filter(pl.col("relation") == "Exclusion")["group"]) == {"related"}
    assert relation_mix(ranked.drop("tier"), ["S"]) is None


def test_evaluate_prints_and_keeps_the_relation_mix(run):
    result = CliRunner().invoke(app, ["evaluate", str(run), "--set", "evaluate.embedding=false"],
                                env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # the signature is one line on purpose (copied whole); everything else fits 80 columns
    assert max(cell_len(line) for line in lines if not line.startswith("signature:")) <= 80
    start = next(i for i, l in enumerate(lines) if l.startswith("relation mix"))
    assert lines[start + 1].split() == ["type", "tier", "n", "Reverse", "Exclusion", "undecided"]
    assert lines[start + 6].split() == ["phrase", "XL", "6", "16.7%", "33.3%", "50.0%"]
    kept = json.loads((run / "evaluation.json").read_text("utf-8"))
    assert kept["relations"] == json.loads(json.dumps(
        relation_mix(pl.read_parquet(run / "ranking" / S.RANKED_FILE),
                     ["S", "M", "L", "XL"]).to_dicts()))
    as_json = CliRunner().invoke(app, ["evaluate", str(run), "--json",
                                       "--set", "evaluate.embedding=false"])
    assert json.loads(as_json.stdout)["relations"] == kept["relations"]


def test_the_pruned_pairs_follow_the_tiers_in_the_mix_and_in_evaluate(run):
    pruned = pl.DataFrame({S.TYPE: ["phrase"] * 3, S.SOURCE: ["增加"] * 3,
                           S.TARGET: ["加", "加大", "扩大"], "score": [1.0, 0.9, 0.5],
                           S.RELATION: ["OtherRelated", "Independent", "OtherRelated"]})
    pruned.write_parquet(run / "ranking" / S.PRUNED_FILE)
    ranked = pl.read_parquet(run / "ranking" / S.RANKED_FILE)
    mix = relation_mix(ranked, ["S", "M", "L", "XL"], pruned)
    assert mix["tier"].unique(maintain_order=True).to_list() == ["S", "M", "L", "XL", "pruned"]
    rows = {r["relation"]: r["pairs"] for r in mix.filter(pl.col("tier") == "pruned").to_dicts()}
    assert rows == {"OtherRelated": 2, "Independent": 1}
    # the tiers' shares are the ranked table's alone
    tiers_only = relation_mix(ranked, ["S", "M", "L", "XL"])
    assert mix.filter(pl.col("tier") != "pruned").equals(tiers_only)
    result = CliRunner().invoke(app, ["evaluate", str(run), "--set", "evaluate.embedding=false"],
                                env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "pruned phrase pairs (out of the table): 3 (Other 66.7%, Independent 33.3%)" \
        in result.stdout
    assert max(cell_len(line) for line in result.stdout.splitlines()
               if not line.startswith("signature:")) <= 80


def test_min_probability_keeps_the_surer_relations(run):
    path = run / "ranking" / S.RANKED_FILE
    # 提高 a sure synonym, 增多 a likely one; 增加 了 an entailment; the rule's Exclusions
    # (减少, 不 增加) have no probability
    sure = {"提高": 0.95, "增多": 0.7, "增加 了": 0.92}
    ranked = pl.read_parquet(path).with_columns(
        pl.col(S.TARGET).replace_strict(sure, default=None, return_dtype=pl.Float64)
        .alias(S.RELATION_PROBABILITY))
    ranked.write_parquet(path)
    assert targets(lookup(run, "--relation", "equivalence", "--min-probability", "0.9")) == \
        ["提高"]
    assert targets(lookup(run, "--min-probability", "0.9")) == ["提高", "增加 了"]
    assert targets(lookup(run, "--min-probability", "0.5")) == ["提高", "增多", "增加 了"]
    with cppdb.open_database(run) as database:
        found = database.lookup("增加", min_probability=0.9, relation="equivalence")
        assert found["target"].to_list() == ["提高"]
        with pytest.raises(BadInputError, match="min_probability must be in"):
            database.lookup("增加", min_probability=1.5)
    # none left: the command says the text has answers without the narrowing
    lines = lookup(run, "--relation", "related", "--min-probability", "0.5")
    assert "with these filters; it has some without them" in " ".join(lines)
    bad = CliRunner().invoke(app, ["lookup", "增加", "--db", str(run), "--min-probability", "2"])
    assert bad.exit_code == 2 and "--min-probability" in bad.output   # refused by the parser


def test_min_probability_needs_a_ranking_with_relations(run):
    with cppdb.open_database(run) as database:
        with pytest.raises(BadInputError, match="no relation_probability column"):
            database.lookup("增加", min_probability=0.5)
