"""The stage runner (cppdb/stages.py): plan checks, dry runs, failure records and resume."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from cppdb.annotate.settings import AnnotateSettings
from cppdb.cli import app
from cppdb.config import load_config
from cppdb.errors import ConfigError
from cppdb.run import RunDir
from cppdb.stages import Artifact, External, PlanError, Stage, plan_stages, run_stages

from tests.extractors.test_bilingual_pipeline import ALIGNMENT, CORPUS


def _write(root: Path, name: str, columns: dict[str, list]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    pl.DataFrame(columns).write_parquet(root / name)


def _noop(_handle: object) -> None:
    return None


# -- the plan check: a table of hand-made plans -----------------------------------------------
# each case: files present in the run dir (name -> columns), external files present,
# the stages as (name, reads, writes), and the problems expected (substrings, in order)
CASES = {
    "all inputs there": (
        {"a.parquet": ["id", "x"]}, ["in.txt"],
        [("s1", [External("input", ("in.txt",)), Artifact("a.parquet", ("id",))], ["b.parquet"]),
         ("s2", [Artifact("b.parquet", ("id",))], ["c.parquet"])],
        []),
    "an earlier stage makes it (must NOT fire)": (
        {}, [],
        [("s1", [], ["b.parquet"]), ("s2", [Artifact("b.parquet", ("nothing_checked",))], [])],
        []),
    "every missing input at once": (
        {}, [],
        [("s1", [External("the corpus", ("zh.txt", "en.txt"))], ["b.parquet"]),
         ("s2", [Artifact("b.parquet"), Artifact("made_by_nobody.parquet")], []),
         ("s3", [External("labels", ("labels.tsv",))], [])],
        ["the corpus zh.txt", "the corpus en.txt", "made_by_nobody.parquet", "labels.tsv"]),
    "a key column is missing": (
        {"a.parquet": ["id"]}, [],
        [("s1", [Artifact("a.parquet", ("id", "zh_tokens", "en_tokens"))], [])],
        ["['zh_tokens', 'en_tokens']"]),
    "any-of needs one (must NOT fire)": (
        {}, ["p2.parquet"],
        [("s1", [External("a pair table", ("p1.parquet", "p2.parquet"), any_of=True)], [])],
        []),
    "any-of with none there": (
        {}, [],
        [("s1", [External("a pair table", ("p1.parquet", "p2.parquet"), any_of=True)], [])],
        ["none of p1.parquet, p2.parquet"]),
    "a stage name twice": (
        {}, [], [("s1", [], []), ("s1", [], [])], ["stage names repeat"]),
}


@pytest.mark.parametrize("present, externals, declared, expected", CASES.values(), ids=CASES)
def test_plan_check(tmp_path, monkeypatch, present, externals, declared, expected):
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "run"
    for name, columns in present.items():
        _write(root, name, {c: [1] for c in columns})
    for name in externals:
        (tmp_path / name).write_text("x\n", "utf-8")
    stages = [Stage(n, tuple(r), tuple(w), _noop) for n, r, w in declared]
    if not expected:
        assert [s.action for s in plan_stages(root, "test", stages).stages] == ["run"] * len(stages)
        return
    with pytest.raises(PlanError) as err:
        plan_stages(root, "test", stages)
    text = str(err.value)
    assert err.value.code == "E410" and f"{len(expected)} problem(s)" in text
    positions = [text.index(item) for item in expected]
    assert positions == sorted(positions)


def test_a_done_stage_needs_neither_its_inputs_nor_runs_again(tmp_path):
    calls: list[str] = []

    def body(name: str, artifact: str):
        def write(handle) -> None:
            calls.append(name)
            handle.write_parquet(artifact, pl.DataFrame({"id": [1]}))
        return write

    source = tmp_path / "source.txt"
    source.write_text("x\n", "utf-8")
    stages = [Stage("first", (External("source", (source,)),), ("a.parquet",),
                    body("first", "a.parquet")),
              Stage("second", (Artifact("a.parquet", ("id",)),), ("b.parquet",),
                    body("second", "b.parquet"))]
    run = RunDir(tmp_path / "run", load_config(), command="test")
    run_stages(run, "test", stages)
    assert calls == ["first", "second"]
    source.unlink()                                 # 'first' is done: its input is not needed
    plan = run_stages(run, "test", stages)
    assert calls == ["first", "second"]
    assert [s.action for s in plan.stages] == ["skip", "skip"]


def test_a_stage_that_does_not_write_what_it_declares_fails(tmp_path):
    run = RunDir(tmp_path / "run", load_config(), command="test")
    with pytest.raises(Exception, match="without writing"):
        run_stages(run, "test", [Stage("lazy", (), ("never.parquet",), _noop)])
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text("utf-8"))
    assert manifest["status"] == "failed" and manifest["stages"]["lazy"]["status"] == "failed"


# -- the real pipelines ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("corpus")
    (root / "par.txt").write_text(CORPUS, "utf-8")
    (root / "par.align").write_text(ALIGNMENT, "utf-8")
    return root / "par.txt", root / "par.align"


CONFIG = {"annotate.workers": 1, "annotate.chunk_size": 1, "bilingual.chunk_size": 1,
          "bilingual.workers": 1}


def _extract(corpus, out: Path, sampled: bool = False):
    """With ``sampled``: no Pharaoh file; the aligner trains on 2 of the 3 pairs and aligns
    one pair per chunk (the chunked align stage)."""
    from cppdb.extractors.bilingual import extract_bilingual

    overrides = {**CONFIG, **({"align_words.train_sample": 2} if sampled else {})}
    return extract_bilingual(None, None, out, load_config(overrides=overrides),
                             parallel_path=corpus[0],
                             alignment_path=None if sampled else corpus[1])


def _tables(run: Path) -> dict[str, pl.DataFrame]:
    names = ("annotations.parquet", "alignment.parquet", "phrase_occurrences.parquet",
             "phrase_pairs.parquet", "pattern_pairs.parquet")
    return {n: pl.read_parquet(run / n) for n in names}


def test_dry_run_prints_the_plan_and_writes_nothing(tmp_path, corpus):
    out = tmp_path / "bi"
    args = ["extract-bilingual", "--parallel", str(corpus[0]), "--alignment", str(corpus[1]),
            "-o", str(out), "--set", "annotate.workers=1", "--dry-run"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert not out.exists()
    lines = [line for line in first.output.splitlines() if line[:1].isdigit()]
    assert [line.split(" [")[0] for line in lines] == ["1. annotate", "2. align", "3. extract",
                                                      "4. pivot"]
    assert all("[run;" in line for line in lines)
    assert "reads:  annotations.parquet, the Pharaoh alignment" in first.output
    CliRunner().invoke(app, args[:-1] + ["--quiet"])
    again = CliRunner().invoke(app, args + ["--json"])
    plan = json.loads(again.output)
    assert [s["action"] for s in plan["stages"]] == ["skip"] * 4
    other = CliRunner().invoke(app, args + ["--set", "bilingual.tolerance=0"])
    assert "refused without --fresh" in other.output
    assert "settings [bilingual]" in other.output          # says what changed
    missing = CliRunner().invoke(app, ["rank", str(tmp_path / "nothing"), "--dry-run",
                                       "--labels", str(tmp_path / "labels.tsv")])
    assert missing.exit_code == 2
    assert "E410" in missing.output and "pair table" in missing.output
    assert "labels.tsv" in missing.output


@pytest.mark.parametrize("where", ["extract", "pivot",
                                   pytest.param("align", marks=pytest.mark.slow)])
def test_resume_after_an_injected_failure_gives_identical_output(tmp_path, corpus, monkeypatch,
                                                                 where):
    import cppdb.align.words.corpus as align_corpus
    import cppdb.extractors.bilingual as bilingual

    sampled = where == "align"
    clean = _tables(_extract(corpus, tmp_path / "clean", sampled).run_dir)
    calls = {"n": 0}
    if where == "align":                   # the sampled, chunked align stage: fail on chunk 2
        real_align = align_corpus.align_with

        def flaky_align(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == 2:
                raise RuntimeError("injected failure")
            return real_align(*args, **kwargs)
        monkeypatch.setattr(align_corpus, "align_with", flaky_align)
    elif where == "extract":                 # fail on the second chunk, after one part is on disk
        real = bilingual.extract_range

        def flaky(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == 2:
                raise RuntimeError("injected failure")
            return real(*args, **kwargs)
        monkeypatch.setattr(bilingual, "extract_range", flaky)
    else:
        def broken(*args, **kwargs):
            raise RuntimeError("injected failure")
        monkeypatch.setattr(bilingual, "pivot_pairs", broken)     # the pivot's one entry
    out = tmp_path / "interrupted"
    with pytest.raises(RuntimeError, match="injected failure"):
        _extract(corpus, out, sampled)
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    assert manifest["status"] == "failed"
    assert manifest["stages"][where]["status"] == "failed"
    assert "injected failure" in manifest["stages"][where]["error"]
    artifact = {"extract": "phrase_occurrences", "align": "alignment"}.get(where)
    if artifact:
        assert len(list((out / f"{artifact}.parquet.parts").glob("part-*"))) == 1
    monkeypatch.undo()
    resumed = _tables(_extract(corpus, out, sampled).run_dir)
    for name, frame in clean.items():
        assert resumed[name].equals(frame), name
    assert json.loads((out / "manifest.json").read_text("utf-8"))["status"] == "done"


@pytest.mark.parametrize("cap, sampled", [(2, True),
                                          (3, False),     # must not fire: not above the cap
                                          (0, False)])    # 0: always the whole corpus
def test_max_train_pairs_bounds_whole_corpus_training(tmp_path, corpus, cap, sampled):
    """With ``train_sample = 0`` a corpus above ``align_words.max_train_pairs`` trains on a
    seeded sample of that size and aligns in chunks — the very run ``train_sample = cap``
    makes — and says why in the manifest; at or under the cap it trains on every pair."""
    from cppdb.extractors.bilingual import extract_bilingual

    def run(out: Path, **extra) -> Path:
        config = load_config(overrides={**CONFIG, **extra})
        return extract_bilingual(None, None, out, config, parallel_path=corpus[0]).run_dir

    capped = run(tmp_path / "capped", **{"align_words.max_train_pairs": cap})
    notes = json.loads((capped / "manifest.json").read_text("utf-8"))[
        "stages"]["align"].get("notes", {})
    if not sampled:
        assert "train_sample" not in notes
        return
    assert notes["train_sample"]["rows"] == cap and notes["train_sample"]["of"] == 3
    assert notes["train_sample"]["why"] == "max_train_pairs"
    asked = run(tmp_path / "asked", **{"align_words.train_sample": cap})
    assert json.loads((asked / "manifest.json").read_text("utf-8"))[
        "stages"]["align"]["notes"]["train_sample"]["why"] == "train_sample"
    capped_tables = _tables(capped)
    for name, frame in _tables(asked).items():
        assert capped_tables[name].equals(frame), name


@pytest.mark.slow
def test_align_workers_give_the_tables_of_one_process(tmp_path, corpus):
    """``align_words.workers = 2``: the sampled align stage's chunk is split over two spawned
    processes that load the saved ensemble; the tables equal those of one process, and the
    saved ensemble is gone afterwards."""
    from cppdb.align.words.corpus import ALIGN_MODEL
    from cppdb.extractors.bilingual import extract_bilingual

    def run(out: Path, workers: int) -> Path:
        config = load_config(overrides={**CONFIG, "bilingual.chunk_size": 3,
                                        "align_words.train_sample": 2,
                                        "align_words.aligners": ["thot", "dictionary"],
                                        "align_words.workers": workers})
        return extract_bilingual(None, None, out, config, parallel_path=corpus[0]).run_dir

    with pytest.raises(ConfigError, match="align_words.workers"):
        run(tmp_path / "refused", -1)             # refused before any stage runs
    assert not (tmp_path / "refused").exists()
    pooled = run(tmp_path / "pooled", 2)
    notes = json.loads((pooled / "manifest.json").read_text("utf-8"))["stages"]["align"]["notes"]
    assert notes["workers"] == 2
    assert not (pooled / ALIGN_MODEL).exists()
    single = _tables(run(tmp_path / "single", 1))
    assert single["alignment.parquet"]["link_zh"].list.len().sum() > 0
    for name, frame in _tables(pooled).items():
        assert single[name].equals(frame), name


def test_rank_records_a_failure_and_resumes_to_the_same_ranking(tmp_path, monkeypatch, data_dir):
    import cppdb.rank.pipeline as pipeline
    from cppdb.rank.pairs import read_tsv_pairs, text_pairs
    from tests.rank.test_rank import NO_EMBEDDING, make_run

    labels = read_tsv_pairs(data_dir / "labels" / "paraphrase_labels.tsv", with_score=True)
    labels = labels.filter(~pl.col("source").str.contains(r"\["))
    labelled = text_pairs(labels["source"].to_list(), labels["target"].to_list(),
                          AnnotateSettings(zh_backend="jieba")
                          ).with_columns(pl.Series("label", labels["label"]))
    config = load_config(overrides=NO_EMBEDDING)
    make_run(tmp_path / "clean", labelled)
    clean = pl.read_parquet(pipeline.rank_run(tmp_path / "clean", config).ranking_dir
                            / pipeline.RANKED)
    make_run(tmp_path / "run", labelled)
    real = pipeline.score_part   # what the score stage calls for each chunk of scores

    def broken(*args, **kwargs):
        raise RuntimeError("injected failure")
    monkeypatch.setattr(pipeline, "score_part", broken)
    with pytest.raises(RuntimeError, match="injected failure"):
        pipeline.rank_run(tmp_path / "run", config)
    manifest = json.loads((tmp_path / "run" / "ranking" / "manifest.json").read_text("utf-8"))
    assert manifest["status"] == "failed" and manifest["stages"]["score"]["status"] == "failed"
    assert manifest["stages"]["train"]["status"] == "done"
    monkeypatch.setattr(pipeline, "score_part", real)
    resumed = pipeline.rank_run(tmp_path / "run", config)
    assert pl.read_parquet(resumed.ranking_dir / pipeline.RANKED).equals(clean)


def test_an_optional_input_is_planned_shown_and_recorded(tmp_path):
    present, absent = tmp_path / "lex.parquet", tmp_path / "missing.parquet"
    pl.DataFrame({"a": [1]}).write_parquet(present)
    here = External("tables", (present,), optional=True, effect="f_x is null")
    gone = External("more tables", (present, absent), optional=True, effect="f_y is null")
    stage = Stage("s", (here, gone), ("out.parquet",),
                  lambda st: st.write_parquet("out.parquet", pl.DataFrame({"a": [1]})))
    text = plan_stages(tmp_path / "run", "test", [stage]).render()     # no PlanError
    assert f"tables: {present} (optional; present)" in text
    assert f"more tables: {present} | {absent} (optional; absent, so f_y is null)" in text
    run = RunDir(tmp_path / "run", load_config(), command="test")
    run_stages(run, "test", [stage])
    notes = json.loads((tmp_path / "run" / "manifest.json").read_text("utf-8"))["stages"]["s"]
    assert notes["notes"]["optional_inputs"] == {"tables": True, "more tables": False}
    required = Stage("s", (External("more tables", (absent,)),), (), _noop)
    with pytest.raises(PlanError, match="missing.parquet"):
        plan_stages(tmp_path / "run2", "test", [required])
