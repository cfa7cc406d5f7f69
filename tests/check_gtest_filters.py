#!/usr/bin/env python3
"""The CTest entries that run parts of triaudit_gpu_tests by --gtest_filter must each select
tests: a renamed test would otherwise make its entry pass with nothing run. Listing needs no GPU.
Usage: check_gtest_filters.py TRIAUDIT_GPU_TESTS FILTER=MIN_COUNT [...]"""

import subprocess
import sys


def main():
    exe, specs = sys.argv[1], sys.argv[2:]
    problems = []
    for spec in specs:
        flt, _, least = spec.rpartition("=")
        out = subprocess.run(
            [exe, "--gtest_list_tests", f"--gtest_filter={flt}"], capture_output=True, text=True, timeout=60
        ).stdout
        n = sum(1 for line in out.splitlines() if line.startswith("  "))
        if n < int(least):
            problems.append(f"--gtest_filter={flt} selects {n} test(s), expected at least {least}")
    if problems:
        print("FAIL:\n  " + "\n  ".join(problems))
        sys.exit(1)
    print(f"{len(specs)} filters each select their tests")


if __name__ == "__main__":
    main()
