"""End to end: `build_compression` / `cppdb build-compression`, bookkeeping, UD parser."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from cppdb.annotate.ud import TaggedText, parse_conllu, tokenize_tag
from cppdb.cli import app
from cppdb.config import load_config
from cppdb.errors import BadInputError, ConfigError, ModelNotFoundError
from cppdb.extractors.compression.builder import build_compression
from cppdb.registry import load_backend
from cppdb.schema import COMPRESSION_RECORD_SCHEMA

RECORDS = [
    {"id": "a1", "headline": "西首相抵京开始访华", "topic": "politics",
     "sentence": "西班牙首相周一抵达北京，开始对中国进行为期三天的正式访问。"},
    {"id": "a2", "headline": "最后一批留守人员撤离灾区",
     "sentence": "地震灾区剩余的二十名工作人员昨晚全部安全撤离。"},
    {"id": "a3", "headline": "NBA新赛季今日开幕",                      # no_latin
     "sentence": "美国职业篮球联赛NBA新赛季今天开幕，多支球队更换了主教练。"},
    {"id": "a4", "headline": "春天的味道",                             # content_overlap
     "sentence": "每年三月，江南各地的茶农都会开始采摘今年的第一批新茶。"},
    {"id": "a5", "headline": "暴雨致全省多县停课",                     # text -> first sentence
     "text": "受强降雨影响，全省已有十二个县的中小学宣布停课。气象部门预计降雨将持续。"},
    {"id": "a6", "headline": "市长回应住房问题",                       # full_stop
     "sentence": "市长在今天的新闻发布会上回应了市民最关心的住房问题！"},
]


@pytest.fixture()
def pairs_file(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS) + "\n",
                    encoding="utf-8")
    return path


@pytest.fixture()
def table_file(tmp_path: Path) -> Path:
    path = tmp_path / "table.tsv"
    path.write_text("留守\t剩余\t0.9\n抵京\t抵达 北京\t0.8\n访华\t访问\t0.3\n", encoding="utf-8")
    return path


# The paper's overlap rule (R over the tokens of S, verbatim matches) rejects most headlines
# that abbreviate or paraphrase; these tests exercise alignment on the alignment-aware variant.
ALIGNMENT_AWARE = ["compression.overlap_denominator=headline_content",
                   "compression.overlap_source=alignment"]


def aware_config(extra: list[str] | None = None):
    return load_config(overrides=ALIGNMENT_AWARE + (extra or []))


def test_paper_overlap_rule_is_the_default(pairs_file, table_file, tmp_path):
    result = build_compression(pairs_file, tmp_path / "out", load_config(),
                               paraphrases=table_file)
    rules = {r["id"]: r["rule"] for r in read_jsonl(result.rejected)}
    assert rules.get("a2") == "content_overlap"   # 留守 -> 剩余 shares no verbatim content word


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_end_to_end_with_paraphrases(pairs_file, table_file, tmp_path):
    result = build_compression(pairs_file, tmp_path / "out", aware_config(),
                               paraphrases=table_file)
    kept, rejected = read_jsonl(result.compressions), read_jsonl(result.rejected)
    # bookkeeping: every input pair is in exactly one of the two files, with its carried id
    assert sorted(r["id"] for r in kept + rejected) == sorted(r["id"] for r in RECORDS)
    assert {r["id"]: r["rule"] for r in rejected}["a3"] == "no_latin"
    assert {r["id"]: r["rule"] for r in rejected}["a4"] == "content_overlap"
    assert {r["id"]: r["rule"] for r in rejected}["a6"] == "full_stop"
    by_id = {r["id"]: r for r in kept + rejected}
    assert by_id["a1"]["topic"] == "politics"                      # carried field
    records = pl.read_parquet(result.out_dir / "records.parquet")   # typed, not JSON text
    assert records.schema == pl.Schema(COMPRESSION_RECORD_SCHEMA)
    assert by_id["a5"]["sentence"] == "受强降雨影响，全省已有十二个县的中小学宣布停课。"
    # jieba keeps 留守人员 as one headline token: the entry 留守 matches inside it
    a2_links = {(l["headline"], l["sentence"], l["method"], tuple(l.get("matched", ())))
                for l in by_id["a2"]["links"]}
    assert ("留守人员", "剩余", "paraphrase", ("留守", "剩余")) in a2_links
    a1_methods = {(l["headline"], l["sentence"], l["method"]) for l in by_id["a1"]["links"]}
    assert ("西", "西班牙", "abbrev") in a1_methods
    for record in kept:
        assert len(record["labels"]) == len(record["tokens"]) == len(record["heads"])
        assert record["compression"] == "".join(
            t for t, keep in zip(record["tokens"], record["labels"]) if keep)
        assert 0 < record["compression_rate"] <= 1
        assert record["headline_ratio"] <= 1.5
        assert set(record["keywords"]) <= {i for i, k in enumerate(record["labels"]) if k}
    report = json.loads((tmp_path / "out" / "report.json").read_text("utf-8"))
    assert report == result.report
    assert report["input_pairs"] == 6 and report["kept"] + report["rejected"] == 6
    assert sum(report["rejected_by_rule"].values()) == report["rejected"]
    # links are counted over kept pairs; a2's paraphrase link is asserted above
    assert set(report["alignment"]) == {"word", "verbatim", "abbrev", "paraphrase", "gloss"}
    assert report["paraphrase_table"]["pairs"] == 3


def test_word_match_only_misses_the_paraphrase(pairs_file, tmp_path):
    result = build_compression(pairs_file, tmp_path / "out", aware_config(),
                               methods=["word"], dtt=False)
    by_id = {r["id"]: r for r in read_jsonl(result.compressions) + read_jsonl(result.rejected)}
    assert all(l["method"] == "word" for l in by_id["a2"].get("links", []))
    assert "留守人员" not in {l["headline"] for l in by_id["a2"].get("links", [])}
    assert result.report["dtt_added"] == {} and result.report["dtt"] is False


def test_compression_too_long_is_rejected_with_its_attempt(pairs_file, tmp_path):
    config = aware_config(["compression.max_compression_ratio=0.5"])
    result = build_compression(pairs_file, tmp_path / "out", config, methods=["word", "abbrev"])
    rejected = read_jsonl(result.rejected)
    too_long = [r for r in rejected if r["rule"] == "compression_too_long"]
    assert too_long and all(r["headline_ratio"] > 0.5 and r["compression"] for r in too_long)
    assert result.report["kept"] == 0


def test_tsv_input_and_cli_json(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("id\theadline\tsentence\n"
                    "t1\t城市公园免费开放\t本市所有城市公园从下月起全部免费向市民开放。\n",
                    encoding="utf-8")
    runner = CliRunner()
    out = tmp_path / "out"
    result = runner.invoke(app, ["build-compression", str(path), "-o", str(out),
                                 "--methods", "word,abbrev", "--json", "--quiet"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["report"]["input_pairs"] == 1
    records = read_jsonl(out / "compressions.jsonl") + read_jsonl(out / "rejected.jsonl")
    assert records[0]["id"] == "t1"
    assert (out / "manifest.json").exists()


def test_cli_errors_exit_2_with_a_hint(pairs_file, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["build-compression", str(pairs_file), "-o", str(tmp_path / "o"),
                                 "--methods", "word,paraphrase"])
    assert result.exit_code == 2
    assert "needs a paraphrase table" in result.output
    result = runner.invoke(app, ["build-compression", str(pairs_file), "-o", str(tmp_path / "o"),
                                 "--set", "compression.filters=['latin']"])
    assert result.exit_code == 2 and "unknown compression filter" in result.output


@pytest.mark.parametrize("content, message", [
    ('{"headline": "标题"}\n', r"pairs.jsonl:1: needs string fields"),
    ('{"headline": "标题", "sentence": "句子。"}\n{oops\n', r"pairs.jsonl:2: invalid JSON"),
])
def test_bad_input_names_the_line(tmp_path, content, message):
    path = tmp_path / "pairs.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BadInputError, match=message):
        build_compression(path, tmp_path / "out", aware_config(), methods=["word"])


def test_bad_tsv_header(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("title\tbody\nA\tB\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="headline"):
        build_compression(path, tmp_path / "out", aware_config(), methods=["word"])


def test_rerun_resumes_and_other_settings_are_refused(pairs_file, tmp_path):
    out = tmp_path / "out"
    first = build_compression(pairs_file, out, aware_config(), methods=["word"])
    again = build_compression(pairs_file, out, aware_config(), methods=["word"])
    assert again.report == first.report
    with pytest.raises(Exception, match="another config"):
        build_compression(pairs_file, out, aware_config(), methods=["word", "abbrev"])


# -- the UD parser backends -------------------------------------------------------------------
def test_udchinese_parses_jieba_tokens_unchanged():
    parser = load_backend("ud_parser", "udchinese")
    sentences = tokenize_tag(["美国人永远不会忘记这个事件。", "他没有去过北京的大学。"])
    trees = parser.parse(sentences)
    for tagged, tree in zip(sentences, trees):
        assert tree.tokens == tagged.tokens            # pre-tokenised: jieba tokens kept
        assert tree.pos == tagged.upos                 # tagger="jieba": our UPOS
        assert sum(h == -1 for h in tree.heads) == 1   # one root
        assert all(-1 <= h < len(tree.tokens) for h in tree.heads)
    assert dict(zip(trees[0].tokens, trees[0].pos))["不会"] == "AUX"
    with pytest.raises(BadInputError, match="empty sentence"):
        parser.parse([TaggedText((), ())])
    with pytest.raises(ConfigError, match="tagger"):
        load_backend("ud_parser", "udchinese", tagger="stanza")


def test_stanza_parser_without_models_raises_model_not_found(tmp_path):
    with pytest.raises(ModelNotFoundError, match="zh-hans") as info:
        load_backend("ud_parser", "stanza", stanza_dir=str(tmp_path))
    assert "cppdb models fetch stanza-zh" in info.value.hint


def test_parse_conllu_heads_are_zero_based():
    text = "1\t他\t他\tPRON\t_\t_\t2\tnsubj\t_\t_\n2\t来\t来\tVERB\t_\t_\t0\troot\t_\t_\n\n"
    (sentence,) = parse_conllu(text)
    assert sentence.heads == (1, -1) and sentence.deprels == ("nsubj", "root")


@pytest.mark.slow
def test_worker_processes_give_the_same_records(pairs_file, table_file, tmp_path):
    one = build_compression(pairs_file, tmp_path / "w1", aware_config(), paraphrases=table_file)
    two = build_compression(pairs_file, tmp_path / "w2",
                            aware_config(["compression.workers=2",
                                                   "compression.batch_size=2"]),
                            paraphrases=table_file)
    assert read_jsonl(one.compressions) == read_jsonl(two.compressions)
    assert read_jsonl(one.rejected) == read_jsonl(two.rejected)


def test_bert_method_end_to_end(pairs_file, tiny_bert_dir, tmp_path):
    result = build_compression(pairs_file, tmp_path / "out", aware_config(),
                               methods=["word", "bert"], bert_dir=tiny_bert_dir)
    links = [l for r in read_jsonl(result.compressions) + read_jsonl(result.rejected)
             for l in r.get("links", [])]
    assert {l["method"] for l in links} == {"word", "bert"}
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text("utf-8"))
    assert "bert_align" in manifest["backends"]
