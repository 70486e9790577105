"""The meaning margin of sentence pairs (cppdb/align/sentences/meaning.py) and its check in
``extract-monolingual``."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cppdb import schema
from cppdb.align.sentences import meaning
from cppdb.align.sentences.meaning import (MEANING_MARGIN, MeaningSettings, mean_top_k,
                                           meaning_margins, ratio_margins)
from cppdb.config import load_config, resolve
from cppdb.embed.encoders import normalise_rows
from cppdb.errors import ConfigError
from cppdb.extractors.monolingual import extract_monolingual
from cppdb.extractors.settings import MonolingualSettings


def _rows(*vectors: tuple[float, ...]) -> np.ndarray:
    return normalise_rows(np.array(vectors, dtype=np.float32))


# Three lines per document, in 3 dimensions.  Line i of each side points mostly along axis i,
# so the diagonal pairs are each other's nearest neighbours.
_DOC_A = _rows((1, .1, .1), (.1, 1, .1), (.1, .1, 1))
_DOC_B = _rows((1, .2, 0), (0, 1, .2), (.2, 0, 1))


@pytest.mark.parametrize("i, j, above_one", [
    (0, 0, True),       # each other's best match: stands out from the document
    (1, 1, True),
    (2, 2, True),
    (0, 1, False),      # a line paired with another line's translation: must NOT stand out
    (2, 0, False),
])
def test_ratio_margin_separates_matching_lines_from_neighbours(i: int, j: int,
                                                               above_one: bool) -> None:
    margin = ratio_margins(_DOC_A[[i]], _DOC_B[[j]], _DOC_A, _DOC_B, k=2)[0]
    assert (margin > 1.0) == above_one


def test_a_pair_of_generic_lines_has_no_margin_even_with_a_high_cosine() -> None:
    # every line of both documents is nearly the same vector (怎么样？ / 是吗？ / 干嘛？):
    # a cosine of 0.99 says nothing when every other line scores 0.99 too
    generic = _rows((1, .1, 0), (1, .12, 0), (1, .09, .01))
    margin = ratio_margins(generic[[0]], generic[[1]], generic, generic, k=2)[0]
    cos = float(generic[0] @ generic[1] / np.linalg.norm(generic[0]) / np.linalg.norm(generic[1]))
    assert cos > 0.99 and margin == pytest.approx(1.0, abs=0.01)


@pytest.mark.parametrize("k", [1, 2, 3, 50])      # 50: more than the document has
def test_mean_top_k_is_the_same_in_blocks(monkeypatch: pytest.MonkeyPatch, k: int) -> None:
    rng = np.random.default_rng(7)
    queries = rng.normal(size=(7, 5)).astype(np.float32)
    document = rng.normal(size=(4, 5)).astype(np.float32)
    whole = mean_top_k(queries, document, k)
    monkeypatch.setattr(meaning, "_BLOCK_ROWS", 2)
    assert np.allclose(mean_top_k(queries, document, k), whole)
    expected = np.sort(queries @ document.T, axis=1)[:, -min(k, 4):].mean(axis=1)
    assert np.allclose(whole, expected)


def test_meaning_margins_keep_row_order_across_document_pairs() -> None:
    vectors = {"a0": (1, .1, .1), "a1": (.1, 1, .1), "a2": (.1, .1, 1),
               "b0": (1, .2, 0), "b1": (0, 1, .2), "b2": (.2, 0, 1),
               "c0": (0, 0, 1), "d0": (1, 0, 0)}
    # documents: a = v0 f.txt (whole), b = v1 f.txt, c and d = parts 0 and 1 of v1 g.txt
    # (null parts join too: the key is typed, not a composed string)
    units = pl.DataFrame({schema.VERSION: [0, 0, 0, 1, 1, 1, 1, 1],
                          schema.PATH: ["v0/f.txt"] * 3 + ["v1/f.txt"] * 3 + ["v1/g.txt"] * 2,
                          schema.PART: [None] * 6 + [0, 1],
                          "text": ["a0", "a1", "a2", "b0", "b1", "b2", "c0", "d0"]})
    pairs = pl.DataFrame({"version_src": [1, 0, 0],
                          "path_src": ["v1/g.txt", "v0/f.txt", "v0/f.txt"],
                          "part_src": [0, None, None], "version_tgt": [1, 1, 1],
                          "path_tgt": ["v1/g.txt", "v1/f.txt", "v1/f.txt"],
                          "part_tgt": [1, None, None],
                          "source": ["c0", "a1", "a0"], "target": ["d0", "b1", "b2"]})
    seen: list[list[str]] = []

    def encode(texts: list[str]) -> np.ndarray:
        seen.append(texts)
        return _rows(*(vectors[t] for t in texts))

    margins = meaning_margins(pairs, units, encode, k=2)
    assert margins.name == MEANING_MARGIN and len(seen) == 1     # one batch for all documents
    expected_a1 = ratio_margins(_rows(vectors["a1"]), _rows(vectors["b1"]), _DOC_A, _DOC_B, 2)[0]
    assert margins[1] == pytest.approx(expected_a1)
    assert margins[1] > 1.0 > margins[2]          # a1/b1 match; a0/b2 do not
    assert margins[0] == pytest.approx(0.0, abs=1e-6)   # orthogonal lines, one line per document


def test_no_pairs_give_an_empty_column() -> None:
    empty = pl.DataFrame(schema={**schema.PAIR_DOC_SCHEMA, "source": pl.String,
                                 "target": pl.String})
    units = pl.DataFrame({schema.VERSION: [0], schema.PATH: ["f"], schema.PART: [None],
                          "text": ["x"]})
    assert meaning_margins(empty, units, lambda texts: np.zeros((len(texts), 3)), 4).len() == 0


@pytest.mark.parametrize("key, value", [("monolingual.min_meaning_margin", -0.1),
                                        ("monolingual.meaning_margin_k", 0)])
def test_settings_are_validated(key: str, value: float) -> None:
    with pytest.raises(ConfigError, match=key.split(".")[1]):
        load_config(overrides={key: value})


def test_settings_from_config() -> None:
    settings = resolve(MonolingualSettings, load_config()).meaning_settings()
    assert settings.enabled and settings.meaning_margin_k >= 1
    assert not MeaningSettings(0.0, 4).enabled


# -- in extract-monolingual ---------------------------------------------------------------------
# Two subtitle tracks of one scene; line 4 of the second track says something else at the same
# moment (the kind of pair the check is for), the rest are close paraphrases.
_LINES = [("你到底想去哪里？", "你究竟要去哪儿？"),
          ("我要去城里找我的师父。", "我得进城去寻我师父。"),
          ("天快黑了，明天再走吧。", "天要黑了，明早再上路吧。"),
          ("这条河的水太急了。", "这河水流得太急了。"),
          ("我一直都很喜欢你。", "快把门关上！"),
          ("船夫说今晚不开船。", "船家讲今天夜里不开船。"),
          ("那我们就住在客栈里。", "那咱们就在客栈住一晚。"),
          ("客栈的老板是个好人。", "开客栈的掌柜人很好。")]


def _srt(path: Path, lines: list[str]) -> None:
    def stamp(ms: int) -> str:
        return f"00:{ms // 60_000:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(f"{k + 1}\n{stamp(5_000 + 3_000 * k)} --> "
                              f"{stamp(7_000 + 3_000 * k)}\n{text}\n"
                              for k, text in enumerate(lines)), "utf-8")


@pytest.fixture(scope="module")
def tracks(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("tracks")
    _srt(root / "a" / "film.srt", [a for a, _ in _LINES])
    _srt(root / "b" / "film.srt", [b for _, b in _LINES])
    return [root / "a", root / "b"]


def _run(tracks: list[Path], out: Path, margin: float) -> tuple[pl.DataFrame, pl.DataFrame]:
    config = load_config(overrides={"monolingual.min_confidence": 0.0,
                                    "monolingual.min_meaning_margin": margin})
    extract_monolingual(tracks, out, config)
    return (pl.read_parquet(out / "sentence_pairs.parquet"),
            pl.read_parquet(out / "low_confidence_pairs.parquet"))


def test_the_pair_that_says_something_else_has_the_lowest_margin(tracks: list[Path],
                                                                 tmp_path: Path) -> None:
    kept, low = _run(tracks, tmp_path / "run", 1e-9)        # on, but drops nothing
    assert low.height == 0 and kept.height == len(_LINES)
    worst = kept.sort(MEANING_MARGIN)[schema.SOURCE][0]
    assert worst == "我一直都很喜欢你。"
    assert any((tmp_path / "run").glob("embeddings-*.parquet"))   # cached for `cppdb rank`


@pytest.mark.parametrize("margin, dropped", [
    (0.0, 0),           # off: no column values, nothing dropped for it
    (10.0, len(_LINES)),  # no pair can reach it: every pair recorded with the reason
])
def test_the_check_drops_and_records_with_the_reason(tracks: list[Path], tmp_path: Path,
                                                      margin: float, dropped: int) -> None:
    kept, low = _run(tracks, tmp_path / "run", margin)
    assert low.height == dropped and kept.height + low.height == len(_LINES)
    if margin == 0.0:
        assert kept[MEANING_MARGIN].null_count() == kept.height
    else:
        assert all(r.startswith("meaning margin ") and "min_meaning_margin 10.0" in r
                   for r in low["reason"])
