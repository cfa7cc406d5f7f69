"""Times a command of several checkouts on the same data, interleaved (a, b, c, a, b, c, ...), so that a
speed claim is a ratio measured under the same conditions, with its spread. Not a test.

    git worktree add /tmp/old <commit>
    .venv/bin/python scripts/bench/make_synthetic_results.py /tmp/data100 --cards 100
    .venv/bin/python scripts/bench/interleave.py --old /tmp/old/scripts --new scripts --data /tmp/data100
    .venv/bin/python scripts/bench/interleave.py --checkout v030=/tmp/v030/scripts:/tmp/v030/.venv/bin/python \\
        --checkout new=scripts --data /tmp/fleet --command 'gate {data}' --rounds 3
    # history over a series of runs of one card (scripts/tests/synthetic_series.py writes 14 nights):
    .venv/bin/python scripts/bench/interleave.py --command history --old /tmp/old/scripts --new scripts \\
        --data /tmp/series/nvidia-h100-80gb-hbm3

Each checkout is NAME=SCRIPTS[:PYTHON] (its scripts/ folder, and the interpreter of its own virtual
environment: an old checkout's dependencies are not this one's). `--command` is the triaudit command
line, `{data}` the data folder, `{runs}` the folders in it (history's runs) and `{out}` a fresh
temporary folder (report, history); a bare `report` or `history` is shorthand for those commands'
usual lines (SHORTHAND). Prints each
round's seconds and peak memory, then each checkout's median and its ratio to the first one's: the
median over rounds and the range. What earlier rounds wrote is flushed to disk before each run
(bench_report.timed), and each output folder removed after.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import statistics
import sys
import tempfile
from pathlib import Path


def timed(cmd: list[str]) -> tuple[float, float, int]:
    """(seconds, this child's own peak resident MB, exit code): os.wait4's usage is the child's alone
    (bench_report.timed's is the largest of every child so far). Earlier output flushed first."""
    import os
    import subprocess
    import time

    os.sync()
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _pid, status, usage = os.wait4(p.pid, 0)
    seconds = time.perf_counter() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 1, 3):
        print(err.decode(errors="replace")[-4000:], file=sys.stderr)
    return seconds, usage.ru_maxrss / 1024, p.returncode


SHORTHAND = {"report": "report {data} --out {out}/rep", "history": "history {runs} --out {out}/h"}


def _checkout(text: str) -> tuple[str, Path, str]:
    name, _, rest = text.partition("=")
    scripts, _, python = rest.partition(":")
    return name, Path(scripts), python or sys.executable


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--old", type=Path, help="the previous checkout's scripts/ folder (with --new)")
    p.add_argument("--new", type=Path, help="this checkout's scripts/ folder")
    p.add_argument("--checkout", action="append", default=[], help="NAME=SCRIPTS[:PYTHON], repeated, first the base")
    p.add_argument("--data", type=Path, required=True, help="result files to read")
    p.add_argument(
        "--command", default="report {data} --out {out}/rep", help="triaudit's arguments, or report / history"
    )
    p.add_argument("--data-of", action="append", default=[], help="NAME=FOLDER: this checkout's data instead of --data")
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args(argv)
    checkouts = [_checkout(c) for c in a.checkout]
    if a.old and a.new:
        checkouts = [("old", a.old, sys.executable), ("new", a.new, sys.executable)] + checkouts
    if len(checkouts) < 2:
        p.error("two checkouts at least (--old and --new, or --checkout twice)")
    data_of = {name: Path(folder) for name, _, folder in (d.partition("=") for d in a.data_of)}
    times: dict[str, list[float]] = {name: [] for name, _, _ in checkouts}
    peaks: dict[str, list[float]] = {name: [] for name, _, _ in checkouts}
    for r in range(a.rounds):
        for name, scripts, python in checkouts:
            out = Path(tempfile.mkdtemp(prefix=f"interleave-{name}-"))
            data = data_of.get(name, a.data)
            folders = sorted(d for d in data.iterdir() if d.is_dir()) if data.is_dir() else []
            runs = " ".join(shlex.quote(str(d)) for d in folders)
            line = SHORTHAND.get(a.command, a.command)
            args = shlex.split(line.format(data=shlex.quote(str(data)), runs=runs, out=out))
            cmd = [
                python,
                "-c",
                # An exception (an import that fails) exits 99, never 1: 1 is a verdict.
                f"import sys, traceback; sys.path.insert(0, {str(scripts.resolve())!r})\n"
                "try:\n    from triaudit.commands import main\n    rc = main()\n"
                "except Exception:\n    traceback.print_exc()\n    rc = 99\nraise SystemExit(rc)",
                *args,
            ]
            try:
                seconds, mb, rc = timed(cmd)
            finally:
                shutil.rmtree(out, ignore_errors=True)
            if rc not in (0, 1, 3):  # a verdict (1: found, 3: not judged) is a result; 2 and up are not
                print(f"round {r + 1} {name}: exit {rc}", file=sys.stderr)
                return 1
            times[name].append(seconds)
            peaks[name].append(mb)
            print(f"round {r + 1} {name}: {seconds:7.2f} s  peak {mb:6.0f} MB  exit {rc}", flush=True)
    base = checkouts[0][0]
    for name, _, _ in checkouts:
        ratios = [n / o for n, o in zip(times[name], times[base])]
        print(
            f"{name}: median {statistics.median(times[name]):.2f} s, peak {max(peaks[name]):.0f} MB; "
            f"/ {base}: median {statistics.median(ratios):.3f}, range {min(ratios):.3f}-{max(ratios):.3f} "
            f"over {len(ratios)} rounds"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
