"""devtools/prepare_corpus.py and make_corpus.py --template: real pairs in, counted drops, seeded
sampling, length buckets (tiny files built here; the real corpus lives outside the repo)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from devtools import make_corpus, prepare_corpus, raw_sources


def _template(tmp_path: Path) -> Path:
    lines = [f"{' '.join(['word'] * n)} number {i}.\t中文句子{i}。\tsrc" for i, n in
             enumerate([2, 3, 4, 6, 6, 7, 8, 9, 18, 19, 20, 21, 22, 38, 40, 41])]
    path = tmp_path / "template.tsv"
    path.write_text("\n".join(lines + ["no tab on this line"]) + "\n", "utf-8")
    return path


def test_template_sampling_without_replacement_up_to_its_size(tmp_path):
    template = make_corpus.read_template(_template(tmp_path))
    assert template.height == 16                          # the line without a tab is skipped
    zh, en = make_corpus.sample_template(template, 10, seed=3)
    assert len(set(zip(zh, en))) == 10                    # no pair twice
    assert set(zip(zh, en)) <= set(zip(template["zh"], template["en"]))
    assert (zh, en) == make_corpus.sample_template(template, 10, seed=3)
    assert zh != make_corpus.sample_template(template, 10, seed=4)[0]


def test_template_sampling_with_replacement_beyond_its_size(tmp_path):
    template = make_corpus.read_template(_template(tmp_path))
    zh, en = make_corpus.sample_template(template, 50, seed=1)
    assert len(zh) == 50
    assert sorted(zh[:16]) == sorted(template["zh"])      # every pair once before any repeat
    assert set(zh[16:]) <= set(template["zh"])
    assert len(set(zh)) == 16


def test_joined_pairs_beyond_its_size_repeat_nothing(tmp_path):
    template = make_corpus.read_template(_template(tmp_path))
    zh, en = make_corpus.sample_template(template, 200, seed=1, join=True)
    assert len(zh) == 200 and len(set(zip(zh, en))) == 200        # no exact repeat
    assert sorted(zh[:16]) == sorted(template["zh"])             # every real pair once first
    singles = dict(zip(template["zh"], template["en"]))
    for z, e in zip(zh[16:], en[16:]):                           # two real pairs end to end
        halves = [(a, b) for a, b in singles.items()
                  if z.startswith(a) and z[len(a):] in singles and e == f"{b} {singles[z[len(a):]]}"]
        assert halves and halves[0][0] != z[len(halves[0][0]):], z
    assert (zh, en) == make_corpus.sample_template(template, 200, seed=1, join=True)
    with pytest.raises(SystemExit, match="cannot make"):
        make_corpus.sample_template(template, 16 + 16 * 15 + 1, seed=1, join=True)
    words = dict(zip(template["en"], template["en_words"]))
    limit = int(template["en_words"].sort()[:2].sum()) + 10
    _, short = make_corpus.sample_template(template, 20, seed=1, join=True,
                                           max_joined_words=limit)
    assert all(len(e.split(" ")) <= limit for e in short[16:])
    assert all(e in words for e in short[:16])


def test_length_bucket_keeps_only_pairs_of_that_english_length(tmp_path):
    template = make_corpus.read_template(_template(tmp_path))
    for bucket, (low, high) in ((8, (6, 10)), (20, (15, 25)), (40, (30, 50))):
        tol = make_corpus.bucket_tolerance(bucket, None)
        assert (bucket - tol, bucket + tol) == (low, high)
        _, en = make_corpus.sample_template(template, 30, seed=2, length_bucket=bucket)
        assert all(low <= len(e.split(" ")) <= high for e in en)
    _, en = make_corpus.sample_template(template, 5, seed=2, length_bucket=20, tolerance=0)
    assert {len(e.split(" ")) for e in en} == {20}
    with pytest.raises(SystemExit, match="no template pair"):
        make_corpus.sample_template(template, 5, seed=2, length_bucket=100)


def test_template_cli_writes_the_corpus_and_its_kind(tmp_path, monkeypatch):
    out = tmp_path / "made" / "c"
    monkeypatch.setattr(sys, "argv", ["make_corpus", "--template", str(_template(tmp_path)),
                                      "--pairs", "40", "--length-bucket", "8", "--out",
                                      str(out)])
    make_corpus.main()
    zh = Path(f"{out}.zh").read_text("utf-8").splitlines()
    en = Path(f"{out}.en").read_text("utf-8").splitlines()
    assert len(zh) == len(en) == 40
    info = json.loads(Path(f"{out}.json").read_text("utf-8"))
    assert info["kind"] == "template" and info["length_bucket"] == 8
    assert info["bucket_tolerance"] == 2 and 6 <= info["en_words_mean"] <= 10
    row = make_corpus.corpus_info(out)
    assert row["corpus_kind"] == "template" and row["synthetic"] is False
    assert row["pairs"] == 40 and row["en_words_per_sentence"] == info["en_words_mean"]


def test_corpus_info_labels_a_corpus_without_sidecar_synthetic(tmp_path):
    Path(f"{tmp_path / 'old'}.en").write_text("I am here.\nYou too.\n", "utf-8")
    row = make_corpus.corpus_info(tmp_path / "old")
    assert row["corpus_kind"] == "synthetic-tatoeba" and row["synthetic"] is True
    assert row["pairs"] == 2 and row["en_words_per_sentence"] == 2.5


def test_template_mode_refuses_tatoeba_only_options(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["make_corpus", "--tatoeba", "x.txt", "--work", "w",
                                      "--pairs", "5", "--length-bucket", "8", "--out", "o"])
    with pytest.raises(SystemExit):
        make_corpus.main()


def _raw(tmp_path: Path) -> Path:
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "a.zh").write_text("据悉 ， “ 爱家 ” 很好 。\n空\n\n重复。\n重复。\n"
                              + "长" * 700 + "\n", "utf-8")
    (raw / "a.en").write_text("It is  known\tthat it is good.\nempty zh side below\nx\n"
                              "Same.\nSame.\nlong\n", "utf-8")
    (raw / "b.zh").write_text("乔·拜登 (Joe Biden) 说。\n", "utf-8")
    (raw / "b.en").write_text("Joe Biden said.\n", "utf-8")
    return raw


def test_prepare_corpus_counts_every_drop_and_writes_subsets(tmp_path):
    stats = prepare_corpus.prepare(_raw(tmp_path), tmp_path / "out", subsets=[2, 9], seed=None)
    assert stats["drops"] == {"read": 7, "empty": 1, "over_long": 1, "duplicate": 1, "kept": 4}
    assert stats["per_source"] == {"a": 3, "b": 1}
    tsv = (tmp_path / "out" / "corpus.tsv").read_text("utf-8").splitlines()
    assert tsv[0] == "It is known that it is good.\t据悉，“爱家”很好。\ta"
    assert tsv[-1] == "Joe Biden said.\t乔·拜登(Joe Biden)说。\tb"    # Latin spaces stay
    zh = (tmp_path / "out" / "corpus.zh").read_text("utf-8").splitlines()
    assert len(zh) == 4 and zh[0] == "据悉，“爱家”很好。"
    assert (tmp_path / "out" / "corpus.2.en").read_text("utf-8").count("\n") == 2
    assert not (tmp_path / "out" / "corpus.9.en").exists()      # larger than the corpus
    assert list(stats["subsets"]) == ["2"]
    row = make_corpus.corpus_info(tmp_path / "out" / "corpus.2")    # the sidecar says real
    assert (row["corpus_kind"], row["synthetic"], row["pairs"]) == ("real", False, 2)
    assert row["corpus_info"]["seed"] is None and row["corpus_info"]["pairs"] == 2


def test_prepare_corpus_shuffle_is_seeded_and_refuses_misaligned_files(tmp_path):
    raw = _raw(tmp_path)
    first = prepare_corpus.prepare(raw, tmp_path / "o1", subsets=[], seed=5)
    prepare_corpus.prepare(raw, tmp_path / "o2", subsets=[], seed=5)
    assert first["drops"]["kept"] == 4
    assert ((tmp_path / "o1" / "corpus.tsv").read_bytes()
            == (tmp_path / "o2" / "corpus.tsv").read_bytes())
    (raw / "b.en").write_text("one\ntwo\n", "utf-8")
    with pytest.raises(SystemExit, match="not line-aligned"):
        prepare_corpus.prepare(raw, tmp_path / "o3", subsets=[], seed=5)


def test_prepare_corpus_exclude_keeps_two_corpora_disjoint(tmp_path):
    other = tmp_path / "other.zh"
    other.write_text("乔·拜登(Joe Biden)说。\n重复。\n", "utf-8")    # normalised, as written
    stats = prepare_corpus.prepare(_raw(tmp_path), tmp_path / "out", subsets=[], seed=None,
                                   exclude=[other])
    assert stats["drops"] == {"read": 7, "empty": 1, "over_long": 1, "in_excluded_corpus": 3,
                              "duplicate": 0, "kept": 2}               # both 重复。 pairs go
    assert stats["per_source"] == {"a": 2} and stats["exclude"] == [str(other)]


_PO = r'''# header comment
msgid ""
msgstr ""
"Language: zh_CN\n"

#: ../../library/os.rst:1
msgid ""
"Use :func:`~os.path.join` to join ``a`` and ``b``. It returns a "
"\"path\", see `the docs <https://x.org>`_."
msgstr ""
"用 :func:`~os.path.join` 连接 ``a`` 和 ``b``。"
"它返回一个“路径”，参见 `文档 <https://x.org>`_。"

#, fuzzy
msgid "A fuzzy entry is not trusted yet."
msgstr "模糊条目。"

msgid "Untranslated entry stays out."
msgstr ""

msgid "os.path.join(a, *p)"
msgstr "os.path.join(a, *p)"

msgid "Return **True** if the path exists. E.g. a file."
msgstr "如果路径存在则返回 **True**。"

msgid "Only a name"
msgstr "OnlyName"

msgid "Too short."
msgstr "太短了。"

#~ msgid "An obsolete entry."
#~ msgstr "过时条目。"
'''


def test_po_to_raw_keeps_translated_entries_without_markup(tmp_path):
    from devtools import po_to_raw

    (tmp_path / "library").mkdir()
    (tmp_path / "library" / "os.po").write_text(_PO, "utf-8")
    catalogue = po_to_raw.read_catalogue(tmp_path)
    assert catalogue["en"][0].endswith('It returns a "path", see `the docs <https://x.org>`_.')
    assert catalogue.height == 5 and set(catalogue["file"]) == {"library/os.po"}
    pairs, drops = po_to_raw.to_pairs(catalogue, min_en_words=3)
    assert drops == {"entries": 5, "identical": 1, "no_chinese": 1, "paragraphs_kept": 3,
                     "pairs_after_split": 4, "short_english": 1, "written": 3}
    assert list(zip(pairs["en"], pairs["zh"])) == [
        ("Use join to join a and b.", "用 join 连接 a 和 b。"),    # split: two sentences each
        ('It returns a "path", see the docs.', "它返回一个“路径”，参见 文档。"),
        ("Return True if the path exists. E.g. a file.", "如果路径存在则返回 True。")]


def test_po_to_raw_markup_becomes_the_text_sphinx_shows():
    import polars as pl

    from devtools.po_to_raw import strip_markup

    cases = {":func:`~os.path.join`": "join", ":func:`os.path.join`": "os.path.join",
             ":class:`.Address`": "Address", ":py:meth:`!close`": "close",
             ":ref:`the tutorial <tut-intro>`": "the tutorial", "``x ** y``": "x ** y",
             "*emphasis* and **strong**": "emphasis and strong", "Example::": "Example:",
             "`PEP 8 <https://peps.python.org/pep-0008/>`__": "PEP 8", "|version|": "version",
             "参见 :mod:`os` 模块": "参见 os 模块", "使用 *斜体* 字": "使用 斜体 字",
             ":rfc:`2616`": "RFC 2616", ":pep:`8#naming`": "PEP 8", ":gh:`90224`": "gh-90224",
             ":issue:`1234`": "bpo-1234", ":rfc:`HTTP <2616>`": "HTTP"}
    frame = pl.DataFrame({"text": list(cases)}).select(strip_markup("text"))
    assert dict(zip(cases, frame["text"])) == cases


def test_po_to_raw_sentence_split_needs_equal_counts_and_skips_abbreviations():
    from devtools.po_to_raw import sentence_pairs, split_en

    assert split_en("See e.g. the list. Then stop.") == ["See e.g. the list.", "Then stop."]
    assert split_en("Named after J. Smith. Fine.") == ["Named after J. Smith.", "Fine."]
    assert sentence_pairs("One. Two. Three.", "一。二三。") == [("One. Two. Three.", "一。二三。")]
    assert sentence_pairs("He said “go.” Then left.", "他说“走。”然后离开。") == [
        ("He said “go.” Then left.", "他说“走。”然后离开。")]    # no capital after the quote


def test_export_alignment_writes_one_sorted_pharaoh_line_per_input_line():
    import polars as pl

    from devtools.export_alignment import pharaoh_lines
    from cppdb import schema as S

    table = pl.DataFrame({S.ID: [2, 0], S.LINK_ZH: [[1, 0, 0], []], S.LINK_EN: [[2, 1, 0], []]},
                         schema=S.ALIGNMENT_SCHEMA)
    assert pharaoh_lines(table, 4) == ["", "", "0-0 0-1 1-2", ""]
    with pytest.raises(SystemExit, match="not distinct lines"):
        pharaoh_lines(table, 2)


def test_export_alignment_token_lines_keep_every_input_line(tmp_path):
    import polars as pl

    from devtools.export_alignment import check_line_order, token_lines
    from cppdb import schema as S

    zh, en = S.ann("zh", "tokens"), S.ann("en", "tokens")
    pl.DataFrame({S.ID: [0, 2], zh: [["你好", "。"], ["他", "来", "了"]],
                  en: [["Hi", "."], ["He", "came"]]}).write_parquet(tmp_path / "annotations.parquet")
    assert token_lines(tmp_path, 3) == ["你好 。 ||| Hi .", "", "他 来 了 ||| He came"]
    (tmp_path / "in.zh").write_text("你好。\n（坏）\n他 来了\n", "utf-8")
    assert check_line_order(tmp_path, tmp_path / "in.zh") == {
        "input_lines": 3, "annotated": 2, "matching": 2, "normalised_same_length": 0,
        "mismatching": 0}
    (tmp_path / "in.zh").write_text("他来了\n你好。\n", "utf-8")       # ids off by one line
    assert check_line_order(tmp_path, tmp_path / "in.zh")["mismatching"] == 2


def test_raw_sources_pair_mteval_segments_by_document_and_id(tmp_path):
    def mteval(path: Path, segments: dict[str, list[str]]) -> Path:
        docs = "".join(f'<doc docid="{doc}">' + "".join(
            f'<seg id="{i}">  {text}  </seg>' for i, text in enumerate(texts, 1)) + "</doc>"
            for doc, texts in segments.items())
        path.write_text(f'<?xml version="1.0" encoding="UTF-8"?><mteval><srcset>{docs}'
                        "</srcset></mteval>", "utf-8")
        return path
    zh = mteval(tmp_path / "zh.xml", {"12": ["第一 句。", "第二句。"], "3": ["另一篇。"]})
    en = mteval(tmp_path / "en.xml", {"3": ["Another talk."], "12": ["First one.",
                                                                      "Second one.", "Third."]})
    pairs, counts = raw_sources.mteval_pairs(zh, en)
    assert pairs == [("另一篇。", "Another talk."), ("第一 句。", "First one."),
                     ("第二句。", "Second one.")]                 # by document number, then id
    assert counts == {"zh_segments": 3, "en_segments": 4, "unpaired": 1}


def test_raw_sources_bible_books_pair_verses_and_drop_markup(tmp_path):
    def book(folder: str, chapters: dict) -> None:
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "01.js").write_text(
            "var book = " + json.dumps({"name": "x", "chapters": chapters}, ensure_ascii=False)
            + ";\nmodule.exports = book;", "utf-8")
    book("zh", {"1": {"1": '<span class="chapternum">1 </span>起 初 ， 神 创 造 天 地 。',
                      "2": '<sup class="versenum">2 </sup>', "10": "第 十 节"}})
    book("en", {"1": {"1": '<span class="chapternum">1 </span>In the beginning.',
                      "2": '<sup class="versenum">2 </sup>And the earth.', "10": "Tenth."}})
    pairs, counts = raw_sources.bible_pairs(tmp_path / "zh", tmp_path / "en")
    assert pairs == [("起 初 ， 神 创 造 天 地 。", "In the beginning."), ("第 十 节", "Tenth.")]
    assert counts["unpaired_or_empty"] == 1                      # a merged (empty) verse
    jsonl = tmp_path / "un.jsonl"
    jsonl.write_text('{"zh": "第六十九届 会议", "en": "Sixty-ninth  session"}\n{"zh": "x"}\n',
                     "utf-8")
    with pytest.raises(SystemExit, match=":2: an object without"):
        raw_sources.jsonl_pairs(jsonl)
