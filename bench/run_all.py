"""Run every benchmark in bench/ (each in its own process, so peak memory is its own)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        module = f"bench.{script.stem}"
        print(f"== {module}", flush=True)
        code = subprocess.call([sys.executable, "-m", module], cwd=HERE.parent)
        if code:
            failed.append(module)
    if failed:
        print("failed:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
