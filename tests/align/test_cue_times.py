"""Cue times of subtitle pairs: local offset, gap/overlap, the drop rule and its reasons in
``extract-monolingual`` (cppdb/align/sentences/cue_times.py)."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cppdb import schema
from cppdb.align.sentences.cue_times import (CueSettings, cue_agreement, cue_mismatch,
                                             shared_characters)
from cppdb.config import load_config
from cppdb.errors import ConfigError
from cppdb.extractors.monolingual import extract_monolingual

CUE_MS, STEP_MS = 1500, 2500     # each line 1.5 s on screen, a new line every 2.5 s


def _pairs(n: int = 21, *, shift_ms: float = 0.0, drift_ms: float = 0.0,
           odd: dict[int, tuple[int, int]] | None = None,
           texts: dict[int, tuple[str, str]] | None = None) -> pl.DataFrame:
    """``n`` 1-1 pairs of one document pair, target cues ``shift_ms`` (+ ``drift_ms`` per
    line) later than the source's; ``odd``: pair -> its source cue (start, end), replaced."""
    rows = []
    for k in range(n):
        start = 10_000 + k * STEP_MS
        s0, s1 = (odd or {}).get(k, (start, start + CUE_MS))
        t0 = start + shift_ms + k * drift_ms
        src, tgt = (texts or {}).get(k, ("佢嚟咗", "他来了"))
        rows.append({"version_src": 0, "path_src": "a/f.srt", "part_src": None,
                     "version_tgt": 1, "path_tgt": "b/f.srt", "part_tgt": None, "bead": k,
                     schema.SOURCE: src, schema.TARGET: tgt,
                     schema.SRC_START: s0, schema.SRC_END: s1,
                     schema.TGT_START: int(t0), schema.TGT_END: int(t0 + CUE_MS)})
    return pl.DataFrame(rows)


def _flagged(pairs: pl.DataFrame, settings: CueSettings = CueSettings()) -> list[int]:
    out = cue_agreement(pairs, settings.cue_offset_window).with_columns(
        cue_mismatch(settings, schema.SOURCE, schema.TARGET).alias("apart"))
    return out.filter("apart")["bead"].to_list()


# pair 10 is paired with the next line's cue: its source cue plays one line later
NEXT_LINE = {10: (10_000 + 11 * STEP_MS, 10_000 + 11 * STEP_MS + CUE_MS)}


@pytest.mark.parametrize("name, pairs, settings, expected", [
    ("tracks in step: nothing fires", _pairs(), CueSettings(), []),
    ("a track 3 s late throughout: the offset absorbs it", _pairs(shift_ms=3000), CueSettings(),
     []),
    ("a track 7 s early: the same", _pairs(shift_ms=-7000), CueSettings(), []),
    ("a frame-rate drift of 40 ms a line (0.8 s by the end)", _pairs(drift_ms=40),
     CueSettings(), []),
    ("a line cued one line later than its partner fires", _pairs(odd=NEXT_LINE),
     CueSettings(), [10]),
    ("... also in a track 3 s late", _pairs(shift_ms=3000, odd=NEXT_LINE), CueSettings(), [10]),
    ("... unless the check is off", _pairs(odd=NEXT_LINE), CueSettings(cue_check=False), []),
    ("... or the allowed gap covers it", _pairs(odd=NEXT_LINE),
     CueSettings(cue_max_gap_ms=1500), []),
    ("... or the lines share most characters (the same line said twice)",
     _pairs(odd=NEXT_LINE, texts={10: ("救命！", "救命呀！")}), CueSettings(), []),
    ("cues that only touch (gap 0) do not fire",
     _pairs(odd={10: (10_000 + 10 * STEP_MS + CUE_MS, 10_000 + 10 * STEP_MS + 2 * CUE_MS)}),
     CueSettings(), []),
    ("cues 1 ms apart fire",
     _pairs(odd={10: (10_000 + 10 * STEP_MS + CUE_MS + 1, 10_000 + 10 * STEP_MS + 2 * CUE_MS)}),
     CueSettings(), [10]),
    ("a partial overlap does not fire",
     _pairs(odd={10: (10_000 + 10 * STEP_MS + 1000, 10_000 + 10 * STEP_MS + 2500)}),
     CueSettings(), []),
    ("two neighbouring misaligned pairs do not move the median: both fire",
     _pairs(odd={10: NEXT_LINE[10], 11: (10_000 + 12 * STEP_MS, 10_000 + 12 * STEP_MS + 900)}),
     CueSettings(), [10, 11]),
])
def test_cue_rule_table(name: str, pairs: pl.DataFrame, settings: CueSettings,
                        expected: list[int]) -> None:
    assert _flagged(pairs, settings) == expected, name


def test_gap_overlap_and_offset_values() -> None:
    out = cue_agreement(_pairs(shift_ms=3000, odd=NEXT_LINE), 10)
    assert out[schema.CUE_OFFSET].to_list() == [-3000.0] * 21
    row = out.row(10, named=True)
    assert row[schema.CUE_GAP] == STEP_MS - CUE_MS and row[schema.CUE_OVERLAP] == 0.0
    assert out[schema.CUE_OVERLAP][0] == 1.0 and out[schema.CUE_GAP][0] == 0.0
    half = cue_agreement(_pairs(odd={3: (17_500 + 750, 17_500 + 2250)}), 10).row(3, named=True)
    assert half[schema.CUE_OVERLAP] == pytest.approx(0.5) and half[schema.CUE_GAP] == 0.0


def test_untimed_pairs_get_nulls_and_never_fire() -> None:
    pairs = _pairs().with_columns(pl.lit(None, pl.Int64).alias(schema.SRC_START),
                                  pl.lit(None, pl.Int64).alias(schema.SRC_END))
    out = cue_agreement(pairs, 10)
    assert out.select(list(schema.CUE_COLUMNS)).null_count().row(0) == (21, 21, 21)
    assert _flagged(pairs) == []


def test_order_of_rows_is_kept_and_offsets_stay_within_a_document_pair() -> None:
    late = _pairs(shift_ms=5000).with_columns(pl.lit("b/g.srt").alias("path_tgt"))
    both = pl.concat([_pairs(), late]).reverse()
    out = cue_agreement(both, 10)
    assert out["bead"].to_list() == both["bead"].to_list()
    offsets = out.group_by("path_tgt").agg(pl.col(schema.CUE_OFFSET).unique())
    assert sorted(offsets[schema.CUE_OFFSET].to_list()) == [[-5000.0], [0.0]]


@pytest.mark.parametrize("source, target, expected", [
    ("救命！", "救命呀！", 2 / 3),          # punctuation is not a shared character
    ("着火啦！", "着火了！", 0.5),
    ("我仆你街", "我告诉你", 1 / 3),
    ("帮主⋯", "是吗？", 0.0),
    ("……", "！", 0.0),                     # nothing but punctuation: nothing shared
    ("OK 3次", "ok 3次！", 1.0),            # letters and digits count, in any case
    ("OK 3次", "好 4次", 1 / 6),
])
def test_shared_characters(source: str, target: str, expected: float) -> None:
    frame = pl.DataFrame({"s": [source], "t": [target]})
    assert frame.select(shared_characters("s", "t")).item() == pytest.approx(expected)


@pytest.mark.parametrize("key, value", [
    ("monolingual.cue_offset_window", 0), ("monolingual.cue_keep_char_jaccard", 1.5),
    ("monolingual.cue_max_gap_ms", -1), ("monolingual.cue_check", "yes")])
def test_settings_are_validated(key: str, value: object) -> None:
    with pytest.raises(ConfigError, match=key.split(".")[1]):
        load_config(overrides={key: value})


LINES = [("你今天去哪里了？", "你今天去了哪儿？"), ("我在图书馆看书。", "我在图书馆读书。"),
         ("那本书好看吗？", "那本书好看不好看？"), ("非常好看，我看了三遍。", "特别好看，我读了三遍。"),
         ("借给我看看吧。", "借我看看吧。"), ("明天还给你。", "明天就还你。"),
         ("走吧！", "快点离开！"),
         ("外面下雨了。", "外边下雨了。"), ("带伞了没有？", "你带伞了吗？"),
         ("没带，我们等一会儿。", "没有带，我们等一等。"), ("雨停了再走。", "等雨停了再走。"),
         ("好的，就这么办。", "好，就这样吧。")]


def _srt(path: Path, lines: list[str], shift_ms: int, odd: int | None = None) -> None:
    def stamp(ms: int) -> str:
        hours, minutes, seconds = ms // 3_600_000, ms // 60_000 % 60, ms // 1000 % 60
        return f"{hours:02d}:{minutes:02d}:{seconds:02d},{ms % 1000:03d}"

    path.parent.mkdir(parents=True, exist_ok=True)
    blocks = []
    for k, text in enumerate(lines):
        start = 5_000 + k * 3_000 + shift_ms
        end = start + 2_000
        if k == odd:      # shown between its neighbours, when no partner line is on screen
            start, end = start + 2_100, start + 2_800
        blocks.append(f"{k + 1}\n{stamp(start)} --> {stamp(end)}\n{text}\n")
    path.write_text("\n".join(blocks), "utf-8")


@pytest.mark.parametrize("odd, dropped", [(None, []), (6, ["走吧！"])])
@pytest.mark.slow
def test_extract_monolingual_drops_pairs_whose_cues_do_not_meet(
        tmp_path: Path, odd: int | None, dropped: list[str]) -> None:
    _srt(tmp_path / "a" / "film.srt", [a for a, _ in LINES], 0, odd)
    _srt(tmp_path / "b" / "film.srt", [b for _, b in LINES], 4_000)     # a track 4 s late
    config = load_config(overrides={"monolingual.min_confidence": 0.0})
    extract_monolingual([tmp_path / "a", tmp_path / "b"], tmp_path / "run", config)
    kept = pl.read_parquet(tmp_path / "run" / "sentence_pairs.parquet")
    low = pl.read_parquet(tmp_path / "run" / "low_confidence_pairs.parquet")
    assert low[schema.SOURCE].to_list() == dropped
    assert kept.height + low.height == len(LINES)
    assert kept[schema.CUE_OFFSET].to_list() == [-4000.0] * kept.height
    if dropped:
        reason = low["reason"][0]
        assert reason.startswith("cues 100 ms apart") and "local offset of -4000 ms" in reason
