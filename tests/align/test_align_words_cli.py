"""`cppdb align-words` and `cppdb align-words tune` end to end on the bundled sample."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cppdb.cli import app

runner = CliRunner()


@pytest.fixture()
def sample_args(data_dir):
    return ["--parallel", str(data_dir / "wordalign" / "sample.txt"),
            "--train", str(data_dir / "parallel" / "sample.tok.txt")]


def test_align_words_writes_pharaoh_and_scores_gold(tmp_path, data_dir, sample_args):
    out = tmp_path / "links.txt"
    result = runner.invoke(app, ["align-words", *sample_args, "-o", str(out), "--gold",
                                 str(data_dir / "wordalign" / "sample.gold"), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["aligners_used"] == ["thot", "dictionary", "simalign-e5"]
    assert summary["gold"]["aer"] < 0.3
    lines = out.read_text().splitlines()
    assert len(lines) == 30
    assert all(link.count("-") == 1 for line in lines for link in line.split())


def test_gold_one_based_gives_the_same_score(tmp_path, data_dir, sample_args):
    gold = data_dir / "wordalign" / "sample.gold"
    one_based = tmp_path / "gold1.txt"
    converted = []
    for line in gold.read_text().splitlines():
        links = []
        for link in line.split():
            parts = link.split("-")
            links.append("-".join([str(int(parts[0]) + 1), str(int(parts[1]) + 1)] + parts[2:]))
        converted.append(" ".join(links))
    one_based.write_text("\n".join(converted) + "\n")
    scores = []
    for args in (["--gold", str(gold)], ["--gold", str(one_based), "--gold-one-based"]):
        result = runner.invoke(app, ["align-words", *sample_args, *args, "--json",
                                     "--set", 'align_words.aligners=["dictionary"]'])
        assert result.exit_code == 0, result.output
        scores.append(json.loads(result.stdout)["gold"])
    assert scores[0] == scores[1]


def test_tune_then_use_the_tuned_file(tmp_path, data_dir, sample_args):
    tuned = tmp_path / "tuned.json"
    gold = str(data_dir / "wordalign" / "sample.gold")
    result = runner.invoke(app, ["align-words", "tune", *sample_args, "--gold", gold,
                                 "-o", str(tuned), "--weight-step", "0.25", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    saved = json.loads(tuned.read_text())
    assert set(saved["ensemble"]["weights"]) == {"thot", "dictionary", "simalign-e5"}
    assert set(summary["single_aligner_dev"]) == {"thot", "dictionary", "simalign-e5"}
    best_single = min(s["aer"] for s in summary["single_aligner_dev"].values())
    assert summary["dev"]["aer"] <= best_single
    again = runner.invoke(app, ["align-words", *sample_args, "--gold", gold, "--json",
                                "--set", f"align_words.tuned_file={tuned}"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["gold"]["aer"] == pytest.approx(summary["dev"]["aer"])


def test_problem_lines_keep_their_place_and_are_reported(tmp_path):
    src = tmp_path / "pairs.txt"
    src.write_text("我 爱 猫 。 ||| I love cats .\n"
                   " ||| empty Chinese side\n"
                   "没有 分隔符\n"
                   "猫 很 可爱 。 ||| Cats are cute .\n", encoding="utf-8")
    out = tmp_path / "links.txt"
    result = runner.invoke(app, ["align-words", "--parallel", str(src), "-o", str(out),
                                 "--set", 'align_words.aligners=["dictionary"]'])
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert len(lines) == 4 and lines[1] == "" and lines[2] == ""
    assert lines[0] and lines[3]
    rejected = [json.loads(x) for x in (tmp_path / "links.txt.rejected.jsonl").read_text()
                .splitlines()]
    assert [r["line"] for r in rejected] == [2, 3]
    assert "empty zh side" in rejected[0]["reason"] and "separator" in rejected[1]["reason"]


@pytest.mark.parametrize("extra, message", [
    (["--gold", "GOLD_BAD"], "gold file"),
    ([], "nothing to do"),
    (["--set", "align_words.decode=sideways", "-o", "OUT"], "unknown decode method"),
])
def test_cli_errors_exit_2_with_a_message(tmp_path, data_dir, extra, message):
    bad_gold = tmp_path / "bad.gold"
    bad_gold.write_text("0-0\n")
    extra = [str(bad_gold) if x == "GOLD_BAD" else str(tmp_path / "o") if x == "OUT" else x
             for x in extra]
    result = runner.invoke(app, ["align-words", "--parallel",
                                 str(data_dir / "wordalign" / "sample.txt"), *extra])
    assert result.exit_code == 2
    assert message in result.output


def test_mismatched_raw_files_are_rejected(tmp_path):
    zh = tmp_path / "a.zh"
    en = tmp_path / "a.en"
    zh.write_text("我爱猫。\n你好。\n", encoding="utf-8")
    en.write_text("I love cats.\n", encoding="utf-8")
    result = runner.invoke(app, ["align-words", "--zh", str(zh), "--en", str(en),
                                 "-o", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "has 2 lines" in result.output and "has 1" in result.output


def test_raw_text_is_tokenised_with_the_annotation_backends(tmp_path):
    zh = tmp_path / "a.zh"
    en = tmp_path / "a.en"
    zh.write_text("我喜欢猫。\n北京很大。\n", encoding="utf-8")
    en.write_text("I like cats.\nBeijing is big.\n", encoding="utf-8")
    out = tmp_path / "o.txt"
    result = runner.invoke(app, ["align-words", "--zh", str(zh), "--en", str(en), "-o",
                                 str(out), "--set", 'align_words.aligners=["dictionary"]'])
    assert result.exit_code == 0, result.output
    first = out.read_text().splitlines()[0].split()
    # jieba: 我 喜欢 猫 。 ; spaCy: I like cats .
    assert "2-2" in first and "1-1" in first
