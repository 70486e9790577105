"""Each piece of domain knowledge lives in one module (issue 16): a second copy fails here.

The checks read the source of every module under ``cppdb/`` except the fact's home and look
for the literal that a copy would need (a run of numeral characters, a negation word list).
"""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

from cppdb import schema

PACKAGE = Path(__file__).parents[2] / "cppdb"

#: fact -> (its home, a pattern that finds a copy of it in source text)
FACTS = {
    # four or more Chinese digit characters in a row inside a string literal: a digit table
    "Chinese numerals": ("text/numerals.py",
                         re.compile(r"[\"'][^\"'\n]*[零〇○一二两三四五六七八九壹贰叁肆伍陆柒捌玖]{4}")),
    # two one-character negators as separate literals on one line: a negation word list
    "negation words": ("text/negation.py",
                       re.compile(r"[\"'](?:不|没|未|无|非|别|勿)[\"'],\s*[\"'](?:不|没|未|无|非|别|勿)[\"']")),
    # the CC-CEDICT line format (traditional simplified [pinyin] /gloss/)
    "CC-CEDICT parsing": ("text/cedict.py",
                          re.compile(r"partition\s*\(\s*\"\[\"\s*\)|open\s*\(\s*cedict_path\s*\(")),
    # a reader of one input form called directly instead of read_parallel_input
    "parallel-text input": ("readers/parallel.py",
                            re.compile(r"\b(?:read_pretokenized|read_tatoeba_tsv|read_parallel)\s*\(")),
    # Levenshtein computed outside the one definition
    "edit distance": ("text/distance.py", re.compile(r"scorer\s*=\s*Levenshtein\.distance")),
    # the word-link packing base written out instead of schema.LINK_BASE
    "link packing base": ("schema.py", re.compile(r"\b65536\b")),
    # a run directory's file name spelt out instead of taken from the artifact table
    "artifact file names": ("schema.py", re.compile(
        "[\"'](?:" + "|".join(re.escape(f) for f in schema.ARTIFACT_FILES) + ")[\"']")),
    # a link split on its dash: "i-j" Pharaoh links parsed by hand
    "Pharaoh links": ("readers/pharaoh.py",
                      re.compile(r"(?:partition|split)\s*\(\s*\"-\"\s*\)")),
}


def _code(text: str) -> str:
    """The source without docstrings and comments (their examples are not copies)."""
    kept = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT or (token.type == tokenize.STRING
                                              and token.string.startswith(('"""', "'''"))):
            kept.append("\n" * token.string.count("\n"))
        elif token.type == tokenize.STRING:
            kept.append(token.string)
        else:
            kept.append(" " + token.string)
    return "".join(kept)


def _sources(home: str):
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).as_posix() != home:
            yield path, _code(path.read_text("utf-8"))


@pytest.mark.parametrize("fact", sorted(FACTS))
def test_no_second_copy(fact):
    home, pattern = FACTS[fact]
    copies = [str(path.relative_to(PACKAGE)) for path, text in _sources(home)
              for _ in pattern.finditer(text)]
    assert not copies, f"{fact} belongs in cppdb/{home}; copies at {copies}"


@pytest.mark.parametrize("fact", sorted(FACTS))
def test_the_home_exists(fact):
    assert (PACKAGE / FACTS[fact][0]).is_file()


@pytest.mark.parametrize("text, fact, found", [
    ('DIGITS = "一二三四五"', "Chinese numerals", True),
    ('WORDS = ("三明治", "一一")', "Chinese numerals", False),
    ('NEG = ("没有", "不", "没")', "negation words", True),
    ('x = "不"', "negation words", False),
    ('head, _, rest = line.partition("[")', "CC-CEDICT parsing", True),
    ('with open(cedict_path(), encoding="utf-8") as f:', "CC-CEDICT parsing", True),
    ('entries = packaged_entries()', "CC-CEDICT parsing", False),
    ('i, j = (int(x) for x in link.split("-"))', "Pharaoh links", True),
    ('links = parse_links(line, where)', "Pharaoh links", False),
    ('c.append([i * 65536 + j for i, j in links])', "link packing base", True),
    ('c.append([i * S.LINK_BASE + j for i, j in links])', "link packing base", False),
    ('PAIR_TABLES = ("phrase_pairs.parquet", "x")', "artifact file names", True),
    ('path = run / S.RANKED_FILE', "artifact file names", False),
])
def test_the_patterns_find_copies(text, fact, found):
    assert bool(FACTS[fact][1].search(text)) is found


def test_the_plain_api_never_imports_the_cli():
    import cppdb.api as api

    targets = set(api._EXPORTS.values())
    source = (PACKAGE / "api.py").read_text("utf-8")
    assert "cppdb.commands" not in source and not any("commands" in t for t in targets)


def test_every_command_error_goes_through_one_helper():
    """No command module catches cppdb errors itself: CliApp does it once."""
    copies = [p.name for p in sorted((PACKAGE / "commands").glob("*.py"))
              if p.name != "common.py" and "except CppdbError" in p.read_text("utf-8")]
    assert not copies


def test_compression_aligner_and_stanza_signatures_are_registered():
    from cppdb.config import load_config
    from cppdb.doctor import doctor_rows
    from cppdb.registry import backend_class

    rows = {(r["capability"], r["alias"]): r for r in doctor_rows(load_config())}
    assert rows[("compression_aligner", "e5-tokens")]["usable"]
    assert rows[("compression_aligner", "e5-tokens")]["default"]
    bert = rows[("compression_aligner", "transformers")]
    assert not bert["usable"] and "bert_dir" in bert["how_to_enable"]
    assert ("jieba", "jieba") in backend_class("zh_annotator", "stanza").requires
