"""The probe classes of issue 14: bad or adversarial input → a coded error, never a traceback."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cppdb.cli import app
from cppdb.config import load_config
from cppdb.errors import ConfigError, CppdbError

DATA = Path(__file__).parents[1] / "data"


@pytest.mark.parametrize("override, expected", [
    ("align_words.threshold=abc", "expected a number"),
    ("annotate.workers=abc", "expected an integer"),
    ("rank.seed=abc", "expected an integer"),
    ("rank.seed=1.5", "expected an integer"),
    ("align_words.threshold=5", "out of range"),
    ("bilingual.max_phrase_len=-1", "out of range"),
    ("bilingual.max_phrase_len=0", "out of range"),
    ("bilingual.patterns=1", "expected a boolean"),
    ("align_words.thot.eflomal_iterations=[1, \"a\"]", "expected an integer"),
    ("annotate.nope=1", "unknown setting"),
])
def test_bad_overrides_name_key_value_and_expectation(override, expected):
    with pytest.raises(ConfigError) as err:
        load_config(overrides=[override])
    assert expected in str(err.value) and override.split("=")[0].split(".")[-1] in str(err.value)


@pytest.mark.parametrize("override, key, value", [
    ("align_words.aligners=thot", "align_words.aligners", ["thot"]),    # one value = a list
    ("align_words.threshold=1", "align_words.threshold", 1.0),          # int where float
    ("features.workers=-1", "features.workers", -1),                    # explicit range
    ("align_words.attention.layer=-2", "align_words.attention.layer", -2),
    ("align_words.decode=union", "align_words.decode", "union"),        # bare string
])
def test_good_overrides_must_not_be_rejected(override, key, value):
    assert load_config(overrides=[override]).get(key) == value


def test_non_utf8_toml_is_a_config_error(tmp_path):
    path = tmp_path / "c.toml"
    path.write_bytes('[rank]\nseed = 3 # 种子\n'.encode("gbk"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path)


def _cli(args: list[str]):
    return CliRunner().invoke(app, args)


def _probe_args(name: str, tmp: Path) -> list[str]:
    zh, en = DATA / "parallel" / "sample.zh", DATA / "parallel" / "sample.en"
    (tmp / "short.en").write_text("one\n", "utf-8")
    (tmp / "dir").mkdir(exist_ok=True)
    (tmp / "dir" / "notes.txt").write_text("x", "utf-8")
    (tmp / "pairs.tsv").write_text("a\tb\n", "utf-8")
    return {
        "line_count": ["extract-bilingual", "--zh", str(zh), "--en", str(tmp / "short.en"),
                       "-o", str(tmp / "r1")],
        "foreign_out_dir": ["extract-bilingual", "--zh", str(zh), "--en", str(en),
                            "-o", str(tmp / "dir")],
        "out_is_file": ["extract-bilingual", "--zh", str(zh), "--en", str(en),
                        "-o", str(tmp / "pairs.tsv")],
        "bad_set": ["extract-bilingual", "--zh", str(zh), "--en", str(en), "-o",
                    str(tmp / "r2"), "--set", "align_words.threshold=abc"],
        "max_phrase_len": ["extract-bilingual", "--zh", str(zh), "--en", str(en), "-o",
                           str(tmp / "r3"), "--max-phrase-len", "-1"],
        "score_out_dir": ["score", str(tmp / "pairs.tsv"), "-o", str(tmp / "dir")],
        "score_missing": ["score", str(tmp / "missing.tsv"), "-o", str(tmp / "o.tsv")],
        "ocr_out_unwritable": ["ocr", str(tmp), "-o", "/proc/cppdb/x.jsonl"],
        "rank_missing_labels": ["rank", str(tmp / "r1"), "--labels", str(tmp / "none.tsv")],
        "align_words_out_dir": ["align-words", "--zh", str(zh), "--en", str(en),
                                "-o", str(tmp / "dir")],
        "align_sentences_out_dir": ["align-sentences", str(zh), str(zh), "-o", str(tmp / "dir")],
    }[name]


@pytest.mark.parametrize("name, code", [
    ("line_count", "E200"), ("foreign_out_dir", "E500"), ("out_is_file", "E500"),
    ("bad_set", "E100"), ("max_phrase_len", "E100"), ("score_out_dir", "E500"),
    ("score_missing", "E200"), ("ocr_out_unwritable", "E500"),
    ("rank_missing_labels", "E200"), ("align_words_out_dir", "E500"),
    ("align_sentences_out_dir", "E500"),
])
def test_cli_probes_end_in_a_coded_error(tmp_path, name, code):
    result = _cli(_probe_args(name, tmp_path))
    assert result.exit_code == 2, (result.output, result.exception)
    assert f"[{code}]" in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


def test_errors_all_carry_codes():
    assert all(cls.code != CppdbError.code for cls in CppdbError.__subclasses__())
