"""Run every command of the README's command table on the bundled data, with the environment
that `make demo` installed (the base dependencies only), the way a new user would.

A step fails on a non-zero exit status or on a Python traceback anywhere in its output; every
step runs (a failure does not hide the ones after it) and a table of exit statuses is printed.
Exit status: 0 when every step passed, 1 otherwise.

    python3 .ci/smoke_readme.py [--venv .venv] [--work DIR]

Standard library only: it must run before anything but the base install exists.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
#: output that means a crash even when the exit status says otherwise
CRASH_MARKERS = ("Traceback (most recent call last)", "ModuleNotFoundError", "ImportError")


def steps(work: Path) -> list[tuple[str, list[str]]]:
    """(README command, arguments of `cppdb`), in an order where each step's inputs exist."""
    par, run, mono = DATA / "parallel", work / "bilingual", work / "mono-text"
    subs = work / "mono-subtitles"
    pairs_tsv = work / "pairs.tsv"
    pairs_tsv.write_text("每天早上\t每个早上\n出生于\t生于\n这座城市\t这个城市\n", "utf-8")
    zh_en = ["--zh", str(par / "sample.zh"), "--en", str(par / "sample.en")]
    return [
        ("doctor", ["doctor"]),
        ("doctor --json", ["doctor", "--json"]),
        ("config show", ["config", "show"]),
        ("models list", ["models", "list"]),
        ("annotate", ["annotate", *zh_en, "-o", str(work / "annotated")]),
        ("align-words", ["align-words", "--parallel", str(DATA / "wordalign" / "sample.txt"),
                         "--train", str(par / "sample.tok.txt"),
                         "--gold", str(DATA / "wordalign" / "sample.gold"),
                         "-o", str(work / "sample.align")]),
        ("align-words --zh --en", ["align-words", *zh_en, "-o", str(work / "raw.align")]),
        ("align-words tune", ["align-words", "tune",
                              "--gold", str(DATA / "wordalign" / "sample.gold"),
                              "--parallel", str(DATA / "wordalign" / "sample.txt"),
                              "--train", str(par / "sample.tok.txt"),
                              "-o", str(work / "tuned.json")]),
        ("extract-bilingual --dry-run", ["extract-bilingual", *zh_en, "-o", str(run), "--dry-run"]),
        ("extract-bilingual", ["extract-bilingual", *zh_en, "-o", str(run)]),
        ("rank", ["rank", str(run)]),
        ("export ppdb", ["export", str(run), "--top", "20%", "--format", "ppdb",
                         "-o", str(work / "top20.ppdb")]),
        ("export jsonl", ["export", str(run), "--top", "20%", "--format", "jsonl",
                          "-o", str(work / "top20.jsonl")]),
        ("export tsv", ["export", str(run), "--top", "M", "--format", "tsv",
                        "-o", str(work / "tierM.tsv")]),
        ("export parquet", ["export", str(run), "--format", "parquet",
                            "-o", str(work / "top20.parquet")]),
        ("export hf", ["export", str(run), "--format", "hf", "-o", str(work / "hf")]),
        ("lookup", ["lookup", "每天早上", "--db", str(run)]),
        ("lookup pattern", ["lookup", "[NP1] 出生于 [NP2]", "--db", str(run), "--type", "pattern"]),
        ("lookup hf export", ["lookup", "这座城市", "--db", str(work / "hf")]),
        ("lookup --explain", ["lookup", "这座城市", "--db", str(run), "--explain", "该市"]),
        ("evaluate", ["evaluate", str(run)]),
        ("evaluate --sample", ["evaluate", str(run), "--sample", "10",
                               "-o", str(work / "sheet.tsv")]),
        ("score", ["score", str(pairs_tsv), "-o", str(work / "scored.tsv")]),
        ("report", ["report", str(run), "-o", str(work / "bilingual.html")]),
        ("extract-monolingual (text)", ["extract-monolingual", str(DATA / "story" / "version_a"),
                                        str(DATA / "story" / "version_b"), "-o", str(mono)]),
        ("extract-monolingual (subtitles)", ["extract-monolingual",
                                             str(DATA / "subtitles" / "version_a"),
                                             str(DATA / "subtitles" / "version_b"),
                                             "-o", str(subs)]),
        ("rank (sentences)", ["rank", str(mono)]),
        ("ocr", ["ocr", str(DATA / "ocr"), "-o", str(work / "ocr.jsonl")]),
        ("align-sentences", ["align-sentences", str(DATA / "story" / "version_a" / "chapter01.txt"),
                             str(DATA / "story" / "version_b" / "第一章.txt"),
                             "-o", str(work / "chapter01.beads"),
                             "--gold", str(DATA / "story" / "gold" / "chapter01.beads")]),
        ("build-compression", ["build-compression", str(DATA / "news" / "pairs.jsonl"),
                               "-o", str(work / "compression"), "--paraphrases", str(run)]),
        ("report (compression)", ["report", str(work / "compression")]),
    ]


def cppdb_command(venv: Path) -> list[str] | None:
    """The venv's `cppdb` script, or its python running the CLI module (a venv without scripts)."""
    if (venv / "bin" / "cppdb").exists():
        return [str(venv / "bin" / "cppdb")]
    if (venv / "bin" / "python").exists():
        return [str(venv / "bin" / "python"), "-m", "cppdb.cli"]
    return None


def run_step(cppdb: list[str], args: list[str], env: dict[str, str]) -> tuple[int, str, float]:
    started = time.perf_counter()
    proc = subprocess.run([*cppdb, *args], env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace", timeout=900)
    return proc.returncode, proc.stdout, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, default=REPO / ".venv")
    parser.add_argument("--work", type=Path, default=None,
                        help="where the runs go (default: a fresh temporary directory)")
    parser.add_argument("--only", default="",
                        help="comma-separated step names to run (default: every step)")
    args = parser.parse_args(argv)
    cppdb = cppdb_command(args.venv)
    if cppdb is None:
        print(f"smoke: no cppdb in {args.venv}: run `make demo` first", file=sys.stderr)
        return 1
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    work = args.work or Path(tempfile.mkdtemp(prefix="cppdb-smoke-"))
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "COLUMNS": "100", "PYTHONUNBUFFERED": "1"}
    results = []
    chosen = [(name, step) for name, step in steps(work) if not only or name in only]
    if only - {name for name, _ in chosen}:
        print(f"smoke: unknown step(s) {sorted(only - {n for n, _ in chosen})}", file=sys.stderr)
        return 1
    for name, step_args in chosen:
        status, output, seconds = run_step(cppdb, step_args, env)
        crashed = [m for m in CRASH_MARKERS if m in output]
        ok = status == 0 and not crashed
        results.append((name, status, seconds, ok))
        print(f"{'ok  ' if ok else 'FAIL'} {name:34s} exit {status:3d}  {seconds:6.1f} s", flush=True)
        if not ok:
            print("     cppdb " + " ".join(step_args))
            print("     " + output[-4000:].replace("\n", "\n     "))
    failed = [name for name, _, _, ok in results if not ok]
    print(f"\nREADME smoke: {len(results) - len(failed)} passed, {len(failed)} failed "
          f"({sum(s for _, _, s, _ in results):.0f} s; outputs in {work})")
    if failed:
        print("failed: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
