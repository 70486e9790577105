"""f_pivot_context: the English contexts of the two sides around a shared pivot."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cppdb.features import pivot_context as pc
from cppdb.features.pivot_context import PIVOT_CONTEXT, pivot_context

# sentence id -> English lemmas; the pivot is at the position given in OCCURRENCES
SENTENCES = {
    0: "the physical exercise keep your body healthy every morning".split(),
    1: "doctor say physical activity help the body and health".split(),
    2: "she study physical science and chemistry at the university".split(),
    3: "the university lab teach physical law of motion and chemistry".split(),
    4: "worker ask for a higher salary this year from the company".split(),
    5: "the company raise the salary of every worker this year".split(),
    6: "a quiet river run past the old town".split(),
}
#: (sentence id, kind, Chinese side, English pivot, pivot start, pivot end)
OCCURRENCES = [
    (0, "phrase", "身体", "physical", 1, 2), (1, "phrase", "身体", "physical", 2, 3),
    (2, "phrase", "物理", "physical", 3, 4), (3, "phrase", "物理", "physical", 4, 5),
    (4, "phrase", "工资", "salary", 5, 6), (5, "phrase", "薪金", "salary", 4, 5),
    (6, "phrase", "河", "river", 2, 3), (1, "phrase", "运动", "activity", 3, 4),
]


def _run(tmp_path: Path, occurrences=OCCURRENCES) -> Path:
    pl.DataFrame({"id": [o[0] for o in occurrences], "kind": [o[1] for o in occurrences],
                  "zh": [o[2] for o in occurrences], "en": [o[3] for o in occurrences],
                  "en_start": [o[4] for o in occurrences], "en_end": [o[5] for o in occurrences]},
                 schema_overrides={"en_start": pl.Int32, "en_end": pl.Int32}
                 ).write_parquet(tmp_path / pc.OCCURRENCES)
    pl.DataFrame({"id": list(SENTENCES), "en_lemma": list(SENTENCES.values())}
                 ).write_parquet(tmp_path / pc.ANNOTATIONS)
    return tmp_path


def _pairs(*rows: tuple[str, str, list[str] | None]) -> pl.DataFrame:
    return pl.DataFrame({"type": ["phrase"] * len(rows), "source": [r[0] for r in rows],
                         "target": [r[1] for r in rows], "pivots": [r[2] for r in rows]},
                        schema_overrides={"pivots": pl.List(pl.String)})


def _scores(frame: pl.DataFrame) -> dict[tuple[str, str], float | None]:
    return {(s, t): v for s, t, v in frame.select("source", "target", PIVOT_CONTEXT).rows()}


def test_one_sense_of_the_pivot_scores_above_two(tmp_path):
    run = _run(tmp_path)
    scores = _scores(pivot_context(_pairs(("身体", "物理", ["physical"]),
                                          ("工资", "薪金", ["salary"])), run))
    # 身体 is "physical" as in exercise and health, 物理 as in science: no shared context word
    assert scores[("身体", "物理")] == 0.0
    # 工资 / 薪金 share worker, company, year around "salary" (and differ in ask/raise...)
    assert 0.3 < scores[("工资", "薪金")] < 0.6
    assert scores[("工资", "薪金")] <= 1.0


def test_the_pivot_span_itself_is_not_context(tmp_path):
    # both sides' sentences share only the pivot word: the score must not come from it
    run = _run(tmp_path, [(6, "phrase", "河", "river", 2, 3), (6, "phrase", "河流", "river", 2, 3),
                          (2, "phrase", "科学", "science", 4, 5)])
    scores = _scores(pivot_context(_pairs(("河", "河流", ["river"])), run))
    assert scores[("河", "河流")] > 0.99          # the same sentence around it: same sense
    inside = tmp_path / "inside"
    inside.mkdir()
    alone = _run(inside, [(6, "phrase", "河", "river", 0, 8), (2, "phrase", "河流", "river", 0, 10)])
    # every word of both sentences is inside the pivot span: nothing left to compare
    assert _scores(pivot_context(_pairs(("河", "河流", ["river"])), alone))[("河", "河流")] == 0.0


def test_only_shared_pivots_count_and_pairs_without_pivots_are_null(tmp_path):
    run = _run(tmp_path)
    scores = _scores(pivot_context(_pairs(("身体", "运动", ["physical", "activity"]),
                                          ("工资", "薪金", None),
                                          ("工资", "薪金", [])), run.resolve()))
    # 身体↔physical and 运动↔activity exist, but no side has both pivots: no evidence, 0
    assert scores[("身体", "运动")] == 0.0
    assert scores[("工资", "薪金")] is None


def test_without_the_run_files_the_feature_is_null(tmp_path):
    frame = pivot_context(_pairs(("工资", "薪金", ["salary"])), tmp_path)
    assert frame[PIVOT_CONTEXT].to_list() == [None]


def test_order_of_pairs_does_not_change_the_scores(tmp_path):
    run = _run(tmp_path)
    rows = [("身体", "物理", ["physical"]), ("工资", "薪金", ["salary"]),
            ("物理", "身体", ["physical"]), ("薪金", "工资", ["salary"])]
    forward = _scores(pivot_context(_pairs(*rows), run))
    backward = _scores(pivot_context(_pairs(*reversed(rows)), run))
    assert forward == backward
    assert forward[("工资", "薪金")] == pytest.approx(forward[("薪金", "工资")])


def test_a_frequent_side_uses_its_first_occurrences_only(tmp_path, monkeypatch):
    # the first two sentences of 工资 are about pay, the third about a river: with a cap of 2
    # the river never enters its bag
    occurrences = [(4, "phrase", "工资", "salary", 5, 6), (5, "phrase", "工资", "salary", 4, 5),
                   (6, "phrase", "工资", "salary", 2, 3), (6, "phrase", "薪金", "salary", 2, 3)]
    run = _run(tmp_path, occurrences)
    pairs = _pairs(("工资", "薪金", ["salary"]))
    assert _scores(pivot_context(pairs, run))[("工资", "薪金")] > 0.0
    monkeypatch.setattr(pc, "MAX_OCCURRENCES", 2)
    assert _scores(pivot_context(pairs, run))[("工资", "薪金")] == 0.0


def test_a_ranked_bilingual_run_has_the_feature(ranked_bilingual_run):
    features = pl.read_parquet(ranked_bilingual_run / "ranking" / "features.parquet")
    values = features[PIVOT_CONTEXT]
    assert values.null_count() == 0
    assert 0.0 <= values.min() and values.max() <= 1.0 and values.max() > 0.0
