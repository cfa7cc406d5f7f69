"""Times `triaudit report` on synthetic result sets (make_synthetic_results.py): wall time and peak
memory of the whole command, in a fresh process each time. Not a test: figures depend on the machine.

    .venv/bin/python scripts/bench/bench_report.py                 # both goals, temporary data
    .venv/bin/python scripts/bench/bench_report.py --cards 20      # a smaller first look

Goals: 100 cards x the full catalogue <= 12 s and <= 1 GB; 300 small files <= 5 s (on the 2-core
machine the goals were set on; machines differ up to 2x: compare against the previous code, interleaved).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def timed(cmd: list[str]) -> tuple[float, float, int]:
    """(seconds, peak resident MB of the child, exit code). What earlier commands wrote (a
    100-card report is 600 MB of files) is flushed to disk first: its writeback would otherwise
    run during this command, on the same cores (about a second on a 2-core machine)."""
    os.sync()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if p.returncode != 0:
        print(p.stdout[-2000:], p.stderr[-4000:], file=sys.stderr)
    # ru_maxrss of children is the largest of any child so far: run each case in order of growing size.
    return seconds, max(peak_kb, before) / 1024, p.returncode


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cards", type=int, default=100)
    p.add_argument("--small-files", type=int, default=300)
    p.add_argument("--keep", type=Path, help="make the data here (and keep it) instead of a temporary folder")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = a.keep or Path(tmp)
        results = []
        for what, flag, n in (
            ("small files", "--small-files", a.small_files),
            ("cards x full catalogue", "--cards", a.cards),
        ):
            if not n:
                continue
            data = root / f"synthetic_{flag.strip('-')}_{n}"
            if not data.exists():
                subprocess.run(
                    [sys.executable, str(HERE / "make_synthetic_results.py"), str(data), flag, str(n)], check=True
                )
            out = root / f"report_{flag.strip('-')}_{n}"
            seconds, mb, rc = timed([sys.executable, "-m", "triaudit", "report", str(data), "--out", str(out)])
            results.append((f"{n} {what}", seconds, mb, rc))
        for label, seconds, mb, rc in results:
            print(f"{label:<32} {seconds:7.1f} s   peak {mb:7.0f} MB   exit {rc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
