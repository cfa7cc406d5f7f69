#!/usr/bin/env python3
"""Build checks that need no GPU: read the machine code of the kernel libraries.

- The Tensor Core ladder levels contain the matrix instructions meant (HMMA; level 3 also
  LDGSTS = cp.async and LDSM = ldmatrix; levels 4-5 HGMMA of their tile shape and UTMALDG = TMA,
  level 5 also USETMAXREG = setmaxnreg and a wait that leaves one MMA group in flight); the
  CUDA-core levels contain none.
- STREAM's vector copy and the SM copy of `triaudit_memcpy` have 4 16-byte loads in flight per thread (all issued before its 2nd store).
- No hot kernel uses local memory (register spills): cuobjdump -res-usage reports LOCAL:0.
- Levels 4-5: on every path through the control flow from an HGMMA to an instruction that touches
  the wgmma accumulator registers there is a `WARPGROUP.DEPBAR.LE gsb0, 0x0`. HGMMA has no
  scoreboard on its output registers, so an epilogue that ptxas hoists above the final wait reads
  a D that misses the last k-tile (it happened: level 5's F2FP conversions sat above the wait; the
  SASS of that binary is kept in tests/data/ and `--self-test` proves the rule fails on it, and on
  synthetic edits: a write at the loop's top, a last k-tile sent to the partial wait, an R2P that
  rewrites the loop's exit predicate between the waits and the exit).
- Level 5: its launch register count covers the setmaxnreg split (1 warpgroup down to its
  USETMAXREG.DEALLOC count, 2 up to the ALLOC count): fewer, and the increase spins forever.

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
PREDICATE = re.compile(r"\b(U?P[0-6])\b")
# Instructions that write the whole predicate register (PR or UPR) without naming a predicate:
# R2P PR, R12, 0x7f sets P0-P6 from a register's bits.
WHOLE_PREDICATE_WRITE = re.compile(r"^(R2P|R2UP)\b|^\S+\s+U?PR\b")
FULL_WAIT = "WARPGROUP.DEPBAR.LE gsb0, 0x0"


class Instruction:
    """One SASS instruction: address, guard predicate (name, negated) or None, opcode, operands."""

    def __init__(self, line):
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;", line)
        self.address = int(m.group(1), 16)
        code = m.group(2).strip()
        self.guard = None
        g = re.match(r"@(!?)(U?P[0-6T])\s+(.*)", code)
        if g:
            code = g.group(3)
            if g.group(2) != "PT":
                self.guard = (g.group(2), g.group(1) == "!")
            elif g.group(1) == "!":
                self.guard = ("PT", True)  # never executes
        self.code = code
        self.opcode = code.split()[0] if code else ""
        self.operands = code[len(self.opcode) :]

    def registers(self):
        """Registers read or written; a 64/128-bit operation covers the next ones too (conservative)."""
        width = 4 if ".128" in self.opcode else 2 if ".64" in self.opcode else 1
        return {r + w for r in map(int, REGISTER.findall(self.operands)) for w in range(width)}


def instructions_of(body):
    return [Instruction(line) for line in body.splitlines() if re.search(r"/\*[0-9a-f]{4,}\*/\s*\S", line)]


def successors(code, i, facts):
    """(next index, facts on that edge) for instruction i, dropping edges the known predicates rule out.
    facts: frozenset of (predicate, value). A predicate an instruction mentions (other than in its
    guard) may be rewritten by it: facts about it are forgotten; an instruction that writes the whole
    predicate register (R2P PR, ...) names none and rewrites them all: every fact is forgotten."""
    ins = code[i]
    at = {c.address: j for j, c in enumerate(code)}
    known = dict(facts)
    mentioned = set(PREDICATE.findall(ins.operands))
    if WHOLE_PREDICATE_WRITE.search(ins.code):
        mentioned = {p for p, _ in facts}
    after = frozenset((p, v) for p, v in facts if p not in mentioned)

    def with_guard(value):  # the guard evaluates to `value` on this edge
        if ins.guard is None:
            return after if value else None
        name, negated = ins.guard
        if name == "PT":
            return after if not value else None
        want = value != negated  # the predicate's own value
        if name in known and known[name] != want:
            return None
        return after | {(name, want)}

    out = []
    if ins.opcode.startswith("BRA"):
        target = re.search(r"0x([0-9a-f]+)\s*$", ins.operands.strip())
        two_conditions = bool(re.match(r"\s*!?U?P[0-6T]\s*,", ins.operands))  # BRA P0, 0x...: a second condition
        taken = with_guard(True)
        if target and taken is not None and int(target.group(1), 16) in at:
            out.append((at[int(target.group(1), 16)], taken))
        if ins.guard is not None or two_conditions:
            fall = after if two_conditions else with_guard(False)
            if fall is not None and i + 1 < len(code):
                out.append((i + 1, fall))
    elif ins.opcode in ("EXIT", "RET", "RET.REL", "RET.ABS", "KILL"):
        fall = with_guard(False) if ins.guard is not None else None
        if fall is not None and i + 1 < len(code):
            out.append((i + 1, fall))
    elif ins.opcode.startswith(("BRX", "JMX")):
        out.append((-1, after))  # an indirect branch: cannot be followed
    elif i + 1 < len(code):
        out.append((i + 1, after))
    return out


def accumulator_hazards(name, body):
    """Instructions that touch a wgmma accumulator register while MMAs may still be in flight: every
    path through the control flow from an HGMMA to an instruction that touches its accumulator must
    pass a full wait (WARPGROUP.DEPBAR.LE gsb0, 0x0) first. HGMMA has no scoreboard on its output
    registers. Paths are followed with what the branches taken say of their predicates (the last
    k-tile takes the full wait inside the loop and the loop exits on the same predicate), so only
    paths that can run are judged. An m64nN F32 accumulator is N/2 consecutive registers from D's first."""
    code = instructions_of(body)
    acc = set()
    for ins in code:
        m = HGMMA.search(ins.opcode + ins.operands)
        if m:
            acc.update(range(int(m.group(2)), int(m.group(2)) + int(m.group(1)) // 2))
    if not acc:
        return []
    if not any(FULL_WAIT in c.code for c in code):
        return [f"{name}: no {FULL_WAIT} anywhere: the epilogue never waits for the MMAs"]
    problems, reported = [], set()
    start = [(i, frozenset()) for i, c in enumerate(code) if c.opcode.startswith("HGMMA")]
    seen = set(start)
    todo = list(start)
    while todo:
        i, facts = todo.pop()
        for j, edge in successors(code, i, facts):
            if j < 0:
                problems.append(f"{name}: an indirect branch at {code[i].address:04x} while MMAs are in flight")
                continue
            ins = code[j]
            runs = ins.guard is None or dict(edge).get(ins.guard[0], None) == (not ins.guard[1])
            maybe_runs = ins.guard is None or dict(edge).get(ins.guard[0], not ins.guard[1]) == (not ins.guard[1])
            if ins.guard == ("PT", True):
                runs = maybe_runs = False
            if FULL_WAIT in ins.code and runs:
                continue  # every MMA before it is done on this path
            if maybe_runs and not ins.opcode.startswith(("HGMMA", "WARPGROUP")):
                touched = sorted(ins.registers() & acc)
                if touched and j not in reported:
                    reported.add(j)
                    problems.append(
                        f"{name}: {ins.code} at {ins.address:04x} touches accumulator R{touched[0]} on a path "
                        f"from an HGMMA that passes no {FULL_WAIT}"
                    )
            if (j, edge) not in seen:
                seen.add((j, edge))
                todo.append((j, edge))
    return problems


def register_split(name, usage_body, sass_body, warpgroups):
    """setmaxnreg moves registers between warpgroups inside the CTA's allocation: the launch register
    count times the threads must cover what the warpgroups ask for, or the increase spins forever.
    warpgroups: (deallocating, allocating) warpgroup counts of the kernel's source."""
    reg = re.search(r"REG:(\d+)", usage_body)
    dealloc = re.findall(r"USETMAXREG\.DEALLOC\S*\s+(0x[0-9a-f]+|\d+)", sass_body)
    alloc = re.findall(r"USETMAXREG\.(?:TRY_)?ALLOC\S*\s+(?:U?P\d,\s*)?(0x[0-9a-f]+|\d+)", sass_body)
    if not reg or not dealloc or not alloc:
        return [f"{name}: no register count or no USETMAXREG pair to check"]
    down, up = int(dealloc[0], 0), int(alloc[0], 0)
    threads = 128 * (warpgroups[0] + warpgroups[1])
    need = 128 * (warpgroups[0] * down + warpgroups[1] * up)
    have = int(reg.group(1)) * threads
    problems = []
    if have < need:
        problems.append(
            f"{name}: launched with {reg.group(1)} registers per thread ({have} for the CTA), but its warpgroups "
            f"ask for {warpgroups[0]} x 128 x {down} + {warpgroups[1]} x 128 x {up} = {need}: setmaxnreg would spin forever"
        )
    if have > 65536:
        problems.append(f"{name}: {reg.group(1)} registers x {threads} threads exceed the SM's 65536: it cannot launch")
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
        # The register rule on the same level-5 code: 168 registers cover 1 x 40 + 2 x 232 per
        # 128 threads exactly; 160 (what a later ptxas might choose) must be refused.
        for name, body in kernels_of(text, r"l5_wgmma").items():
            if register_split(name, "REG:168", body, (1, 2)) or not register_split(name, "REG:160", body, (1, 2)):
                print(f"FAIL: the register rule misjudges {name} in {path}")
                sys.exit(1)


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
        usages = kernels_of(usage, r"kernel")
        for name, body in usages.items():
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
                if pattern == "l5_wgmma_warp_specialized_bf16_cu":
                    failures += register_split(name, usages.get(name, ""), body, (1, 2))
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
