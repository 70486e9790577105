"""One direction of thot training in its own process (``ThotAligner._train_in_workers``).

    python -m cppdb.align.words.thot_worker TASK.pkl RESULT.pkl

TASK holds ``(aligner, sources, targets)``; RESULT receives the trained model's files and its
training links (``_train_direction_in_worker``), written atomically.
"""
from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path

from cppdb.align.words.statistical import _train_direction_in_worker


def main(argv: list[str]) -> int:
    task, result = Path(argv[0]), Path(argv[1])
    aligner, sources, targets = pickle.loads(task.read_bytes())
    output = _train_direction_in_worker(aligner, sources, targets)
    partial = result.with_name(result.name + ".part")
    partial.write_bytes(pickle.dumps(output, protocol=5))
    os.replace(partial, result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
