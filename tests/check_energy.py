#!/usr/bin/env python3
"""On a GPU: a sustained BF16 GEMM (1.5 s window) reports energy from NVML's counter: joules_per_op
> 0, flops_per_joule > 0, and a mean power between an idle board's and the enforced power limit.
With TRIAUDIT_MEMCPY too: a pinned 256 MiB host-to-device copy, whose regions also queue one
untimed warm-up copy, reports joules_per_op of one copy (about watts_mean x seconds_per_op), not of
two (the window's energy was once divided by the timed copies only).
Without a GPU: exit 77 (CTest: skipped). Boards without the counter must say so, never report 0.
Usage: check_energy.py TRIAUDIT_GEMM [TRIAUDIT_MEMCPY]
"""

import json
import os
import subprocess
import sys
import tempfile


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "energy.json")
        r = subprocess.run(
            [
                exe,
                "--families=ceiling",
                "--sustained-s=1.5",
                "--min-time=0.05",
                "--benchmark_filter=^gemm/ceiling/bf16/sustained",
                f"--benchmark_out={out}",
                "--benchmark_out_format=json",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if r.returncode == 77:
            print("SKIPPED: no CUDA device")
            sys.exit(77)
        if r.returncode != 0:
            print(f"FAIL: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
            sys.exit(1)
        data = json.load(open(out))
    ctx = data["context"]
    case = next(b for b in data["benchmarks"] if b.get("run_type", "iteration") == "iteration")
    label = case.get("label", "")
    if not str(ctx.get("energy_counter", "")).startswith("nvmlDevice"):
        if "unknown (NVML:" in label and "joules_per_op" not in case:
            print(f"energy counter not supported here, said so: {ctx.get('energy_counter')}")
            return
        print(f"FAIL: no counter, and the case does not say so: {label!r}")
        sys.exit(1)
    watts, jpo = case.get("watts_mean", 0.0), case.get("joules_per_op", 0.0)
    limit = (
        float(ctx.get("power_limit_enforced_w", "0") or 0)
        if str(ctx.get("power_limit_enforced_w", "")).isdigit()
        else 0.0
    )
    problems = []
    if not jpo > 0:
        problems.append(f"joules_per_op {jpo}")
    if not case.get("flops_per_joule", 0) > 0:
        problems.append(f"flops_per_joule {case.get('flops_per_joule')}")
    if not watts > 40:
        problems.append(f"watts_mean {watts} W: below an idle board under a GEMM")
    if limit and watts > 1.1 * limit:
        problems.append(f"watts_mean {watts} W above the enforced limit {limit} W")
    if problems:
        print("FAIL: " + "; ".join(problems) + f"\nlabel: {label}")
        sys.exit(1)
    print(
        f"energy: {watts:.0f} W mean (limit {limit:.0f} W), {jpo:.3f} J per GEMM, window {case.get('energy_window_s', 0):.2f} s"
    )
    if len(sys.argv) > 2:
        check_copy_energy(sys.argv[2])


def check_copy_energy(exe):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "copy.json")
        r = subprocess.run(
            [
                exe,
                "--min-time=1.5",
                "--benchmark_filter=^memcpy/h2d/pinned/bytes:268435456/",
                f"--benchmark_out={out}",
                "--benchmark_out_format=json",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if r.returncode != 0:
            print(f"FAIL: {exe} exit {r.returncode}\n{r.stdout}\n{r.stderr}")
            sys.exit(1)
        case = next(b for b in json.load(open(out))["benchmarks"] if b.get("run_type", "iteration") == "iteration")
    if "joules_per_op" not in case:
        print(f"copy: no energy figure, said so: {case.get('label', '')}")
        return
    ratio = case["joules_per_op"] / (case["watts_mean"] * case["seconds_per_op"])
    # The window also holds the gaps between regions: a little above 1; two copies per op: about 2.
    if not 0.8 < ratio < 1.5:
        print(f"FAIL: copy joules_per_op is {ratio:.2f}x watts_mean x seconds_per_op (one copy's energy expected)")
        sys.exit(1)
    print(f"copy energy: {case['joules_per_op']:.3f} J per 256 MiB copy ({ratio:.2f}x power x time)")


if __name__ == "__main__":
    main()
