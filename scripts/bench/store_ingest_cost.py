"""The results store's cost when `run` writes: a fresh process (as `run` pays it, its imports too)
adding one run folder, copied from a synthetic fleet, to a new store. Prints the seconds per run of
a whole-node run and of a one-GPU run: median and range over 5. Not a test (store_figures.sh).

    python scripts/bench/store_ingest_cost.py SCRIPTS WHOLE_NODE_FLEET ONE_GPU_FLEET
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ADD = (
    "import sys; sys.path.insert(0, sys.argv[3]); import time; t = time.perf_counter(); "
    "from pathlib import Path; from triaudit.store.hooks import add_after_writing; "
    "add_after_writing(Path(sys.argv[1]), Path(sys.argv[2]), print)"
)


def one(scripts: Path, run: Path) -> float:
    """Seconds to add a copy of `run` to a new store, in a process of its own."""
    tmp = Path(tempfile.mkdtemp(prefix="ingest-cost-"))
    try:
        copy = tmp / "results" / run.parent.name / run.name
        shutil.copytree(run, copy)
        os.sync()
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", ADD, str(tmp / "results"), str(copy), str(scripts)], capture_output=True, text=True
        )
        seconds = time.perf_counter() - start
        if done.returncode != 0 or not (tmp / "results" / ".triaudit-store").is_dir():
            raise SystemExit(f"adding {run} failed: {done.stdout}{done.stderr}")
        return seconds
    finally:
        shutil.rmtree(tmp)


def main() -> int:
    scripts, whole, single = (Path(a).resolve() for a in sys.argv[1:4])
    for label, fleet in (("whole node, 8 GPUs", whole), ("one GPU", single)):
        run = next(d for d in sorted(fleet.glob("*/*")) if (d / "manifest.json").is_file())
        times = [one(scripts, run) for _ in range(5)]
        print(
            f"{label}: median {statistics.median(times):.2f} s, range {min(times):.2f}-{max(times):.2f} s "
            f"over {len(times)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
