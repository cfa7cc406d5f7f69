"""Times `triaudit report` (or `history`) of two checkouts on the same data, interleaved (old, new,
old, new, ...), so that a speed claim is a ratio measured under the same conditions, with its
spread. Not a test.

    git worktree add /tmp/old <commit>
    .venv/bin/python scripts/bench/make_synthetic_results.py /tmp/data100 --cards 100
    .venv/bin/python scripts/bench/interleave.py --old /tmp/old/scripts --new scripts --data /tmp/data100
    # history over a series of runs of one card (scripts/tests/synthetic_series.py writes 14 nights):
    .venv/bin/python scripts/bench/interleave.py --command history --old /tmp/old/scripts --new scripts \
        --data /tmp/series/nvidia-h100-80gb-hbm3

Prints each round's seconds, then new ÷ old: the median over rounds and the range (peak memory:
bench_report.py, which runs one report per process). Each report is written to a fresh temporary folder (removed after), and what earlier rounds
wrote is flushed to disk before each run (bench_report.timed).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench_report import timed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--old", type=Path, required=True, help="the previous checkout's scripts/ folder")
    p.add_argument("--new", type=Path, required=True, help="this checkout's scripts/ folder")
    p.add_argument(
        "--data", type=Path, required=True, help="result files to report on; for history, the folder of the runs"
    )
    p.add_argument("--command", choices=("report", "history"), default="report", help="the command timed")
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args(argv)
    times: dict[str, list[float]] = {"old": [], "new": []}
    for r in range(a.rounds):
        for label, scripts in (("old", a.old), ("new", a.new)):
            out = Path(tempfile.mkdtemp(prefix=f"interleave-{label}-"))
            inputs = sorted(str(d) for d in a.data.iterdir() if d.is_dir()) if a.command == "history" else [str(a.data)]
            try:
                cmd = [
                    sys.executable,
                    "-c",
                    f"import sys; sys.path.insert(0, {str(scripts.resolve())!r}); "
                    "from triaudit.commands import main; raise SystemExit(main())",
                    a.command,
                    *inputs,
                    "--out",
                    str(out / "rep"),
                ]
                seconds, _mb, rc = timed(cmd)
            finally:
                shutil.rmtree(out, ignore_errors=True)
            if rc not in ((0, 1) if a.command == "history" else (0,)):  # history: 1 is a regression found
                print(f"round {r + 1} {label}: exit {rc}", file=sys.stderr)
                return 1
            times[label].append(seconds)
            print(f"round {r + 1} {label}: {seconds:6.2f} s", flush=True)
    ratios = [n / o for n, o in zip(times["new"], times["old"])]
    print(
        f"new / old: median {statistics.median(ratios):.3f}, range {min(ratios):.3f}-{max(ratios):.3f} "
        f"over {len(ratios)} rounds; old {statistics.median(times['old']):.2f} s, new {statistics.median(times['new']):.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
