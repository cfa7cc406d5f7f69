#!/usr/bin/env python3
"""On a GPU: a sustained BF16 GEMM (1.5 s window) reports energy from NVML's counter: joules_per_op
> 0, flops_per_joule > 0, and a mean power between an idle board's and the enforced power limit.
Without a GPU: exit 77 (CTest: skipped). Boards without the counter must say so, never report 0.
Usage: check_energy.py TRIAUDIT_GEMM
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


if __name__ == "__main__":
    main()
