"""Pair-table writers and readers: PPDB lines, Chinese-PPDB JSONL, TSV, Parquet."""
from __future__ import annotations

import json

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from cppdb import schema as S
from cppdb.errors import BadInputError, ConfigError
from cppdb.export import read_pairs, write_pairs


def pair_table() -> pl.DataFrame:
    rows = [
        dict(source="死于 车祸", target="在 车祸 中 丧生", type="phrase", lhs="VP",
             source_pos=["VV", "NN"], target_pos=["P", "NN", "LC", "VV"],
             p_t_given_s=2 / 9, p_s_given_t=1 / 3, count=1, n_pivots=1,
             pivots=["died in a car accident"], align_src=[0, 0, 1], align_tgt=[0, 3, 1],
             origin="bilingual", score=0.8125),
        dict(source="[NP1] 的 [NP2]", target="[NP2] 属于 [NP1]", type="pattern", lhs="NP",
             source_pos=["", "DEG", ""], target_pos=["", "VV", ""],
             p_t_given_s=0.5, p_s_given_t=None, count=3, n_pivots=2,
             pivots=["[NP1] of [NP2]", "[NP2] 's [NP1]"], align_src=[0, 2], align_tgt=[2, 0],
             origin="bilingual", score=-1.5e-7),
    ]
    frame = pl.DataFrame(rows).with_columns(
        pl.col("source").str.split(" ").alias(S.SOURCE_TOKENS),
        pl.col("target").str.split(" ").alias(S.TARGET_TOKENS),
        pl.lit([], dtype=S.PAIR_COLUMNS[S.DOCUMENTS]).alias(S.DOCUMENTS))     # pivot pairs
    return frame.with_columns([pl.col(n).cast(d) for n, d in S.PAIR_COLUMNS.items()])


CORE = [S.SOURCE, S.TARGET, S.SOURCE_TOKENS, S.TARGET_TOKENS, S.TYPE, S.LHS,
        S.P_TGT_GIVEN_SRC, S.P_SRC_GIVEN_TGT, S.COUNT, S.N_PIVOTS, S.ALIGN_SRC, S.ALIGN_TGT,
        "score"]


@pytest.mark.parametrize("fmt, columns", [
    ("parquet", list(pair_table().columns)),
    ("tsv", list(pair_table().columns)),
    ("jsonl", CORE + [S.PIVOTS, S.DOCUMENTS, S.ORIGIN]),
    ("ppdb", CORE),
])
def test_round_trip(tmp_path, fmt, columns):
    frame = pair_table()
    path = tmp_path / f"pairs.{fmt}"
    assert write_pairs(frame, path, fmt) == 2
    back = read_pairs(path, fmt)
    assert_frame_equal(back.select(columns), frame.select(columns))


@pytest.mark.parametrize("fmt", ["jsonl", "tsv", "parquet"])
def test_documents_of_a_sentence_pair_round_trip_typed(tmp_path, fmt):
    """A monolingual pair's documents are (version, path, part) records in every format that
    keeps them, a whole file's part null; its pivots stay empty (no composed id strings)."""
    documents = [{"version": 0, "path": "a/第一章.txt", "part": None},
                 {"version": 1, "path": "b/全书.txt", "part": 2}]
    frame = pl.DataFrame([dict(source="他走了。", target="他离开了。", type="sentence", lhs="S",
                               count=1, n_pivots=0, pivots=[], documents=documents,
                               align_src=[0], align_tgt=[0], origin="ebook")]).with_columns(
        pl.col("source").str.split(" ").alias(S.SOURCE_TOKENS),
        pl.col("target").str.split(" ").alias(S.TARGET_TOKENS))
    frame = frame.with_columns([pl.col(n).cast(d) for n, d in S.PAIR_COLUMNS.items()
                                if n in frame.columns])
    path = tmp_path / f"pairs.{fmt}"
    write_pairs(frame, path, fmt)
    back = read_pairs(path, fmt)
    assert back.schema[S.DOCUMENTS] == S.PAIR_COLUMNS[S.DOCUMENTS]
    assert back[S.DOCUMENTS].to_list() == [documents] and back[S.PIVOTS].to_list() == [[]]
    if fmt == "jsonl":
        record = json.loads(path.read_text("utf-8"))
        assert record["anchor"] == [] and record["documents"] == documents


def test_ppdb_line_layout(tmp_path):
    path = tmp_path / "pairs.txt"
    write_pairs(pair_table(), path, "ppdb")
    first, second = path.read_text("utf-8").splitlines()
    lhs, source, target, feats, align, entailment = first.split(" ||| ")
    assert (lhs, source, target, align) == ("[VP]", "死于 车祸", "在 车祸 中 丧生", "0-0 0-3 1-1")
    assert entailment == ""                     # no word containment, no relation: unknown
    assert "p_t_given_s=0.2222222222222222" in feats.split() and "count=1" in feats.split()
    assert second.split(" ||| ")[1:3] == ["[NP,1] 的 [NP,2]", "[NP,2] 属于 [NP,1]"]
    assert "p_s_given_t" not in second          # null features are left out


def test_ppdb_alignment_keeps_positions_beyond_the_phrase_link_base(tmp_path):
    """Pair tables hold any Int32 position (a long sentence, an imported file): the Pharaoh
    writer must not assume the occurrence table's phrase-sized packing."""
    far = S.LINK_BASE + 7
    frame = pair_table().head(1).with_columns(
        pl.lit([0, far], dtype=pl.List(pl.Int32)).alias(S.ALIGN_SRC),
        pl.lit([far, 2**31 - 1], dtype=pl.List(pl.Int32)).alias(S.ALIGN_TGT))
    path = tmp_path / "pairs.txt"
    write_pairs(frame, path, "ppdb")
    assert path.read_text("utf-8").split(" ||| ")[4].strip() == f"0-{far} {far}-{2**31 - 1}"


def test_jsonl_uses_the_chinese_ppdb_release_fields(tmp_path):
    path = tmp_path / "pairs.jsonl"
    write_pairs(pair_table(), path)
    records = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert list(records[0])[:8] == ["type", "source", "target", "from", "anchor", "features",
                                    "alignment", "entailment"]
    assert records[1]["type"] == "template" and records[0]["type"] == "phrase"
    assert records[0]["from"] == "bilingual" and records[0]["alignment"] == ["0-0", "0-3", "1-1"]
    assert records[0]["features"]["score"] == 0.8125 and records[0]["entailment"] == ""


def test_reads_a_ppdb_2_line_with_entailment(tmp_path):
    path = tmp_path / "ppdb2.txt"
    path.write_text("[NP] ||| [NN,1] 的 朋友 ||| [NN,1] 之 友 ||| p_t_given_s=0.25 ||| "
                    "0-0 1-1 2-2 ||| Equivalence\n", "utf-8")
    row = read_pairs(path, "ppdb").row(0, named=True)
    assert row["source"] == "[NN1] 的 朋友" and row["type"] == "pattern"
    assert row["entailment"] == "Equivalence" and row["p_t_given_s"] == 0.25


@pytest.mark.parametrize("text, message", [
    ("[NP] ||| a ||| b\n", "3 '|||' fields"),
    ("[NP] ||| a ||| b ||| p=x ||| 0-0\n", "non-numeric"),
    ("[NP] ||| a ||| b ||| p=1 ||| 0_0\n", "not a Pharaoh link"),
])
def test_bad_ppdb_lines_name_the_line(tmp_path, text, message):
    path = tmp_path / "bad.txt"
    path.write_text("\n" + text, "utf-8")
    with pytest.raises(BadInputError, match=message) as info:
        read_pairs(path, "ppdb")
    assert "line 2" in str(info.value)


def test_unknown_format_and_missing_columns(tmp_path):
    with pytest.raises(ConfigError, match="unknown pair-table format"):
        write_pairs(pair_table(), tmp_path / "x.out", "xml")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="suffix"):
        write_pairs(pair_table(), tmp_path / "x.out")
    with pytest.raises(BadInputError, match="target"):
        write_pairs(pl.DataFrame({"source": ["a"]}), tmp_path / "x.jsonl")


@pytest.mark.parametrize("source, target, label", [
    ("这 座 城市", "城市", "ForwardEntailment"),
    ("城市", "这 座 城市", "ReverseEntailment"),
    ("列车", "火车", ""),
    ("[NP1] 的 母亲", "[NP1] 母亲", "ForwardEntailment"),
])
def test_jsonl_entailment_from_word_containment(tmp_path, source, target, label):
    from cppdb.export import read_pairs, write_pairs

    path = tmp_path / "pairs.jsonl"
    write_pairs(pl.DataFrame({"source": [source], "target": [target]}), path, "jsonl")
    assert read_pairs(path, "jsonl")["entailment"].to_list() == [label]


def test_a_ranked_relation_is_the_entailment_field_of_every_format(tmp_path):
    """A pair the ranker marked Exclusion is written so in PPDB's sixth field and JSONL's
    entailment (PPDB 2.0's label), with its evidence; Parquet keeps the columns; a pair
    without a relation keeps the containment heuristic."""
    frame = pair_table().with_columns(
        pl.Series(S.RELATION, ["Exclusion", None], dtype=pl.String),
        pl.Series(S.RELATION_EVIDENCE, ["antonym increase/decrease", None], dtype=pl.String))
    frame = frame.with_columns(pl.Series(S.TARGET, ["在 车祸 中 丧生", "[NP1] 的 [NP2] 啊"]))
    ppdb, jsonl, parquet = (tmp_path / n for n in ("p.ppdb", "p.jsonl", "p.parquet"))
    for path in (ppdb, jsonl, parquet):
        write_pairs(frame, path)
    assert [line.split(" ||| ")[5] for line in ppdb.read_text("utf-8").splitlines()] == [
        "Exclusion", "ReverseEntailment"]
    records = [json.loads(line) for line in jsonl.read_text("utf-8").splitlines()]
    assert [r["entailment"] for r in records] == ["Exclusion", "ReverseEntailment"]
    assert [r["relation_evidence"] for r in records] == ["antonym increase/decrease", ""]
    assert read_pairs(ppdb)["entailment"].to_list() == ["Exclusion", "ReverseEntailment"]
    assert read_pairs(jsonl)[S.RELATION_EVIDENCE].to_list() == ["antonym increase/decrease", ""]
    assert read_pairs(parquet)[S.RELATION].to_list() == ["Exclusion", None]
