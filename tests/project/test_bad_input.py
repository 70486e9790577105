"""The probe classes of issue 14: bad or adversarial input → a coded error, never a traceback."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cppdb.cli import app
from cppdb.config import load_config
from cppdb.errors import ConfigError, CppdbError

DATA = Path(__file__).parents[2] / "data"


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
    ("align_words.simalign.layer=-3", "align_words.simalign.layer", -3),  # explicit range
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
        "evaluate_missing": ["evaluate", str(tmp / "missing-run")],
        "score_ragged_tsv": ["score", str(_ragged(tmp)), "-o", str(tmp / "o.tsv")],
        "export_out_dir": ["export", str(tmp / "r1"), "-o", str(tmp / "dir")],
    }[name]


def _ragged(tmp: Path) -> Path:
    path = tmp / "ragged.tsv"
    path.write_text("甲\t乙\n丙\t丁\t戊\n", "utf-8")
    return path


@pytest.mark.parametrize("name, code", [
    ("line_count", "E200"), ("foreign_out_dir", "E500"), ("out_is_file", "E500"),
    ("bad_set", "E100"), ("max_phrase_len", "E100"), ("score_out_dir", "E500"),
    ("score_missing", "E200"), ("ocr_out_unwritable", "E500"),
    ("rank_missing_labels", "E200"), ("align_words_out_dir", "E500"),
    ("align_sentences_out_dir", "E500"), ("evaluate_missing", "E200"),
    ("score_ragged_tsv", "E200"), ("export_out_dir", "E500"),
])
def test_cli_probes_end_in_a_coded_error(tmp_path, name, code):
    result = _cli(_probe_args(name, tmp_path))
    assert result.exit_code == 2, (result.output, result.exception)
    assert f"[{code}]" in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


def test_errors_all_carry_codes():
    assert all(cls.code != CppdbError.code for cls in CppdbError.__subclasses__())


# -- bad input never stops a batch ----------------------------------------------------------
SRT = ("1\n00:00:01,000 --> 00:00:02,000\n我的故乡\n\n"
       "2\n00:00:0x,000 --> 00:00:04,000\n请问 这是小河站吗\n\n"
       "3\n00:00:09,000 --> 00:00:05,000\n倒着的\n\n"
       "4\n00:00:06,000 --> 00:00:07,000\n后来\n\n"
       "5\n00:00:03,000 --> 00:00:04,000\n早一点\n")
ASS = ("[Script Info]\nScriptType: v4.00+\n\n[Events]\nFormat: Layer, Start, End, Style, Name, "
       "MarginL, MarginR, MarginV, Effect, Text\n"
       "Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,你好\n"
       "Dialogue: 0,0:00:xx.00,0:00:03.00,Default,,0,0,0,,坏的\n"
       "Dialogue: 0,0:00:04.00,0:00:05.00,Default,,0,0,0,,再见\n")

VTT = ("WEBVTT - a film\n\nNOTE translated by hand\n\n"
       "1\n00:00:01.000 --> 00:00:02.000\n我的故乡\n\n"
       "2\n00:00:0x.000 --> 00:00:04.000\n请问 这是小河站吗\n\n"
       "00:09.000 --> 00:05.000\n倒着的\n\n"
       "00:06.000 --> 00:07.000 align:start position:10%\n<v 张三>后来\n\n"
       "5\n00:00:03.000 --> 00:00:04.000\n早一点\n")


@pytest.mark.parametrize("name, text, cues, problems", [
    ("a.srt", SRT, ["我的故乡", "早一点", "后来"],
     [("5", "valid"), ("9", "ends before it starts"), ("17", "before the previous")]),
    ("b.ass", ASS, ["你好", "再见"], [("7", "bad event line")]),
    ("c.srt", SRT.split("\n\n2")[0] + "\n", ["我的故乡"], []),       # clean file: no problem
    # WebVTT: optional hours, cue settings, voice tags, NOTE blocks are not cues
    ("d.vtt", VTT, ["我的故乡", "早一点", "后来"],
     [("9", "valid"), ("13", "ends before it starts"), ("19", "before the previous")]),
    ("e.vtt", VTT.split("\n\n2")[0] + "\n", ["我的故乡"], []),
])
def test_broken_cues_are_skipped_with_line_numbers(tmp_path, name, text, cues, problems):
    from cppdb.readers.subtitles import read_subtitles

    path = tmp_path / name
    path.write_text(text, "utf-8")
    content = read_subtitles(path)
    assert [c.text for c in content.cues] == cues
    got = [(where.rsplit(":", 1)[1], why) for where, why in content.problems]
    assert len(got) == len(problems)
    for (line, reason), (want_line, want_word) in zip(got, problems):
        assert line == want_line and want_word in reason


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_context_vectors_of_documents_shorter_than_the_window(n):
    import numpy as np
    import scipy.sparse as sp

    from cppdb.align.sentences.context import context_vectors

    counts = sp.csr_matrix(np.ones((n, 4)))
    assert context_vectors(counts, np.ones(4), np.ones((4, 3)), window=2).shape == (n, 3)


def test_an_image_the_engine_cannot_take_is_an_error_record_not_a_crash():
    import io

    from PIL import Image

    from cppdb.ocr.batch import OcrSettings, ocr_image_bytes

    buffer = io.BytesIO()
    Image.new("RGB", (50, 20000), "white").save(buffer, "PNG")
    result = ocr_image_bytes("strip.png", buffer.getvalue(), OcrSettings())
    assert result.error and "50x20000" in result.error and result.text == ""


def test_oversized_archive_members_are_refused_without_reading_them(tmp_path, monkeypatch):
    import zipfile

    from cppdb.ocr import batch

    with zipfile.ZipFile(tmp_path / "a.zip", "w") as archive:
        archive.writestr("big.png", b"\0" * 4096)
    monkeypatch.setattr(batch, "MAX_MEMBER_BYTES", 1024)
    data, error = batch._read_or_error(batch.ImageSource(tmp_path / "a.zip", "big.png"))
    assert data is None and "larger than" in error



def test_export_of_a_type_the_run_does_not_hold_is_an_error(tmp_path, monkeypatch):
    import polars as pl

    from cppdb import schema as S
    from cppdb.errors import BadInputError
    from cppdb import export_ranked

    ranked = pl.DataFrame({S.TYPE: ["phrase"], S.SOURCE: ["a"], S.TARGET: ["b"]})
    monkeypatch.setattr(export_ranked, "read_ranked", lambda _run: ranked)
    with pytest.raises(BadInputError, match="no 'sentence' pairs"):
        export_ranked.export_run(tmp_path, "20%", "sentence")


@pytest.mark.parametrize("raw, encoding, rows, notes", [
    ('"a\tb"\tc\n', "utf-8", [("a\tb", "c")], []),                 # quoted tab: one field
    ("苹果\t苹果公司\n", "gbk", [("苹果", "苹果公司")], []),         # detected like other readers
    ("source\ttarget\tx\n甲\t乙\t1\n\n", "utf-8", [("甲", "乙")],
     ["1 lines: ignored extra column(s) x", "1 blank line(s) skipped"]),
])
def test_tsv_pairs_are_parsed_strictly_and_say_what_they_ignore(tmp_path, raw, encoding, rows,
                                                                  notes):
    from cppdb.rank.pairs import read_tsv_pairs

    path = tmp_path / "p.tsv"
    path.write_bytes(raw.encode(encoding))
    ignored: list[str] = []
    frame = read_tsv_pairs(path, ignored=ignored)
    assert frame.rows() == rows and ignored == notes


@pytest.mark.parametrize("raw", ['"a\tb\tc\n', "甲\t乙\n丙\n", "\t乙\n"])
def test_bad_tsv_lines_are_coded_errors_naming_the_line(tmp_path, raw):
    from cppdb.errors import BadInputError
    from cppdb.rank.pairs import read_tsv_pairs

    path = tmp_path / "p.tsv"
    path.write_text(raw, "utf-8")
    with pytest.raises(BadInputError, match="line"):
        read_tsv_pairs(path)


def test_aligner_output_repairs_are_counted_not_silent(tmp_path, capsys):
    import numpy as np

    from cppdb.align.words import statistical

    before = sum(statistical.REPAIRS.values())
    path = tmp_path / "links"
    path.write_text("0-0 5-1 1-1\n0-0\n", "utf-8")
    mats = statistical._read_pharaoh(str(path), [(["a", "b"], ["x", "y"]), (["c"], ["z"])],
                                     reverse=False)
    assert [m.sum() for m in mats] == [2, 1]
    fixed = statistical._fit_shapes([np.ones((3, 1), bool), np.ones((1, 1), bool)],
                                    [(["a", "b"], ["x", "y"]), (["c"], ["z"])])
    assert fixed[0].shape == (2, 2)
    assert sum(statistical.REPAIRS.values()) - before == 2
    err = capsys.readouterr().err
    assert "outside their sentence pair (dropped): 1" in err and "another shape" in err


def test_read_stage_lists_bad_cues_and_warns_about_identical_versions(tmp_path):
    import shutil

    import polars as pl

    from cppdb.extractors.monolingual import SKIPPED, _read_stage
    from cppdb.extractors.settings import MonolingualSettings
    from cppdb.readers.settings import ReadingSettings
    from cppdb.run import RunDir

    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for d in (a, b, c):
        d.mkdir()
    (a / "e1.srt").write_text(SRT, "utf-8")
    shutil.copy(a / "e1.srt", b / "e1.srt")
    (c / "e1.srt").write_text(SRT.split("\n\n2")[0] + "\n\n2\n00:00:05,000 --> 00:00:06,000\n"
                              "另一句\n", "utf-8")
    config = load_config()
    run = RunDir(tmp_path / "run", config, command="t")
    with run.stage("read") as st:   # the read stage body takes its stage handle
        _read_stage(st, [a, b, c], MonolingualSettings(), ReadingSettings())
    skipped = pl.read_parquet(run.path(SKIPPED))
    assert sorted(skipped["path"].str.extract(r"(\w+\.srt:\d+)$").to_list()) == \
        ["e1.srt:17", "e1.srt:17", "e1.srt:5", "e1.srt:5", "e1.srt:9", "e1.srt:9"]
    assert run.stage_info("read")["notes"]["identical_versions"] == [[str(a), str(b)]]
