"""Document pairing on a generated collection (``devtools/doc_collection.py``).

3 versions × 40 chapters, files renamed to random names and shuffled, 5 chapters that exist
in one version only, one file holding two chapters.  Measured per seed:

* ``recall``: share of gold chapter pairs (chapter c in versions a and b) that were paired —
  the file (or the part of a cut file) holding c in a with the one holding c in b;
* ``precision``: share of the pairs made that are gold pairs;
* ``extras_unpaired``: of the chapters that exist in one version only, how many were left
  unpaired.

``--merged-no-headings``: two files of the collection hold several chapters with no heading
between them (2 and 3 chapters, in two versions). Files are cut by content
(``merged.split_merged_files``, as ``extract-monolingual`` does) unless
``--no-content-split``; ``cuts_exact`` counts the cuts made at exactly the true chapter
starts, ``cuts_wrong`` the files cut that do not hold several chapters without headings.

``--method current`` runs the pairing of the ``cppdb`` on the path (cut at chapter headings
when that cppdb can); run it with ``PYTHONPATH`` pointing at an older checkout to measure
the old method on the same collections (``--label`` names the row).

    PYTHONPATH=$PWD python bench/bench_document_pairing.py --seeds 0 1 2 3 4
"""
from __future__ import annotations

import argparse
import itertools
import json
import re
import statistics
import tempfile
import time
from pathlib import Path

from bench.common import record, shared_data
from cppdb.align.sentences.pairing_signals import SIGNAL_NAMES
from devtools.doc_collection import make_collection


SIGNALS = SIGNAL_NAMES        # the weight fields of PairingWeights, one per signal


def load_versions(root: Path, split: bool) -> list[list]:
    """VersionFiles of every version directory; files cut at their chapter headings if the
    cppdb under test can do that."""
    from cppdb.align.sentences.types import VersionFile

    cut = None
    if split:
        try:
            from cppdb.align.sentences.chapters import heading_starts as cut
        except ImportError:
            cut = None
    versions = []
    for v, directory in enumerate(sorted(root.glob("v*"))):
        files = []
        for path in sorted(directory.iterdir()):
            lines = [x for x in path.read_text("utf-8").splitlines() if x.strip()]
            starts = cut(lines) if cut else [0]
            if len(starts) == 1:
                files.append(VersionFile(v, path, "\n".join(lines)))
                continue
            for k, (a, b) in enumerate(zip(starts, [*starts[1:], len(lines)])):
                files.append(VersionFile(v, path, "\n".join(lines[a:b]), part=k))
        versions.append(files)
    return versions


def unit_of(gold: dict, version: int, chapter: str, cut_files: set[tuple[int, str]]) -> str:
    """The label of the file (or part) of ``version`` that holds ``chapter``."""
    for name, chapters in gold[str(version)].items():
        if chapter in chapters:
            if (version, name) in cut_files:
                return f"{name}#{chapters.index(chapter)}"
            return name
    return ""


def score(gold: dict, groups: list, versions: list[list]) -> dict:
    label = (lambda f: getattr(f, "label", f.name))
    cut_files = {(f.version, f.name) for files in versions for f in files
                 if getattr(f, "part", None) is not None}
    made = {((a.version, label(a)), (b.version, label(b)))
            for g in groups for a, b in itertools.combinations(g.files, 2)}
    n = len(gold)
    chapters = {c for v in gold.values() for cs in v.values() for c in cs}
    wanted = set()
    for c in chapters:
        for a, b in itertools.combinations(range(n), 2):
            ua, ub = unit_of(gold, a, c, cut_files), unit_of(gold, b, c, cut_files)
            if ua and ub:
                wanted.add(((a, ua), (b, ub)))
    correct = len(made & wanted)
    extras = [(int(v), name) for v, files in gold.items() for name, cs in files.items()
              if cs[0].startswith("x")]
    paired_files = {(f.version, f.name) for g in groups for f in g.files}
    return {"gold_pairs": len(wanted), "pairs_made": len(made), "correct": correct,
            "recall": round(correct / len(wanted), 4),
            "precision": round(correct / len(made), 4) if made else 0.0,
            "extras": len(extras),
            "extras_unpaired": sum(1 for e in extras if e not in paired_files)}


def can_cut() -> bool:
    try:
        from cppdb.align.sentences.chapters import heading_starts  # noqa: F401
    except ImportError:
        return False
    return True


VERSE = re.compile(r"^(\d+)\.\d+\s*(.*)$")
BIBLE_BOOKS = ("Gen", "1Sa", "Dan", "Est", "Rut", "Jon")


def bible_collection(root: Path, seed: int, books: tuple[str, ...] = BIBLE_BOOKS,
                     alone: int = 5, bible: Path | None = None,
                     merged_sizes: tuple[int, ...] = ()) -> dict:
    """Real translations: every chapter of ``books`` in cuv1 / ccb / wenl (traditional ->
    simplified, verse numbers removed) as a randomly named file; ``alone`` chapters are kept
    in one version only (removed from the other two) and must stay unpaired;
    ``merged_sizes``: runs of that many consecutive chapters of one book written as one
    file (the k-th run in version k % 3; chapters carry no headings here), their true starts
    in ``merged_starts.json``."""
    import random

    from cppdb.text.normalize import normalize_zh

    bible = bible or shared_data("bible-ot")
    if bible is None or not bible.is_dir():
        raise SystemExit("--bible needs ../shared/data/bible-ot (developer machines only)")
    rng = random.Random(seed)
    chapters: dict[str, dict[str, list[str]]] = {}
    for version in ("cuv1", "ccb", "wenl"):
        for book in books:
            for line in (bible / version / f"{book}.txt").read_text("utf-8").splitlines():
                found = VERSE.match(line)         # "1.2 text" (wenl: "1.2text")
                if not found:
                    continue
                chapter, text = f"{book}{found.group(1)}", found.group(2)
                chapters.setdefault(version, {}).setdefault(chapter, []).append(text)
    names = sorted(chapters["cuv1"])
    keep_in = {c: rng.randrange(3) for c in rng.sample(names, alone)}
    runs = _bible_runs(rng, names, set(keep_in), books, merged_sizes)
    gold: dict[str, dict[str, list[str]]] = {}
    starts: dict[str, dict[str, list[int]]] = {}
    for v, version in enumerate(("cuv1", "ccb", "wenl")):
        directory = root / f"v{v}"
        directory.mkdir(parents=True)
        gold[str(v)] = {}
        files = [run for k, run in enumerate(runs) if k % 3 == v]
        in_run = {c for run in files for c in run}
        files += [[c] for c in names if c not in in_run]
        for held in sorted(files, key=lambda run: names.index(run[0])):
            if held[0] in keep_in and keep_in[held[0]] != v:
                continue
            name = f"{rng.getrandbits(32):08x}.txt"
            texts = [normalize_zh("\n".join(chapters[version].get(c, []))) for c in held]
            (directory / name).write_text("\n".join(texts) + "\n", "utf-8")
            gold[str(v)][name] = [c if c not in keep_in else f"x{c}" for c in held]
            if len(held) > 1:
                sizes = [sum(1 for x in t.splitlines() if x.strip()) for t in texts]
                starts.setdefault(str(v), {})[name] = [sum(sizes[:k]) for k in range(len(held))]
    (root / "merged_starts.json").write_text(json.dumps(starts, indent=1), "utf-8")
    return gold


def _bible_runs(rng, names: list[str], alone: set[str], books: tuple[str, ...],
                sizes: tuple[int, ...]) -> list[list[str]]:
    """Non-overlapping runs of consecutive chapters of one book (none kept in one version)."""
    runs: list[list[str]] = []
    taken = set(alone)
    for size in sizes:
        while True:
            book = rng.choice(books)
            count = sum(1 for n in names if n[:3] == book)
            if count < size:
                continue
            first = rng.randint(1, count - size + 1)
            run = [f"{book}{c}" for c in range(first, first + size)]
            if not taken & set(run):
                break
        taken.update(run)
        runs.append(run)
    return runs


def content_split(versions: list[list], weights, root: Path, no_headings: bool
                  ) -> tuple[list[list], dict]:
    """The versions with merged files cut by content (as ``extract-monolingual`` does by
    default), and how right the cuts were: only the files merged without headings should
    be cut (a file merged with headings was already cut at them)."""
    try:
        from cppdb.align.sentences.merged import split_merged_files
    except ImportError:            # a cppdb from before the content cut
        return versions, {}
    starts = root / "merged_starts.json"
    truth = json.loads(starts.read_text("utf-8")) if no_headings and starts.is_file() else {}
    versions, cuts = split_merged_files(versions, weights)
    made = {(str(c.file.version), c.file.name): list(c.starts) for c in cuts}
    return versions, {"merged_files": sum(len(v) for v in truth.values()),
                      "cuts": len(cuts),
                      "cuts_exact": sum(truth.get(v, {}).get(name) == starts
                                        for (v, name), starts in made.items()),
                      "cuts_wrong": sum(name not in truth.get(v, {}) for v, name in made),
                      # lines between the cuts made and the true chapter starts
                      "cut_offset_lines": sum(abs(a - b) for (v, name), starts in made.items()
                                              for a, b in zip(starts, truth.get(v, {}).get(
                                                  name, starts)))}


def run_one(seed: int, split: bool, mode: str | None, zero: list[str], hard: bool,
            chapters: int = 40, bible: Path | None = None, no_headings: bool = False,
            content: bool = True) -> dict:
    from cppdb.align.sentences.documents import PairingWeights, pair_versions

    with tempfile.TemporaryDirectory() as tmp:
        merged = {"merged_sizes": (2, 3), "merged_headings": False} if no_headings else {}
        gold = (bible_collection(Path(tmp), seed, bible=bible,
                                 merged_sizes=(2, 3) if no_headings else ()) if bible
                else make_collection(tmp, seed, hard=hard, chapters=chapters, **merged))
        versions = load_versions(Path(tmp), split)
        weights = PairingWeights(**({"pair_mode": mode} if mode else {}),
                                 **{f"pair_weight_{name}": 0.0 for name in zero})
        start = time.perf_counter()
        cuts = {}
        if content:
            versions, cuts = content_split(versions, weights, Path(tmp), no_headings)
        split_seconds = time.perf_counter() - start
        groups, _unpaired = pair_versions(versions, weights)
        seconds = time.perf_counter() - start
        return {**score(gold, groups, versions), **cuts, "seconds": round(seconds, 2),
                "split_seconds": round(split_seconds, 2)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--label", default="content signals")
    parser.add_argument("--no-split", action="store_true", help="do not cut merged files")
    parser.add_argument("--mode", choices=("all", "pivot"), default=None)
    parser.add_argument("--zero", nargs="*", default=[],
                        help="PairingWeights fields set to 0 (ablation), e.g. number names")
    parser.add_argument("--bible", nargs="?", const=shared_data("bible-ot") or Path("-"),
                        type=Path, default=None,
                        help="real translations instead: chapters of 6 OT books in cuv1/ccb/wenl "
                             "(the bible-ot directory; default ../shared/data/bible-ot)")
    parser.add_argument("--chapters", type=int, default=40, help="chapters per version")
    parser.add_argument("--hard", action="store_true",
                        help="the hard preset of doc_collection (HARD): freer translations")
    parser.add_argument("--merged-no-headings", action="store_true",
                        help="files holding 2 and 3 chapters without headings between them")
    parser.add_argument("--no-content-split", action="store_true",
                        help="do not cut merged files by content (the pairing alone)")
    parser.add_argument("--only", choices=SIGNALS, default=None,
                        help="every other signal's weight set to 0 (ablation)")
    args = parser.parse_args(argv)
    if args.only:
        args.zero = [s for s in SIGNALS if s != args.only]
    rows = [run_one(seed, not args.no_split, args.mode, args.zero, args.hard, args.chapters,
                    args.bible, args.merged_no_headings, not args.no_content_split)
            for seed in args.seeds]
    for seed, row in zip(args.seeds, rows):
        print(json.dumps({"seed": seed, **row}))
    recall = [r["recall"] for r in rows]
    record("document_pairing", {
        "label": args.label, "mode": args.mode or "default", "zeroed": args.zero,
        "split": not args.no_split and can_cut(),
        "seeds": args.seeds, "collection": (f"bible-ot {'/'.join(BIBLE_BOOKS)} chapters in cuv1/ccb/wenl, 5 in one "
                       "version only" + (", 2 files of 2 and 3 chapters" if args.merged_no_headings
                                          else "") if args.bible else
                       f"3 versions x {args.chapters} chapters, 5 extras, "
                       + ("2 files of 2 and 3 chapters without headings" if args.merged_no_headings
                          else "1 merged file"))
                                           + (", hard preset" if args.hard else ""),
        "content_split": not args.no_content_split,
        "recall_mean": round(statistics.mean(recall), 4), "recall_min": min(recall),
        "precision_mean": round(statistics.mean(r["precision"] for r in rows), 4),
        "extras_unpaired": f"{sum(r['extras_unpaired'] for r in rows)}/"
                           f"{sum(r['extras'] for r in rows)}",
        "seconds_mean": round(statistics.mean(r["seconds"] for r in rows), 2),
        **({"cuts_exact": f"{sum(r['cuts_exact'] for r in rows)}/"
                          f"{sum(r['merged_files'] for r in rows)}",
            "cuts_wrong": sum(r["cuts_wrong"] for r in rows),
            "cut_offset_lines": sum(r["cut_offset_lines"] for r in rows)}
           if rows and "cuts" in rows[0] else {}),
        "per_seed": rows})


if __name__ == "__main__":
    main()
