#!/usr/bin/env python3
"""Holds an executable's case names to a kept catalogue: `EXE --benchmark_list_tests ARGS...`
must print exactly the names in FILE, in the same order (tests/data/README.md says where each
file came from). The names are the JSON contract: the report, dashboards and `compare` key on them.
Usage: check_catalogue.py EXE FILE [ARG ...]
"""

import difflib
import subprocess
import sys


def main():
    exe, kept, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    r = subprocess.run([exe, "--benchmark_list_tests", *args], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        print(f"FAIL: --benchmark_list_tests exited {r.returncode}: {r.stderr}")
        sys.exit(1)
    with open(kept) as f:
        want = f.read().splitlines()
    got = r.stdout.splitlines()
    if got != want:
        diff = list(difflib.unified_diff(want, got, "kept", "now", lineterm="", n=1))
        print(f"FAIL: the case names changed ({len(want)} kept, {len(got)} now):")
        print("\n".join(diff[:40]))
        sys.exit(1)
    print(f"{len(got)} case names as kept in {kept}")


if __name__ == "__main__":
    main()
