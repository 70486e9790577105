"""The keep/drop compressor: features, F1, training on a corpus built here, the CLI, errors."""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from cppdb.cli import app
from cppdb.compressor.features import ParsedSentence, depths, numeric_values, subtree_sizes
from cppdb.compressor.metrics import keep_f1
from cppdb.config import load_config
from cppdb.errors import BadInputError, ModelNotFoundError

SUBJECTS = ["政府", "公司", "学生", "警方", "专家", "市民", "银行", "球队", "医院", "工人"]
VERBS = ["发布", "举行", "通过", "宣布", "启动", "完成", "签署", "建设", "参加", "开放"]
OBJECTS = ["报告", "会议", "法案", "计划", "项目", "协议", "工程", "比赛", "活动", "展览"]
ADVERBS = ["昨天", "正式", "已经", "今天", "首次", "周一"]
MODIFIERS = ["新", "大型", "重要", "年度", "国际", "地方"]


def synthetic(rng: random.Random) -> tuple[ParsedSentence, list[int]]:
    """A sentence ``[ADV] [MOD 的] SUBJ VERB [NUM] OBJ 。`` and its rule labels: keep the
    predicate, its subject and object and the object's numeral; drop adverbs, modifiers of
    the subject (with their 的) and punctuation — a rule of the tree, as the corpus labels are."""
    tokens, upos, heads, deprels, labels = [], [], [], [], []

    def add(token: str, tag: str, head: int, rel: str, keep: int) -> int:
        tokens.append(token), upos.append(tag), heads.append(head), deprels.append(rel)
        labels.append(keep)
        return len(tokens) - 1

    slots = {"adv": rng.random() < 0.5, "mod": rng.random() < 0.5, "num": rng.random() < 0.5}
    # a head names another slot, so positions are fixed first and heads looked up after
    order = (["adv"] if slots["adv"] else []) + (["mod", "de"] if slots["mod"] else []) \
        + ["subj", "verb"] + (["num"] if slots["num"] else []) + ["obj", "punct"]
    at = {name: i for i, name in enumerate(order)}
    spec = {"adv": (rng.choice(ADVERBS), "ADV", "verb", "advmod", 0),
            "mod": (rng.choice(MODIFIERS), "ADJ", "subj", "amod", 0),
            "de": ("的", "PART", "mod", "case:dec", 0),
            "subj": (rng.choice(SUBJECTS), "NOUN", "verb", "nsubj", 1),
            "verb": (rng.choice(VERBS), "VERB", None, "root", 1),
            "num": (rng.choice(["三项", "两个", "五份"]), "NUM", "obj", "nummod", 1),
            "obj": (rng.choice(OBJECTS), "NOUN", "verb", "obj", 1),
            "punct": ("。", "PUNCT", "verb", "punct", 0)}
    for name in order:
        token, tag, head, rel, keep = spec[name]
        add(token, tag, -1 if head is None else at[head], rel, keep)
    return ParsedSentence(tuple(tokens), tuple(upos), tuple(heads), tuple(deprels)), labels


def write_run(folder: Path, n: int, seed: int) -> Path:
    """A build-compression run directory as the trainer reads it: records.parquet + manifest."""
    rng = random.Random(seed)
    rows = []
    for line in range(1, n + 1):
        sentence, labels = synthetic(rng)
        rows.append({"line": line, "status": "kept", "tokens": list(sentence.tokens),
                     "upos": list(sentence.upos), "heads": list(sentence.heads),
                     "deprels": list(sentence.deprels), "labels": labels})
    rows.append({"line": n + 1, "status": "rejected", "tokens": None, "upos": None,
                 "heads": None, "deprels": None, "labels": None})
    folder.mkdir(parents=True)
    pl.DataFrame(rows, schema={"line": pl.Int64, "status": pl.String,
                               "tokens": pl.List(pl.String), "upos": pl.List(pl.String),
                               "heads": pl.List(pl.Int32), "deprels": pl.List(pl.String),
                               "labels": pl.List(pl.Int8)}).write_parquet(
        folder / "records.parquet")
    manifest = {"config": {"compression": load_config().section("compression")}}
    (folder / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    return folder


SMALL = ["compressor.epochs=6", "compressor.hidden=32", "compressor.word_dim=16",
         "compressor.tag_dim=8", "compressor.device=cpu", "compressor.word_min_count=1"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    from cppdb.compressor.api import train_compressor

    root = tmp_path_factory.mktemp("compressor")
    run = write_run(root / "run", 300, seed=1)
    info = train_compressor(run, root / "model", load_config(overrides=SMALL))
    return run, root / "model", info


def test_depths_and_subtree_sizes_of_a_tree():
    heads = [1, -1, 1, 4, 1]            # 0 <- 1 (root) -> 2; 3 <- 4 <- 1
    d = depths(heads)
    assert d == [1, 0, 1, 2, 1]
    assert subtree_sizes(heads, d) == [1, 5, 1, 1, 2]
    numeric = numeric_values(ParsedSentence(("a",) * 5, ("X",) * 5, tuple(heads), ("r",) * 5))
    assert numeric.shape == (5, 10) and numeric[1, 4] == 1.0 and numeric[0, 4] == 0.0


def test_depths_survive_a_cycle():
    assert min(depths([1, 0, -1])) >= 0


def test_keep_f1_counts_kept_tokens():
    scores = keep_f1([[1, 1, 0, 0], [0, 0]], [[1, 0, 1, 0], [0, 0]])
    assert scores["precision"] == pytest.approx(0.5) and scores["recall"] == pytest.approx(0.5)
    assert scores["f1"] == pytest.approx(0.5)
    assert scores["f1_macro"] == pytest.approx((0.5 + 1.0) / 2)   # nothing kept on either side
    with pytest.raises(ValueError):
        keep_f1([[1, 0]], [[1, 0, 0]])


def test_training_learns_the_corpus_rule(trained):
    from cppdb.compressor.api import load_compressor

    _, model_dir, info = trained
    assert info["corpus"]["sentences"] == 300          # the rejected row is not read
    assert info["corpus"]["train"] + info["corpus"]["held_out"] == 300
    assert len(info["log"]) == 6 and info["device"] == "cpu"
    rng = random.Random(99)
    fresh = [synthetic(rng) for _ in range(60)]
    compressor = load_compressor(model_dir, "cpu")
    predicted = compressor.labels([s for s, _ in fresh])
    scores = keep_f1(predicted, [labels for _, labels in fresh])
    assert scores["f1"] >= 0.95, scores
    keep_all = keep_f1([[1] * len(s.tokens) for s, _ in fresh], [labels for _, labels in fresh])
    assert scores["f1"] > keep_all["f1"] + 0.2


def test_same_seed_same_model(trained, tmp_path):
    from cppdb.compressor.api import train_compressor

    run, model_dir, _ = trained
    train_compressor(run, tmp_path / "again", load_config(overrides=SMALL))
    assert (tmp_path / "again" / "weights.pt").read_bytes() == \
        (model_dir / "weights.pt").read_bytes()


def test_cli_compresses_pretokenized_and_raw_sentences(trained, tmp_path):
    _, model_dir, _ = trained
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"tokens": ["政府", "昨天", "发布", "报告", "。"]},
                                 ensure_ascii=False) + "\n\n"
                      + json.dumps({"sentence": "公司周一正式签署协议。"}, ensure_ascii=False)
                      + "\n", "utf-8")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["compress", "-m", str(model_dir), "--in", str(source),
                                      "-o", str(out), "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["blank_lines"] == 1
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [r["line"] for r in rows] == [1, 3]
    assert rows[0]["tokens"] == ["政府", "昨天", "发布", "报告", "。"]
    for row in rows:
        assert len(row["labels"]) == len(row["tokens"]) == len(row["keep_probability"])
        assert row["compression"] == "".join(t for t, k in zip(row["tokens"], row["labels"])
                                             if k)


def test_cli_trains_a_model(trained, tmp_path):
    run, _, _ = trained
    sets = [arg for item in SMALL for arg in ("--set", item)]
    result = CliRunner().invoke(app, ["train-compressor", "--corpus", str(run), "-o",
                                      str(tmp_path / "m"), "--set", "compressor.epochs=1",
                                      *sets[2:], "--json"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "m" / "weights.pt").is_file()
    assert len(json.loads(result.output)["log"]) == 1


def test_errors_are_coded(tmp_path, trained):
    from cppdb.compressor.api import load_compressor, train_compressor
    from cppdb.compressor.files import read_sentences

    with pytest.raises(BadInputError, match="records.parquet"):
        train_compressor(tmp_path, tmp_path / "m", load_config(overrides=SMALL))
    with pytest.raises(ModelNotFoundError):
        load_compressor(tmp_path / "nothing")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"tokens": []}\n', "utf-8")
    with pytest.raises(BadInputError, match="bad.jsonl:1"):
        read_sentences(bad)
    result = CliRunner().invoke(app, ["train-compressor", "--corpus", str(tmp_path), "-o",
                                      str(tmp_path / "m")])
    assert result.exit_code == 2 and "E200" in result.output


def test_pretokenized_words_keep_their_cut():
    from cppdb.compressor.data import tag_pretokenized

    words = ["西班牙首相", "周一", "抵达", "北京", "。"]      # a cut jieba would not make
    tagged = tag_pretokenized([words])[0]
    assert list(tagged.tokens) == words and len(tagged.upos) == 5
    assert tagged.upos[-1] == "PUNCT" and tagged.upos[3] == "PROPN"


def test_gold_files_parse_and_must_agree():
    from devtools.prepare_compression_gold import merge, parse_annotation

    text = "#id = 1 \n政府\t1\n发布\t1\n。\t0\n\n#id_mask = 2 \n[MASK]\t0\n会议\t1\n\n"
    parsed = parse_annotation(text, "a.txt")
    assert parsed[1] == {"id": 2, "masked": True, "tokens": ["[MASK]", "会议"], "labels": [0, 1]}
    with pytest.raises(SystemExit, match="1000"):
        merge(parsed, parsed)
    with pytest.raises(SystemExit, match="bad line"):
        parse_annotation("#id = 1 \n政府\t2\n", "a.txt")


def test_length_rule_keeps_the_first_share():
    from devtools.keep_share import first_share

    assert first_share([{"tokens": list("abcdefghij")}], 0.3) == [[1, 1, 1] + [0] * 7]
    assert np.sum(first_share([{"tokens": ["a"]}], 0.05)) == 1


def test_rate_decoding_keeps_the_most_probable_share():
    from devtools.keep_share import top_share

    assert top_share(np.array([0.1, 0.9, 0.5, 0.5]), 0.5) == [0, 1, 1, 0]   # tie: earlier
    assert top_share(np.array([0.2]), 0.05) == [1]
