"""The blind judging sheet of devtools.judge (devtools.blind) on tiny hand-made tables."""
from __future__ import annotations

import json
import math

import polars as pl
import pytest

from cppdb import schema as S
from cppdb.errors import BadInputError
from devtools import blind


def _ranked(n_phrase: int = 10, n_pattern: int = 5) -> pl.DataFrame:
    rows = []
    for pair_type, n in (("phrase", n_phrase), ("pattern", n_pattern)):
        for r in range(1, n + 1):
            rows.append({S.TYPE: pair_type, S.LHS: "NP", S.SOURCE: f"{pair_type[:2]} s {r}",
                         S.TARGET: f"{pair_type[:2]} t {r}", "score": float(n - r),
                         "rank": r, "percentile": r / n})
    return pl.DataFrame(rows)


NO_EXCLUDE = blind.excluded_keys([])


def test_top_cell_draws_only_from_the_best_fifth():
    keys = blind.draw_cells(_ranked(), per_cell=60, exclude=NO_EXCLUDE)
    top = keys.filter((pl.col("cell") == "top20") & (pl.col(S.TYPE) == "phrase"))
    assert sorted(top["rank"].to_list()) == [1, 2]              # ceil(0.2 · 10)
    everything = keys.filter((pl.col("cell") == "all") & (pl.col(S.TYPE) == "phrase"))
    assert everything.height == 10                              # fewer than 60: all of them
    assert keys.filter((pl.col("cell") == "top20") & (pl.col(S.TYPE) == "pattern"))["rank"] \
        .to_list() == [1]


def test_draw_is_seeded_and_a_sample_when_the_pool_is_large():
    ranked = _ranked(n_phrase=500, n_pattern=300)
    first = blind.draw_cells(ranked, per_cell=7, exclude=NO_EXCLUDE, seed=5)
    again = blind.draw_cells(ranked, per_cell=7, exclude=NO_EXCLUDE, seed=5)
    other = blind.draw_cells(ranked, per_cell=7, exclude=NO_EXCLUDE, seed=6)
    assert first.equals(again) and not first.equals(other)
    assert first.group_by(S.TYPE, "cell").len()["len"].to_list() == [7, 7, 7, 7]
    assert first.filter(pl.col("cell") == "top20")["percentile"].max() <= 0.2


def test_pairs_of_label_files_are_never_drawn(tmp_path):
    labels = tmp_path / "judged.tsv"
    # the judged pair with other spacing, and one judged in the other direction
    labels.write_text("type\tsource\ttarget\trating\nphrase\tph s1\tph t 1\t4\n"
                      "phrase\tph t 2\tph s 2\t2\npattern\tph s 3\tph t 3\t5\n", "utf-8")
    keys = blind.draw_cells(_ranked(), 60, blind.excluded_keys([labels]))
    phrases = keys.filter(pl.col(S.TYPE) == "phrase")
    assert not {1, 2} & set(phrases["rank"].to_list())
    assert 3 in phrases["rank"].to_list()        # excluded as a pattern, not as a phrase
    assert phrases.filter(pl.col("cell") == "top20").height == 0   # the top fifth was judged


def test_sheet_is_blind_shuffled_and_judges_a_pair_once():
    keys = blind.draw_cells(_ranked(), 60, NO_EXCLUDE)
    sheet, key = blind.sheet_and_key(keys)
    assert sheet.columns == ["id", "type", "a", "b"]
    assert sheet.height == 15                    # top20 pairs are also in 'all': judged once
    assert key.height == keys.height == 18
    assert sheet["id"].n_unique() == 15
    best = key.filter((pl.col("rank") == 1) & (pl.col(S.TYPE) == "phrase"))
    assert sheet.filter(pl.col("id") == best["id"][0])["a"].to_list() == ["ph s 1"]  # Latin: one gap
    assert sheet["a"].to_list() != sorted(sheet["a"].to_list())      # not in ranking order
    assert best["id"].n_unique() == 1 and set(best["cell"]) == {"top20", "all"}


def test_sheet_round_trips_through_jsonl(tmp_path):
    sheet, key = blind.sheet_and_key(blind.draw_cells(_ranked(), 60, NO_EXCLUDE))
    blind.write_jsonl(sheet, tmp_path / "sheet.jsonl")
    lines = (tmp_path / "sheet.jsonl").read_text("utf-8").splitlines()
    assert set(json.loads(lines[0])) == {"id", "type", "a", "b"} and len(lines) == 15
    blind.write_jsonl(key, tmp_path / "key.jsonl")
    assert pl.read_ndjson(tmp_path / "key.jsonl").height == key.height


#: id -> (source, target): ED ÷ longer side 0.5, 0.5, 1/3, 0.5, 0.2, 0.5; q1, q3, q6 contained
KEY_PAIRS = {"q1": ("男孩", "这个 男孩"), "q2": ("老人", "老头"), "q3": ("她 丈夫", "丈夫"),
             "q4": ("去世", "逝世"), "q5": ("北京 到 上海", "北京 上海"), "q6": ("车祸", "一 场 车祸")}


def _key() -> pl.DataFrame:
    ids = ["q1", "q2", "q3", "q4", "q1", "q5", "q6"]
    return pl.DataFrame({
        "id": ids, "cell": ["top20", "top20", "top20", "top20", "all", "all", "all"],
        S.TYPE: ["phrase"] * 7, S.SOURCE: [KEY_PAIRS[i][0] for i in ids],
        S.TARGET: [KEY_PAIRS[i][1] for i in ids]})


@pytest.mark.parametrize("ratings, top_share, top_n, all_share, all_n", [
    ("q1\t5\nq2\t3\nq3\t2\nq4\t4\nq5\t1\nq6\t3\n", 3 / 4, 4, 2 / 3, 3),
    ("id\trating\nq1\t2\nq2\t1\n", 0.0, 2, 0.0, 1),             # header; unrated are left out
])
def test_shares_per_cell(tmp_path, ratings, top_share, top_n, all_share, all_n):
    path = tmp_path / "ratings.tsv"
    path.write_text(ratings, "utf-8")
    table = blind.shares(_key(), blind.read_ratings(path))
    row = {(r["type"], r["cell"]): r for r in table.iter_rows(named=True)}
    top, every = row[("phrase", "top20")], row[("phrase", "all")]
    assert (top["share_acceptable"], top["rated"]) == (pytest.approx(top_share), top_n)
    assert (every["share_acceptable"], every["rated"]) == (pytest.approx(all_share), all_n)
    p = top_share
    assert top["ci95_half_width"] == pytest.approx(1.96 * math.sqrt(p * (1 - p) / top_n))
    assert top["paper"] == 0.87 and row[("pattern", "all")]["paper"] == 0.61
    assert row[("pattern", "top20")]["rated"] == 0
    assert "| phrase | top20 |" in blind.format_shares(table)


def test_each_judged_cell_carries_its_diversity(tmp_path):
    path = tmp_path / "ratings.tsv"
    path.write_text("q1\t5\nq2\t3\nq3\t2\nq4\t4\nq5\t1\nq6\t3\n", "utf-8")
    table = blind.shares(_key(), blind.read_ratings(path))
    row = {(r["type"], r["cell"]): r for r in table.iter_rows(named=True)}
    top, every = row[("phrase", "top20")], row[("phrase", "all")]
    assert top["sample_ned"] == pytest.approx((0.5 + 0.5 + 1 / 3 + 0.5) / 4)
    assert top["sample_contained"] == pytest.approx(2 / 4)          # q1, q3
    assert top["acceptable_not_contained"] == pytest.approx(2 / 4)  # q2 (3), q4 (4)
    assert every["sample_ned"] == pytest.approx((0.5 + 0.2 + 0.5) / 3)
    assert every["sample_contained"] == pytest.approx(2 / 3)        # q1, q6
    assert every["acceptable_not_contained"] == 0.0                 # q5 is rated 1
    # the whole tier's metrics (an evaluation table) joined to the judged cells
    metrics = {"edit_distance": (1.83, 1.81, 1.85),
               "normalised_edit_distance": (0.485, 0.481, 0.489),
               "template_normalised_edit_distance": (0.5, 0.49, 0.51),
               "containment": (0.611, 0.600, 0.622), "cosine": (0.962, 0.960, 0.964)}
    automatic = pl.DataFrame([
        {"type": "phrase", "top": top_label, **{f"{m}{end}": v * scale
                                                  for m, values in metrics.items()
                                                  for end, v in zip(("", "_low", "_high"), values)}}
        for top_label, scale in (("20%", 1.0), ("60%", 0.5))])
    joined = blind.with_tier_metrics(table, automatic)
    assert joined.height == table.height
    got = {(r["type"], r["cell"]): r for r in joined.iter_rows(named=True)}
    assert got[("phrase", "top20")]["tier_containment"] == pytest.approx(0.611)
    assert got[("phrase", "all")]["tier_containment"] is None       # no 100 % row given
    text = blind.format_shares(joined)
    line = next(x for x in text.splitlines() if x.startswith("| phrase | top20 |"))
    assert ("| 0.458 | 50% | 50% | 1.830 ± 0.020 | 0.485 ± 0.004 | 0.500 ± 0.010 "
            "| 61.1% ± 1.1% |") in line
    assert len({x.count("|") for x in text.splitlines()}) == 1      # header, rule, rows agree


@pytest.mark.parametrize("ratings, message", [
    ("q1\t6\n", "line 1"),
    ("q1\t5\nq1\t4\n", "rated twice"),
    ("q9\t5\n", "not in the key"),
    ("q1 5\n", "line 1"),
])
def test_bad_ratings_are_reported(tmp_path, ratings, message):
    path = tmp_path / "ratings.tsv"
    path.write_text(ratings, "utf-8")
    with pytest.raises(BadInputError, match=message):
        blind.shares(_key(), blind.read_ratings(path))


def test_exclusion_lists_need_no_rating_and_may_omit_the_type(tmp_path):
    path = tmp_path / "exclude.tsv"
    path.write_text("source\ttarget\nph s 1\tph t 1\n[NP1] 的\t[NP1]\n", "utf-8")
    keys = blind.excluded_keys([path])
    assert set(keys.rows()) == {("phrase", "phs1", "pht1"), ("phrase", "pht1", "phs1"),
                                ("pattern", "[NP1]的", "[NP1]"), ("pattern", "[NP1]", "[NP1]的")}


def test_judge_score_puts_the_tier_metrics_next_to_each_row(tmp_path, capsys):
    from devtools import judge

    blind.write_jsonl(_key(), tmp_path / "key.jsonl")
    (tmp_path / "ratings.tsv").write_text("q1\t5\nq2\t3\nq3\t2\nq4\t4\nq5\t1\nq6\t3\n", "utf-8")
    row = {"type": "phrase", "top": "20%"}
    for metric, mean in (("edit_distance", 1.5), ("normalised_edit_distance", 0.7),
                         ("containment", 0.25), ("cosine", 0.9)):
        row |= {metric: mean, f"{metric}_low": mean - 0.01, f"{metric}_high": mean + 0.01}
    (tmp_path / "automatic.json").write_text(
        json.dumps({"run": "r", "signature": "sig-x", "rows": [row]}), "utf-8")
    judge.main(["score", "--key", str(tmp_path / "key.jsonl"),
                        "--ratings", str(tmp_path / "ratings.tsv"),
                        "--out", str(tmp_path / "score.json")])
    printed = capsys.readouterr().out
    line = next(x for x in printed.splitlines() if x.startswith("| phrase | top20 |"))
    # an automatic.json written before the template-word and in-order columns: those cells
    # are empty
    assert line.endswith("| 1.500 ± 0.010 | 0.700 ± 0.010 | – | 25.0% ± 1.0% | – "
                         "| 0.900 ± 0.010 |")
    assert "tier metrics signature: sig-x" in printed
    saved = json.loads((tmp_path / "score.json").read_text("utf-8"))
    assert saved["tier_signature"] == "sig-x"
    assert saved["rows"][0]["tier_containment"] == 0.25


@pytest.mark.parametrize("tokens, shown", [
    ("[NP1] 出生 于 [NP2]", "[NP1]出生于[NP2]"),            # Chinese words and slots join
    ("这个 男孩 ， “ 他 ”", "这个男孩，“他”"),               # CJK punctuation joins too
    ("用 multipart MIME [NN1]", "用multipart MIME[NN1]"),  # two Latin words keep their gap
    ("PyLongObject 或 [NP1]", "PyLongObject或[NP1]"),
    ("x  **  y", "x ** y"),                                  # symbols between Latin: one gap
    ("a b c d", "a b c d"),
    (" 男孩 ", "男孩"),
])
def test_sheet_shows_each_side_as_a_reader_writes_it(tokens, shown):
    frame = pl.DataFrame({S.SOURCE: [tokens]})
    assert frame.select(blind.surface_text(S.SOURCE))[S.SOURCE][0] == shown


def _reranked(order: list[int], n: int = 10) -> pl.DataFrame:
    """The phrases of ``_ranked(n)`` ranked in ``order`` (pair numbers, best first); the
    patterns keep their ranking."""
    base = _ranked(n_phrase=n)
    phrases = base.filter(pl.col(S.TYPE) == "phrase")
    by_number = {int(s.split()[-1]): row for s, row in zip(phrases[S.SOURCE],
                                                          phrases.iter_rows(named=True))}
    rows = [{**by_number[number], "rank": r, "percentile": r / n}
            for r, number in enumerate(order, start=1)]
    return pl.concat([pl.DataFrame(rows), base.filter(pl.col(S.TYPE) == "pattern")])


def test_tier_change_draws_the_pairs_that_enter_and_leave_the_top_fifth():
    from devtools.tier_change import draw_tier_changes

    before = _ranked(n_phrase=10)                            # top fifth: pairs 1 and 2
    after = _reranked([3, 1, 4, 2, 5, 6, 7, 8, 9, 10])       # top fifth: pairs 3 and 1
    keys = draw_tier_changes(before, after, per_set=5)
    phrases = keys.filter(pl.col(S.TYPE) == "phrase")
    assert phrases.filter(pl.col("cell") == "entering")[S.SOURCE].to_list() == ["ph s 3"]
    assert phrases.filter(pl.col("cell") == "leaving")[S.SOURCE].to_list() == ["ph s 2"]
    assert phrases["tier_before"].to_list() == [2, 2] and phrases["set_size"].to_list() == [1, 1]
    assert phrases["ranked_before"].to_list() == [10, 10] == phrases["ranked_after"].to_list()
    assert keys.filter(pl.col(S.TYPE) == "pattern").is_empty()   # the patterns did not move


def test_tier_change_is_the_entering_minus_the_leaving_share_of_the_tier():
    from devtools.tier_change import format_tier_change, tier_change

    rows = ([("entering", f"e{i}", 4 if i < 8 else 2) for i in range(10)]     # 80 %
            + [("leaving", f"l{i}", 4 if i < 5 else 1) for i in range(10)])   # 50 %
    key = pl.DataFrame({"id": [r[1] for r in rows], "cell": [r[0] for r in rows],
                        S.TYPE: ["phrase"] * 20, S.SOURCE: [r[1] for r in rows],
                        S.TARGET: ["t"] * 20, "set_size": [30] * 20,
                        "entering_size": [30] * 20, "leaving_size": [30] * 20,
                        "tier_before": [200] * 20, "tier_after": [200] * 20,
                        "ranked_before": [1000] * 20, "ranked_after": [1000] * 20})
    ratings = pl.DataFrame({"id": [r[1] for r in rows], "rating": [r[2] for r in rows]})
    row = tier_change(key, ratings).row(0, named=True)
    assert row["entering_acceptable"] == pytest.approx(0.8)
    assert row["leaving_acceptable"] == pytest.approx(0.5)
    assert row["delta"] == pytest.approx(30 * (0.8 - 0.5) / 200)
    half = 1.96 * math.sqrt((30 / 200) ** 2 * (0.8 * 0.2 / 10 + 0.5 * 0.5 / 10))
    assert row["delta_ci95"] == pytest.approx(half)
    assert "+4.5 ± " in format_tier_change(tier_change(key, ratings))
    # a filter changed how many pairs are ranked: the tiers differ, so no Δ is claimed
    resized = tier_change(key.with_columns(pl.lit(210).alias("tier_after"),
                                           pl.lit(1050).alias("ranked_after")), ratings)
    assert resized["delta"].to_list() == [None]
    assert "rankings differ in size" in format_tier_change(resized)
    # rankings of one size whose tiers differ by a few distinct pairs (two labels): Δ on n after
    sized = key.with_columns(pl.lit(199).alias("tier_after"))
    assert tier_change(sized, ratings)["delta"][0] == pytest.approx(30 * (0.8 - 0.5) / 199)
    refiltered = sized.with_columns(pl.lit(990).alias("ranked_after"))
    assert tier_change(refiltered, ratings)["delta"].to_list() == [None]
    with pytest.raises(BadInputError, match="not in the key"):
        tier_change(key, pl.concat([ratings, pl.DataFrame({"id": ["x9"], "rating": [3]})]))


def test_a_set_judged_out_entirely_still_counts_and_withholds_the_change(tmp_path):
    from devtools.blind import excluded_keys
    from devtools.tier_change import draw_tier_changes, format_tier_change, tier_change

    before = _ranked(n_phrase=10)                            # top fifth: pairs 1 and 2
    after = _reranked([3, 1, 4, 2, 5, 6, 7, 8, 9, 10])       # 3 enters, 2 leaves
    judged = tmp_path / "judged.tsv"
    judged.write_text("type\tsource\ttarget\nphrase\tph s 2\tph t 2\n", "utf-8")
    keys = draw_tier_changes(before, after, per_set=5, exclude=excluded_keys([judged]))
    assert keys["cell"].to_list() == ["entering"]             # the leaving pair was judged
    assert keys["leaving_size"].to_list() == [1] and keys["entering_size"].to_list() == [1]
    key = keys.with_columns(pl.lit("q1").alias("id"))
    table = tier_change(key, pl.DataFrame({"id": ["q1"], "rating": [4]}))
    row = table.row(0, named=True)
    # before, the empty leaving set counted as no pair leaving: Δ = +50 points, wrongly
    assert row["leaving_size"] == 1 and row["leaving_judged"] == 0
    assert row["delta"] is None and row["delta_note"] == "a set has no judged pair"
    assert "a set has no judged pair" in format_tier_change(table)


def test_judge_change_sheet_and_score(tmp_path, capsys, monkeypatch):
    from devtools import judge

    rankings = {"before": _ranked(n_phrase=10),
                "after": _reranked([3, 1, 4, 2, 5, 6, 7, 8, 9, 10])}
    monkeypatch.setattr("cppdb.rank.pipeline.read_ranked", lambda run: rankings[run.name])
    judge.main(["change-sheet", "--before", str(tmp_path / "before"),
                        "--after", str(tmp_path / "after"), "--out", str(tmp_path / "s")])
    lines = (tmp_path / "s" / "sheet.jsonl").read_text("utf-8").splitlines()
    sheet = [json.loads(line) for line in lines]
    assert {r["a"] for r in sheet} == {"ph s 3", "ph s 2"} and "cell" not in sheet[0]
    (tmp_path / "r.tsv").write_text("".join(f"{r['id']}\t{4 if r['a'] == 'ph s 3' else 2}\n"
                                            for r in sheet), "utf-8")
    judge.main(["change-score", "--key", str(tmp_path / "s" / "key.jsonl"),
                        "--ratings", str(tmp_path / "r.tsv"), "--out", str(tmp_path / "c.json")])
    assert "| phrase | 2 | 1 pairs: 1, 100.0% | 1 pairs: 1, 0.0% | +50.0 ± 0.0 |" \
        in capsys.readouterr().out
    assert json.loads((tmp_path / "c.json").read_text())["rows"][0]["delta"] == 0.5


def test_the_tool_and_each_command_print_their_help(capsys):
    from devtools import judge

    for argv in (["--help"], ["sheet", "--help"], ["score", "--help"],
                 ["change-sheet", "--help"], ["change-score", "--help"]):
        with pytest.raises(SystemExit) as done:
            judge.main(argv)
        assert done.value.code == 0
        assert "usage:" in capsys.readouterr().out


def test_change_sheet_says_why_there_is_nothing_to_judge(tmp_path, capsys, monkeypatch):
    from devtools import judge

    monkeypatch.setattr("cppdb.rank.pipeline.read_ranked", lambda run: _ranked(n_phrase=10))
    judge.main(["change-sheet", "--before", str(tmp_path / "a"),
                        "--after", str(tmp_path / "b"), "--out", str(tmp_path / "s")])
    out = capsys.readouterr().out
    assert "(0 pairs to judge)" in out and "or every pair that changed was judged before" in out


def _best_phrases_judged(tmp_path, count: int) -> pl.DataFrame:
    """Excluded keys of a label file holding the best ``count`` phrases of :func:`_ranked`."""
    labels = tmp_path / "judged.tsv"
    labels.write_text("type\tsource\ttarget\n" + "".join(
        f"phrase\tph s {r}\tph t {r}\n" for r in range(1, count + 1)), "utf-8")
    return blind.excluded_keys([labels])


def test_each_tenth_gives_its_share_even_when_the_top_was_judged_before(tmp_path):
    ranked = _ranked(n_phrase=100, n_pattern=20)
    # the label file holds 9 of the best 10 phrases and none below them
    keys = blind.draw_cells(ranked, 20, _best_phrases_judged(tmp_path, 9), seed=3)
    every = keys.filter((pl.col("cell") == "all") & (pl.col(S.TYPE) == "phrase"))
    # a uniform draw of 20 of the 91 fresh pairs would take the best tenth's pair 22 % of times
    assert every.group_by(blind.STRATUM).len().sort(blind.STRATUM)["len"].to_list() \
        == [1] + [2] * 9
    assert every.filter(pl.col(blind.STRATUM) == 0)["rank"].to_list() == [10]
    assert set(every[blind.STRATUM_SHARE].to_list()) == {0.1}
    top = keys.filter((pl.col("cell") == "top20") & (pl.col(S.TYPE) == "phrase"))
    assert top[blind.STRATUM].to_list().count(1) == 10 and top["rank"].max() <= 20
    assert set(top[blind.STRATUM_SHARE].to_list()) == {0.5}


def test_a_tenth_short_of_pairs_keeps_its_weight_in_the_share(tmp_path):
    keys = blind.draw_cells(_ranked(n_phrase=100, n_pattern=20), 20,
                            _best_phrases_judged(tmp_path, 9), seed=3)
    sheet, key = blind.sheet_and_key(keys)
    every = key.filter((pl.col("cell") == "all") & (pl.col(S.TYPE) == "phrase"))
    # the best tenth's one pair is acceptable, the other 18 are not: it weighs a tenth
    ratings = pl.DataFrame({"id": every["id"],
                            "rating": [5 if s == 0 else 1 for s in every[blind.STRATUM]]})
    row = blind.shares(key, ratings).filter((pl.col("type") == "phrase")
                                            & (pl.col("cell") == "all")).row(0, named=True)
    assert row["share_acceptable"] == pytest.approx(0.1)          # not 1 of 19
    w = [0.1] + [0.05] * 18
    n_eff = sum(w) ** 2 / sum(x * x for x in w)
    assert row["ci95_half_width"] == pytest.approx(1.96 * math.sqrt(0.1 * 0.9 / n_eff))


def test_remainder_tenths_are_drawn_not_always_the_best():
    ranked = _ranked(n_phrase=500, n_pattern=300)
    drawn = {tuple(sorted(blind.draw_cells(ranked, 3, NO_EXCLUDE, seed=s)
                          .filter((pl.col("cell") == "all") & (pl.col(S.TYPE) == "phrase"))
                          [blind.STRATUM].to_list())) for s in range(6)}
    assert len(drawn) > 1 and drawn != {(0, 1, 2)}


def test_a_tenth_with_no_fresh_pair_is_said_not_covered(tmp_path):
    keys = blind.draw_cells(_ranked(n_phrase=100, n_pattern=20), 20,
                            _best_phrases_judged(tmp_path, 10), seed=3)
    _, key = blind.sheet_and_key(keys)
    ratings = pl.DataFrame({"id": key["id"].unique(), "rating": 4})
    table = blind.shares(key, ratings)
    row = table.filter((pl.col("type") == "phrase") & (pl.col("cell") == "all")).row(0, named=True)
    assert row["rated"] == 18 and row["covered"] == pytest.approx(0.9)
    assert row["share_acceptable"] == 1.0
    assert "| phrase | all | 18 (of 90%) |" in blind.format_shares(table)
    assert "| pattern | all | 20 |" in blind.format_shares(table)


def test_a_cell_with_no_fresh_pair_says_so_without_a_share(tmp_path):
    keys = blind.draw_cells(_ranked(n_phrase=100, n_pattern=20), 20,
                            _best_phrases_judged(tmp_path, 20), seed=3)
    _, key = blind.sheet_and_key(keys)
    text = blind.format_shares(blind.shares(key, pl.DataFrame({"id": key["id"].unique(),
                                                               "rating": 4})))
    assert "| phrase | top20 | 0 | – |" in text and "| phrase | all | 16 (of 80%) |" in text


def test_a_pair_under_two_labels_is_drawn_once_per_ranked_row():
    ranked = _ranked(n_phrase=20, n_pattern=5)
    # the best phrase is ranked again under a second left-hand-side label
    again = ranked.filter(pl.col("rank") == 1, pl.col(S.TYPE) == "phrase").with_columns(
        pl.lit("NN").alias(S.LHS), pl.lit(21, dtype=pl.Int64).alias("rank"))
    ranked = pl.concat([ranked, again])
    keys = blind.draw_cells(ranked, 100, NO_EXCLUDE)
    every = keys.filter((pl.col("cell") == "all") & (pl.col(S.TYPE) == "phrase"))
    assert every.height == 21 and every.filter(pl.col("rank") == 21)[S.LHS].to_list() == ["NN"]
