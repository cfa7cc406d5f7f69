#!/usr/bin/env python3
"""What NVML clock sampling costs the launch cases, measured on the GPU (scripts/gpu_check.sh runs it).

triaudit_launch's host-timed cases (enqueue, launch + synchronize, synchronisation calls) are the ones
a host thread's NVML calls could slow. They run with TRIAUDIT_CLOCK_SAMPLING=off, =regions (the
default: NVML read outside the timed regions) and =thread (0.3.0: a thread reading every 5 ms,
inside them), interleaved in two rounds so a drift of the machine does not favour one. Printed per
case: each mode's mean time per operation, regions and thread against off, and off's own spread
between the rounds (the noise the comparison stands on). The claim to check: regions costs < 0.5 %.

Usage: clock_sampling_ab.py LAUNCH_EXECUTABLE OUTDIR      (exit 0; 77 without a GPU)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

MODES = ("off", "regions", "thread")
ARGS = ["--benchmark_filter=^launch/(empty|sync)/", "--min-time=0.1", "--warmup-s=0.1", "--benchmark_repetitions=2"]


def per_case_means(path: Path) -> dict[str, float]:
    """Mean seconds_per_op of each case over its repetitions (error and skipped rows left out)."""
    rows = json.loads(path.read_text()).get("benchmarks", [])
    sums: dict[str, list[float]] = {}
    for r in rows:
        if r.get("run_type", "iteration") != "iteration" or r.get("error_occurred") or "seconds_per_op" not in r:
            continue
        name = r.get("run_name", r["name"]).removesuffix("/manual_time")
        sums.setdefault(name, []).append(float(r["seconds_per_op"]))
    return {k: sum(v) / len(v) for k, v in sums.items()}


def compare(rounds: list[dict[str, dict[str, float]]]) -> list[str]:
    """rounds[i][mode][case] -> lines: per case the modes' means and the differences, in %."""
    cases = sorted(set.intersection(*(set(r[m]) for r in rounds for m in MODES))) if rounds else []
    lines = [f"{'case':<40} {'off':>10} {'regions':>10} {'thread':>10} {'regions':>9} {'thread':>9} {'off noise':>9}"]
    worst = 0.0
    for c in cases:
        mean = {m: sum(r[m][c] for r in rounds) / len(rounds) for m in MODES}
        offs = [r["off"][c] for r in rounds]
        noise = (max(offs) - min(offs)) / mean["off"] * 100
        reg = (mean["regions"] / mean["off"] - 1) * 100
        thr = (mean["thread"] / mean["off"] - 1) * 100
        worst = max(worst, reg)
        lines.append(
            f"{c:<40} {mean['off'] * 1e6:9.3f}u {mean['regions'] * 1e6:9.3f}u {mean['thread'] * 1e6:9.3f}u "
            f"{reg:+8.2f}% {thr:+8.2f}% {noise:8.2f}%"
        )
    if cases:
        verdict = "under" if worst < 0.5 else "NOT under"
        lines.append(f"clock sampling outside the regions costs at most {worst:+.2f} % here: {verdict} 0.5 %")
    else:
        lines.append("no case measured in every mode: nothing to compare")
    return lines


def main() -> int:
    exe, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    rounds = []
    for n in range(2):
        got = {}
        for mode in MODES:
            f = out / f"launch_clock_sampling_{mode}_{n}.json"
            env = dict(os.environ, TRIAUDIT_CLOCK_SAMPLING=mode)
            p = subprocess.run([str(exe), *ARGS, f"--benchmark_out={f}", "--force"], env=env, capture_output=True)
            if p.returncode == 77:
                print("no GPU: nothing to compare")
                return 77
            if p.returncode != 0 or not f.exists():
                print(
                    f"{exe.name} with TRIAUDIT_CLOCK_SAMPLING={mode} exited {p.returncode}: {p.stderr.decode()[-300:]}"
                )
                return 0
            got[mode] = per_case_means(f)
        rounds.append(got)
    print("\n".join(compare(rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
