"""Worker pools die with their parent; Ctrl-C prints one line saying how to resume."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
       "TRANSFORMERS_OFFLINE": "1"}
POOL_SCRIPT = """
import os, sys, time
from cppdb.engine.pools import process_pool
if __name__ == "__main__":
    pool = process_pool(2, start_method=sys.argv[1])
    futures = [pool.submit(time.sleep, 60) for _ in range(2)]
    time.sleep(1.0)
    print(" ".join(str(p) for p in pool._processes), flush=True)
    time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split()[2] == "Z")


@pytest.mark.parametrize("sig, method", [(signal.SIGTERM, "fork"), (signal.SIGKILL, "fork"),
                                         (signal.SIGKILL, "spawn")])
def test_no_worker_survives_its_parent(sig, method):
    parent = subprocess.Popen([sys.executable, "-c", POOL_SCRIPT, method], env=ENV,
                              stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(p) for p in parent.stdout.readline().split()]
        assert len(workers) == 2 and all(_alive(p) for p in workers)
        parent.send_signal(sig)
        parent.wait(10)
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in workers if _alive(p)]
    finally:
        parent.kill()
        parent.wait()


def test_ctrl_c_prints_one_line_and_the_run_resumes(tmp_path):
    cmd = [sys.executable, "-m", "cppdb.cli", "extract-bilingual", "-q",
           "--zh", str(ROOT / "data/parallel/sample.zh"),
           "--en", str(ROOT / "data/parallel/sample.en"), "-o", str(tmp_path / "run"),
           "--set", "annotate.workers=2", "--set", "annotate.batch_size=8"]
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    manifest = tmp_path / "run" / "manifest.json"
    deadline = time.monotonic() + 60
    while not (manifest.exists() and '"annotate"' in manifest.read_text("utf-8")):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err and len(lines) == 1, err
    assert "[E600] interrupted by SIGINT" in lines[0] and "re-run" in lines[0]


BUSY_THREAD_SCRIPT = """
import os, signal, threading, time
import cppdb.cli as cli
def busy():                       # stands for a worker thread in native code (thot, onnx)
    time.sleep(600)
def command():
    threading.Thread(target=busy).start()
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(600)
cli.app = command
cli.main()
"""


def test_sigterm_stops_at_once_while_a_worker_thread_is_busy():
    """A normal interpreter exit waits for non-daemon threads: a SIGTERMed run whose worker
    thread was inside native code lingered until that work ended."""
    done = subprocess.run([sys.executable, "-c", BUSY_THREAD_SCRIPT], env=ENV, text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 130, done.stderr
    assert "[E600] interrupted by SIGTERM" in done.stderr
