#!/usr/bin/env python3
"""The ptxas advisory guard (cmake/ptxas_advisories.sh) must fail a compile that makes ptxas
serialise the wgmma pipeline, and pass a clean one (ladder level 5 as built).
Usage: check_ptxas_guard.py GUARD NVCC KERNELS_DIR BAD.cu GOOD.cu
"""

import os
import subprocess
import sys
import tempfile


def compile_through(guard, nvcc, include, src, out):
    cmd = [
        guard,
        "fatal",
        nvcc,
        "-std=c++17",
        "-gencode",
        "arch=compute_90a,code=sm_90a",
        "-O3",
        f"-I{include}",
        "-c",
        src,
        "-o",
        out,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def main():
    guard, nvcc, include, bad, good = sys.argv[1:6]
    with tempfile.TemporaryDirectory() as tmp:
        b = compile_through(guard, nvcc, include, bad, os.path.join(tmp, "bad.o"))
        if b.returncode == 0:
            print("FAIL: the guard passed a compile whose ptxas output has wgmma advisories:\n" + b.stderr)
            sys.exit(1)
        if "C751" not in b.stderr or "serialised or re-ordered" not in b.stderr:
            print("FAIL: the bad compile failed, but not on the advisories:\n" + b.stderr)
            sys.exit(1)
        g = compile_through(guard, nvcc, include, good, os.path.join(tmp, "good.o"))
        if g.returncode != 0:
            print("FAIL: the guard refused a clean compile:\n" + g.stderr)
            sys.exit(1)
    print("the guard fails the serialised kernel (C75xx) and passes ladder level 5")


if __name__ == "__main__":
    main()
