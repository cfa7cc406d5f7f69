#!/usr/bin/env python3
"""A kernel that traps breaks the CUDA context for the rest of the process. The harness must say
so in the failing case and refuse the later cases with a message naming the cause, instead of
reporting a cascade of unrelated-looking CUDA errors. Needs a GPU: exit 77 (skipped) without one.
Usage: check_lost_context.py triaudit_lost_context_test
"""

import json
import subprocess
import sys
import tempfile


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = f"{tmp}/r.json"
        p = subprocess.run(
            [exe, f"--benchmark_out={out}", "--benchmark_out_format=json", "--min-time=0.01"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if p.returncode == 77:
            print("SKIPPED: no CUDA device")
            sys.exit(77)
        runs = {b["name"].split("/manual_time")[0].split("/min_time")[0]: b for b in json.load(open(out))["benchmarks"]}
    problems = []
    if p.returncode != 1:
        problems.append(f"exit code {p.returncode}, expected 1")
    trap, after = runs.get("lost_context/trap", {}), runs.get("lost_context/after", {})
    if "the CUDA context is lost" not in trap.get("error_message", ""):
        problems.append(f"trap case: {trap.get('error_message')!r}")
    msg = after.get("error_message", "")
    if "not run: an earlier case broke the CUDA context" not in msg or "cudaError" not in msg:
        problems.append(f"later case: {msg!r}")
    if problems:
        print("FAIL:\n  " + "\n  ".join(problems) + "\n" + p.stdout[-2000:] + p.stderr[-2000:])
        sys.exit(1)
    print("the lost context is reported where it happened and the later case is refused: OK")


if __name__ == "__main__":
    main()
