"""annotate_texts / annotate_stage / frame converters / backend errors / `cppdb annotate`."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import typer
from polars.testing import assert_frame_equal
from typer.testing import CliRunner

from cppdb.annotate import pipeline
from cppdb.commands.common import CliApp
from cppdb.annotate.english import SpacyEnglish
from cppdb.annotate.pipeline import (AnnotationSession, annotate_stage, annotate_texts,
                                     annotator_spec, frame_from_sentences, sentences_from_frame)
from cppdb.annotate.stanza_backend import StanzaChinese, StanzaEnglish
from cppdb.commands import annotate as annotate_command
from cppdb.annotate.settings import AnnotateSettings
from cppdb.config import load_config, resolve
from cppdb.errors import ConfigError, ModelNotFoundError
from cppdb.readers.parallel import read_parallel
from cppdb.registry import load_backend
from cppdb.run import RunDir
from cppdb.schema import annotation_schema

REPO = Path(__file__).resolve().parents[2]
ZH = ["他們在學校裡學習。", "北京大学的学生2019年第三次来到中国。", "我吃了一个很大的苹果。",
      "政府将兴建一座新机场。", "这条河流经这座城市。", "我的朋友的书在桌子上。"]
EN = ["They study at school.", "Students of Peking University came to China for the third "
      "time in 2019.", "I ate a very big apple.", "The government will build a new airport.",
      "The river flows through the city.", "My friend's book is on the table."]


def _settings(config):
    return resolve(AnnotateSettings, config)


def _config(**overrides):
    return load_config(overrides={"annotate.workers": 1, **overrides})


def _files(tmp_path, zh=ZH, en=EN):
    zh_path, en_path = tmp_path / "in.zh", tmp_path / "in.en"
    zh_path.write_text("\n".join(zh) + "\n", encoding="utf-8")
    en_path.write_text("\n".join(en) + "\n", encoding="utf-8")
    return zh_path, en_path


def test_traditional_is_converted_before_annotation():
    (sentence,) = annotate_texts("zh", ["他們在學校裡學習"], _settings(_config()))
    assert sentence.text == "他们在学校里学习"
    assert sentence.tokens == ("他们", "在", "学校", "里", "学习")
    assert sentence.pos == ("PN", "P", "NN", "LC", "VV")
    assert any(s.label == "NP" for s in sentence.spans)


def test_conversion_can_be_disabled():
    kept = _settings(_config(**{"annotate.to_simplified": False}))
    (sentence,) = annotate_texts("zh", ["他們"], kept)
    assert sentence.text == "他們"


def test_english_fields():
    (sentence,) = annotate_texts("en", ["The old man planted a tree."], _settings(_config()))
    assert sentence.tokens == ("The", "old", "man", "planted", "a", "tree", ".")
    assert sentence.pos[:3] == ("DT", "JJ", "NN")
    assert sentence.lemmas[3] == "plant"
    assert sentence.heads[3] == -1 and sentence.deprels[3] == "ROOT"
    assert len(sentence.heads) == len(sentence.tokens)
    labels = {(s.start, s.end, s.label) for s in sentence.spans}
    assert (0, 3, "NP") in labels and (4, 6, "NP") in labels


def test_pretokenized_both_languages():
    config = _config()
    (zh,) = annotate_texts("zh", [["那位", "老人", "在", "院子", "里", "种", "了", "树"]], _settings(config),
                           pretokenized=True)
    assert zh.tokens == ("那位", "老人", "在", "院子", "里", "种", "了", "树")
    (en,) = annotate_texts("en", [["The", "old", "man", "sat", "."]], _settings(config),
                           pretokenized=True)
    assert en.tokens == ("The", "old", "man", "sat", ".") and en.pos[-1] == "."


def test_pool_path_matches_in_process():
    config = _config(**{"annotate.batch_size": 2})
    with AnnotationSession(_settings(config), workers=2) as session:
        pooled = session.annotate("zh", ZH)
        assert session.pooled                     # the pool really ran
    serial = annotate_texts("zh", ZH, _settings(config))
    assert pooled == serial


def test_frame_round_trip():
    config = _config()
    zh = annotate_texts("zh", ZH[:3], _settings(config))
    en = annotate_texts("en", EN[:3], _settings(config))
    frame = frame_from_sentences([10, 11, 12], zh, en)
    assert frame.schema == pl.Schema(annotation_schema())
    assert sentences_from_frame(frame, "zh") == zh
    assert sentences_from_frame(frame, "en") == en


def test_stage_writes_parquet_and_rejected(tmp_path):
    zh_path, en_path = _files(tmp_path, ZH + ["", "多"], EN + ["orphan", ""])
    parallel = read_parallel(zh_path, en_path)
    config = _config()
    run = RunDir(tmp_path / "run", config, command="annotate", inputs=[zh_path, en_path])
    out = annotate_stage(run, parallel, _settings(config))
    frame = pl.read_parquet(out)
    assert frame["id"].to_list() == list(range(6))
    assert frame["zh_text"][0] == "他们在学校里学习。"
    rejected = [json.loads(line) for line in run.path("rejected.jsonl").read_text().splitlines()]
    assert [(r["line"], r["reason"]) for r in rejected] == [(7, "empty zh side"),
                                                           (8, "empty en side")]
    assert set(run.manifest["backends"]) >= {"zh_annotator", "en_annotator", "zh_phrases",
                                             "en_phrases", "converter"}
    assert run.is_done("annotate")


def test_stage_resumes_after_interruption(tmp_path, monkeypatch):
    zh_path, en_path = _files(tmp_path)
    parallel = read_parallel(zh_path, en_path)
    config = _config(**{"annotate.chunk_size": 2})
    clean_run = RunDir(tmp_path / "clean", config, command="annotate", inputs=[zh_path, en_path])
    expected = pl.read_parquet(annotate_stage(clean_run, parallel, _settings(config)))

    real_chunk, calls = pipeline._annotate_chunk, []

    def dying_chunk(session, text, start, stop):
        calls.append(start)
        if len(calls) == 3:
            raise RuntimeError("simulated kill during chunk 3")
        return real_chunk(session, text, start, stop)

    monkeypatch.setattr(pipeline, "_annotate_chunk", dying_chunk)
    root = tmp_path / "interrupted"
    with pytest.raises(RuntimeError, match="simulated kill"):
        annotate_stage(RunDir(root, config, command="annotate", inputs=[zh_path, en_path]),
                       parallel, _settings(config))
    assert len(list((root / "annotations.parquet.parts").glob("part-*.parquet"))) == 2
    assert not (root / "annotations.parquet").exists()
    assert (root / ".annotate-input.parquet").exists()   # staged input kept for the resume

    calls.clear()
    monkeypatch.setattr(pipeline, "_annotate_chunk", lambda *a: (calls.append(a[2]),
                                                                 real_chunk(*a))[1])
    run = RunDir(root, config, command="annotate", inputs=[zh_path, en_path])
    resumed = pl.read_parquet(annotate_stage(run, parallel, _settings(config)))
    assert calls == [4]                               # only the missing chunk was computed
    assert not (root / ".annotate-input.parquet").exists()
    assert resumed["id"].is_unique().all()
    assert_frame_equal(resumed, expected)

    calls.clear()                                     # a finished stage is skipped
    annotate_stage(RunDir(root, config, command="annotate", inputs=[zh_path, en_path]),
                   parallel, _settings(config))
    assert calls == []


def test_stanza_missing_model_wording(tmp_path):
    with pytest.raises(ModelNotFoundError) as info:
        load_backend("zh_annotator", "stanza", stanza_dir=str(tmp_path / "models"))
    message = str(info.value)
    assert str(tmp_path / "models" / "zh-hans") in message
    assert "cppdb models fetch stanza-zh" in message
    with pytest.raises(ModelNotFoundError, match="cppdb models fetch stanza-en"):
        StanzaEnglish(stanza_dir=str(tmp_path)).check()


def test_stanza_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("STANZA_RESOURCES_DIR", str(tmp_path / "env"))
    assert StanzaChinese().model_dir == tmp_path / "env"
    assert StanzaChinese(stanza_dir=str(tmp_path / "cfg")).model_dir == tmp_path / "cfg"


def test_stanza_selected_in_config_fails_clearly(tmp_path):
    config = _config(**{"annotate.zh_backend": "stanza", "annotate.stanza_dir": str(tmp_path)})
    assert annotator_spec("zh", _settings(config)).phrases == "stanza"      # auto -> stanza trees
    with pytest.raises(ModelNotFoundError, match="stanza-zh"):
        annotate_texts("zh", ["你好"], _settings(config))


def test_unknown_backend_and_spacy_model():
    with pytest.raises(ConfigError, match="unknown zh_annotator backend 'ltp'"):
        annotate_texts("zh", ["你好"], _settings(_config(**{"annotate.zh_backend": "ltp"})))
    with pytest.raises(ModelNotFoundError, match="spaCy model 'xx_missing_model'"):
        SpacyEnglish(model="xx_missing_model").check()


def _cli():
    app = CliApp()

    @app.callback()
    def main() -> None:
        """test app"""

    annotate_command.register(app)
    return app


def test_cli_on_shipped_sample(tmp_path):
    sample = REPO / "data" / "parallel"
    result = CliRunner().invoke(_cli(), [
        "annotate", "--zh", str(sample / "sample.zh"), "--en", str(sample / "sample.en"),
        "-o", str(tmp_path / "run"), "--limit", "12", "--json", "--quiet",
        "--set", "annotate.workers=1"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["pairs"] == 12
    frame = pl.read_parquet(summary["annotations"])
    assert frame.height == 12
    for lang in ("zh", "en"):
        assert frame[f"{lang}_tokens"].list.len().min() > 0
        assert frame[f"{lang}_span_label"].list.len().min() > 0
    assert "NP" in frame["zh_span_label"].explode().to_list()


def test_cli_pretokenized_and_errors(tmp_path):
    path = tmp_path / "tok.txt"
    path.write_text("他们 在 学校 学习 ||| They study at school\n", encoding="utf-8")
    runner = CliRunner()
    ok = runner.invoke(_cli(), ["annotate", "--parallel", str(path), "-o", str(tmp_path / "r"),
                                "--json", "--set", "annotate.workers=1"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["pretokenized"] is True
    zh_path, en_path = _files(tmp_path, ZH, EN[:4])
    bad = runner.invoke(_cli(), ["annotate", "--zh", str(zh_path), "--en", str(en_path),
                                 "-o", str(tmp_path / "bad")])
    assert bad.exit_code == 2
    message = " ".join(bad.output.split())          # rich wraps long lines
    assert "has 6 lines" in message and "has 4" in message
    neither = runner.invoke(_cli(), ["annotate", "-o", str(tmp_path / "x")])
    assert neither.exit_code == 2 and "exactly one input" in " ".join(neither.output.split())


@pytest.mark.parametrize("method", ["spawn"])
@pytest.mark.slow
def test_spawned_pool_matches(method):
    # the default on Linux is fork (test_pool_path_matches_in_process); spawn is the
    # portable path where every worker loads its own backends
    config = _config(**{"annotate.batch_size": 3, "annotate.start_method": method})
    with AnnotationSession(_settings(config), workers=2) as session:
        pooled = session.annotate("zh", ZH)
    assert pooled == annotate_texts("zh", ZH, _settings(_config()))


_KILLED_RUN = """
import os, signal, sys
from cppdb.annotate import pipeline
from cppdb.annotate.settings import AnnotateSettings
from cppdb.config import load_config, resolve
from cppdb.readers.parallel import read_parallel
from cppdb.run import RunDir

zh, en, root = sys.argv[1:4]
config = load_config(overrides={"annotate.workers": 1, "annotate.chunk_size": 2})
real, calls = pipeline._annotate_chunk, []

def dying(*args):
    calls.append(1)
    if len(calls) == 3:
        os.kill(os.getpid(), signal.SIGKILL)   # no cleanup, no exception handlers
    return real(*args)

pipeline._annotate_chunk = dying
pipeline.annotate_stage(RunDir(root, config, command="annotate", inputs=[zh, en]),
                        read_parallel(zh, en), resolve(AnnotateSettings, config))
"""


def test_stage_resumes_after_sigkill(tmp_path):
    import signal
    import subprocess
    import sys

    zh_path, en_path = _files(tmp_path)
    root = tmp_path / "killed"
    proc = subprocess.run([sys.executable, "-c", _KILLED_RUN, str(zh_path), str(en_path),
                           str(root)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert len(list((root / "annotations.parquet.parts").glob("part-*.parquet"))) == 2
    config = _config(**{"annotate.chunk_size": 2})
    run = RunDir(root, config, command="annotate", inputs=[zh_path, en_path])
    assert not run.is_done("annotate")
    resumed = pl.read_parquet(annotate_stage(run, read_parallel(zh_path, en_path),
                                              _settings(config)))
    fresh = RunDir(tmp_path / "fresh", config, command="annotate", inputs=[zh_path, en_path])
    expected = pl.read_parquet(annotate_stage(fresh, read_parallel(zh_path, en_path),
                                              _settings(config)))
    assert resumed["id"].to_list() == list(range(6))
    assert_frame_equal(resumed, expected)


@pytest.mark.parametrize("chunk_size,workers", [(50, 1), (1000, 1), (64, 2)])
def test_the_streamed_stage_equals_annotating_the_text_in_memory(tmp_path, chunk_size, workers):
    """The bundled sample (+ problem lines) through the staged, streamed stage gives the
    frame and rejected file of annotating the whole in-memory text at once."""
    from cppdb.annotate.pipeline import frame_from_sentences
    from cppdb.readers.parallel import open_parallel_input

    sample = REPO / "data" / "parallel"
    zh = (sample / "sample.zh").read_text(encoding="utf-8").splitlines()
    en = (sample / "sample.en").read_text(encoding="utf-8").splitlines()
    zh_path, en_path = _files(tmp_path, zh[:100] + ["", "只有中文"] + zh[100:],
                              en[:100] + ["only English", " "] + en[100:])
    config = _config(**{"annotate.chunk_size": chunk_size, "annotate.workers": workers})
    text = read_parallel(zh_path, en_path)
    expected = frame_from_sentences(text.ids, annotate_texts("zh", text.zh, _settings(config)),
                                    annotate_texts("en", text.en, _settings(config)))
    run = RunDir(tmp_path / "run", config, command="annotate", inputs=[zh_path, en_path])
    source = open_parallel_input(zh_path, en_path, None, max_chars=2000)
    got = pl.read_parquet(annotate_stage(run, source, _settings(config)))
    assert_frame_equal(got, expected)
    rejected = [json.loads(line) for line in run.path("rejected.jsonl").read_text().splitlines()]
    assert [(r["line"], r["reason"]) for r in rejected] == [(101, "empty zh side"),
                                                            (102, "empty en side")]
    assert rejected == [p.to_record(text.source) for p in text.problems]
    assert not run.path(".annotate-input.parquet").exists()
