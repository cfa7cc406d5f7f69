#!/usr/bin/env python3
"""Build checks that need no GPU: read the machine code of the kernel libraries.

- The Tensor Core ladder levels contain the matrix instructions meant (HMMA; level 3 also
  LDGSTS = cp.async and LDSM = ldmatrix; levels 4-5 HGMMA of their tile shape and UTMALDG = TMA,
  level 5 also USETMAXREG = setmaxnreg and a wait that leaves one MMA group in flight); the
  CUDA-core levels contain none.
- STREAM's vector copy and the SM copy of `triaudit_memcpy` have 4 16-byte loads in flight per thread (all issued before its 2nd store).
- No hot kernel uses local memory (register spills): cuobjdump -res-usage reports LOCAL:0.
- Levels 4-5: no instruction touches the wgmma accumulator registers inside the loop around the
  MMAs (head to back-edge) nor up to the first `WARPGROUP.DEPBAR.LE gsb0, 0x0` after the last HGMMA. HGMMA has no scoreboard on its
  output registers, so an epilogue that ptxas hoists above the final wait reads a D that misses
  the last k-tile (it happened: level 5's F2FP conversions sat above the wait; the SASS of that
  binary is kept in tests/data/ and `--self-test` proves the rule fails on it).

cuobjdump/nvdisasm come from the toolkit or from PyPI (nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm,
installed by scripts/test.sh). Without them the check exits 77 (CTest: skipped).
Usage: check_kernel_sass.py ARCH LIBRARY [LIBRARY ...]      e.g. sm_90 libtriaudit_kernels_gemm.a
       check_kernel_sass.py --self-test BAD.sass [BAD.sass ...] the hazard rule must flag each SASS
"""

import glob
import os
import re
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_tool(name):
    candidates = [shutil.which(name), f"/usr/local/cuda/bin/{name}"]
    for prefix in {sys.prefix, os.environ.get("VIRTUAL_ENV", ""), os.path.join(REPO, ".venv")}:
        if prefix:
            candidates += glob.glob(
                os.path.join(prefix, "lib", "python3*", "site-packages", "nvidia", "*", "bin", name)
            )
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def kernels_of(text, pattern):
    """Function name -> body text, from cuobjdump -sass or -res-usage output."""
    out, current = {}, None
    for line in text.splitlines():
        m = re.search(r"Function\s*:?\s*(\S+)", line)
        if m:
            current = m.group(1).rstrip(":")
            out.setdefault(current, "")
        elif current:
            out[current] += line + "\n"
    return {k: v for k, v in out.items() if re.search(pattern, k)}


HGMMA = re.compile(r"HGMMA\.64x(\d+)x\d+\.F32\S*\s+R(\d+),")
REGISTER = re.compile(r"\bR(\d+)\b")


def accumulator_hazards(name, body):
    """Instructions that touch a wgmma accumulator register while MMAs may still be in flight:
    from the head of the loop around the first HGMMA to the first full wait (DEPBAR.LE gsb0, 0x0)
    after the last HGMMA, in program order. An m64nN F32 accumulator is N/2 consecutive registers from D's first."""
    lines = body.splitlines()
    mma = [(i, HGMMA.search(line)) for i, line in enumerate(lines)]
    mma = [(i, m) for i, m in mma if m]
    if not mma:
        return []
    acc = set()
    for _, m in mma:
        first = int(m.group(2))
        acc.update(range(first, first + int(m.group(1)) // 2))
    last = mma[-1][0]
    end = next((i for i in range(last + 1, len(lines)) if "WARPGROUP.DEPBAR.LE gsb0, 0x0" in lines[i]), None)
    if end is None:
        return [f"{name}: no WARPGROUP.DEPBAR.LE gsb0, 0x0 after its last HGMMA: the epilogue never waits for the MMAs"]

    # The loop around the first MMA (its innermost back-edge: a branch after the first HGMMA to an
    # address before it) is in the window from its head to its back-edge: the MMAs one iteration
    # leaves in flight (wait_group 1) run on at the top of the next and after an in-loop wait that
    # only the last k-tile takes. The window ends at the later of that back-edge and the first full
    # wait after the last HGMMA.
    def address(line):
        m = re.search(r"/\*([0-9a-f]{4,})\*/", line)
        return int(m.group(1), 16) if m else None

    start, stop = mma[0][0], end
    first_address = address(lines[start])
    loop = None  # (head address, back-edge line)
    for i in range(mma[0][0], len(lines)):
        b = re.search(r"\bBRA\b.*?0x([0-9a-f]+)\s*;", lines[i])
        if b and first_address is not None and int(b.group(1), 16) <= first_address:
            if loop is None or int(b.group(1), 16) > loop[0]:
                loop = (int(b.group(1), 16), i)
    if loop is not None:
        start = next((j for j, line in enumerate(lines) if address(line) == loop[0]), start)
        stop = max(end, loop[1])
    problems = []
    for i in range(start, stop):
        line = lines[i]
        if "HGMMA" in line or "WARPGROUP" in line:
            continue
        code = line.split("*/", 1)[-1].split(";", 1)[0]  # "/*addr*/ OPCODE operands ; /*encoding*/"
        touched = sorted({int(r) for r in REGISTER.findall(code)} & acc)
        if touched:
            addr = re.search(r"/\*([0-9a-f]{4,})\*/", line)
            problems.append(
                f"{name}: {code.strip()} at {addr.group(1) if addr else '?'} touches accumulator "
                f"R{touched[0]} while MMAs may be in flight (window: the MMA loop, then to the final DEPBAR gsb0, 0x0)"
            )
    return problems


def self_test(paths):
    """The hazard rule must flag each SASS with a hazard (the binary that had the bug; synthetic edits)."""
    for path in paths:
        text = open(path, encoding="utf-8").read()
        found = [p for name, body in kernels_of(text, r"kernel").items() for p in accumulator_hazards(name, body)]
        if not found:
            print(f"FAIL: the accumulator rule does not flag {path}, the SASS of a binary with the hazard")
            sys.exit(1)
        print(f"the accumulator rule flags {len(found)} instructions in {os.path.basename(path)}, e.g.\n  {found[0]}")


def main():
    if sys.argv[1] == "--self-test":
        self_test(sys.argv[2:])
        return
    arch, libs = sys.argv[1], sys.argv[2:]
    cuobjdump, nvdisasm = find_tool("cuobjdump"), find_tool("nvdisasm")
    if not cuobjdump or not nvdisasm:
        print("SKIPPED: cuobjdump/nvdisasm not found (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
        sys.exit(77)
    env = dict(os.environ, PATH=os.path.dirname(nvdisasm) + os.pathsep + os.environ.get("PATH", ""))
    failures = []
    for lib in libs:
        sass = subprocess.run([cuobjdump, "-sass", "-arch", arch, lib], capture_output=True, text=True, env=env).stdout
        usage = subprocess.run(
            [cuobjdump, "-res-usage", "-arch", arch, lib], capture_output=True, text=True, env=env
        ).stdout
        if "Function" not in sass:
            print(f"SKIPPED: {lib} carries no {arch} machine code (built for other architectures)")
            sys.exit(77)
        for name, body in kernels_of(usage, r"kernel").items():
            m = re.search(r"LOCAL:(\d+)", body)
            if m and int(m.group(1)) != 0:
                failures.append(f"{name}: uses {m.group(1)} bytes of local memory (spills)")
        # Each ladder level's kernels live in an anonymous namespace named after its file.
        rules = {
            "l0_naive_fp32_cu": [],
            "l1_tiled_fp32_cu": [],
            "l2_wmma_bf16_cu": ["HMMA"],
            "l3_mma_cp_async_bf16_cu": ["HMMA", "LDGSTS", "LDSM"],
            "l4_wgmma_tma_bf16_cu": ["HGMMA.64x128x16", "UTMALDG"],
            # level 5's claims: m64n256k16, registers moved between warpgroups, one MMA group
            # left in flight (wait_group 1 = DEPBAR.LE gsb0, 0x1)
            "l5_wgmma_warp_specialized_bf16_cu": [
                "HGMMA.64x256x16",
                "UTMALDG",
                "USETMAXREG",
                "WARPGROUP.DEPBAR.LE gsb0, 0x1",
            ],
        }
        hopper = ["l4_wgmma_tma_bf16_cu", "l5_wgmma_warp_specialized_bf16_cu"]
        expected = {"sm_90a": hopper}.get(arch, [k for k in rules if k not in hopper])
        for pattern, wanted in rules.items():
            found = kernels_of(sass, pattern)
            if not found and "gemm" in os.path.basename(lib) and pattern in expected:
                failures.append(f"{lib}: no kernel matching {pattern} in {arch} SASS")
            for name, body in found.items():
                for op in wanted:
                    if op not in body:
                        failures.append(f"{name}: no {op} in its {arch} SASS")
                if not wanted and re.search(r"\b(HMMA|HGMMA|IMMA|DMMA)", body):
                    failures.append(f"{name}: a CUDA-core level contains HMMA")
                if pattern in hopper:
                    failures += accumulator_hazards(name, body)
        # STREAM: the vector copy issues the 4 loads of a grid-stride step before its second store
        # (the memory-level parallelism the unrolled loop is written for; the scheduler may slot
        # the first store in early).
        for name, body in kernels_of(sass, r"copy_kernelIfLb1E|copy16_kernel").items():
            second_store = body.find("STG.E.128", body.find("STG.E.128") + 1)
            if body[:second_store].count("LDG.E.128") < 4:
                failures.append(f"{name}: fewer than 4 16-byte loads before the second store")
        print(f"{os.path.basename(lib)} ({arch}): {len(kernels_of(usage, 'kernel'))} kernels checked")
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("machine code as intended; no local-memory spills")


if __name__ == "__main__":
    main()
