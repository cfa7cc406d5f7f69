"""A TEST DOUBLE of triaudit_soak (benchmarks/soak/soak_benchmark.cpp) for `triaudit soak` on a
machine without a GPU: a stand-in executable that takes the real one's flags and writes what the
real one writes — a result file case by case (<out>.partial, renamed when whole) and a hash log
(<out>.hashes) in its record format — from synthetic figures on a virtual clock (window w of a
soak begun at --soak-start-unix ends at start + (w + 1) x --window-s), so a six-hour soak takes a
second. Not a measurement: every context says "synthetic".

Faults are asked for through the environment (each a comma-separated list):
  SYNTHETIC_FLIP=<uuid>:<window>:<tile>:<bit>   one GEMM of that window differed in that tile
  SYNTHETIC_GOLDEN_FLIP=<uuid>:<tile>           that GPU's first output differs in that tile
  SYNTHETIC_FALL=<uuid>:<window>:<fraction>     the GEMM rate falls from that window, power steady
  SYNTHETIC_XID=<uuid>:<window>                 a critical XID during that window
  SYNTHETIC_STOP_AFTER=<n>                      exit 137 after n windows, the result file left .partial
  SYNTHETIC_NO_GPU=1                            no CUDA device (exit 77)
  SYNTHETIC_NO_GPU_UUID=<uuid>                  that GPU only: CUDA cannot use it (exit 77)
  SYNTHETIC_REPORT_UUID=<uuid>                  say another GPU's UUID (a mispinned process)
  SYNTHETIC_WINDOW_SLEEP_S=<s>                  real seconds per window (default 0)
  SYNTHETIC_ARGV_LOG=<file>                     each invocation's argv appended as a JSON line
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

DOUBLE = r"""#!{python}
# TEST DOUBLE of triaudit_soak (scripts/tests/soak_double.py): synthetic, not a measurement.
import json, os, sys, time
sys.path.insert(0, {tests!r})
import synthetic_soak as S
from soak_hash_reference import combined

args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
out = args["benchmark_out"]
if os.environ.get("SYNTHETIC_ARGV_LOG"):
    with open(os.environ["SYNTHETIC_ARGV_LOG"], "a") as f:
        f.write(json.dumps(sys.argv[1:]) + "\n")
visible = os.environ.get("CUDA_VISIBLE_DEVICES")
unusable = (visible or "").split(",")[0] in os.environ.get("SYNTHETIC_NO_GPU_UUID", "").split(",")
if os.environ.get("SYNTHETIC_NO_GPU") or visible == "" or unusable:
    print("triaudit_soak: no CUDA device (synthetic: no device here): every case is reported as skipped; exit code 77")
    sys.exit(77)
uuid = visible.split(",")[0] if visible else "GPU-synthetic"
said_uuid = os.environ.get("SYNTHETIC_REPORT_UUID") or uuid  # the GPU the double says it ran on
index = int(os.environ.get("TRIAUDIT_GPU_INDEX", "0"))
first, n = int(args.get("first-window", 0)), int(args["windows"])
window_s, start = float(args["window-s"]), float(args["soak-start-unix"])
peer = int(args.get("peer-device", -1)) >= 0

def faults(name, width):
    got = []
    for part in filter(None, os.environ.get(name, "").split(",")):
        fields = part.split(":")
        if fields[0] == uuid:
            got.append(fields[1:width])
    return got

flips = {{int(w): (int(t), int(b)) for w, t, b in faults("SYNTHETIC_FLIP", 4)}}
falls = [(int(w), float(f)) for w, f in faults("SYNTHETIC_FALL", 3)]
xids = {{int(w) for (w,) in faults("SYNTHETIC_XID", 2)}}
golden = S.golden_tiles()
for (t,) in faults("SYNTHETIC_GOLDEN_FLIP", 2):
    golden[int(t)] = S.flipped_tile_hash(int(t), 0)
stop_after = int(os.environ.get("SYNTHETIC_STOP_AFTER", "0"))
loads = ["gemm", "triad", "h2d", "d2h"] + (["p2p"] if peer else [])

ctx = S.context(said_uuid, index, soak_windows=str(n), soak_first_window=str(first), soak_window_s=str(window_s),
                soak_start_unix_s=str(start), soak_hash_log=out + ".hashes")
partial = open(out + ".partial", "w")
partial.write('{{"context": ' + json.dumps(ctx) + ', "benchmarks": [')
partial.flush()
hashes = open(out + ".hashes", "w")
def log(record):
    hashes.write(json.dumps(record) + "\n")
    hashes.flush()
log(S.reference_record(said_uuid, start + first * window_s + 1.0, first, golden))
written = 0
for w in range(first, first + n):
    time.sleep(float(os.environ.get("SYNTHETIC_WINDOW_SLEEP_S", "0")))
    w0, w1 = start + w * window_s, start + (w + 1) * window_s
    fall = max([f for at, f in falls if w >= at], default=0.0)
    rates = {{"gemm": S.RATES["gemm"] * (1 - fall) * (1 + 0.001 * ((w * 7) % 3 - 1))}}
    devs = {{}}
    if w in flips:
        t, b = flips[w]
        devs["gemm"] = [S.deviation(1000 + w, w0 + window_s / 2, t, S.flipped_tile_hash(t, b), golden[t],
                                    "tile %d: 1 of 1024 elements differ from the first output" % t)]
    log(S.window_record(w, w0, w1, loads, rates, devs, gemm_hash=combined(golden)))
    for k in loads:
        err = ""
        if k == "gemm" and w in xids:
            err = "health: GPU 0: critical XID 79 during the case: its figure is not trusted"
        elif k == "gemm" and w in flips:
            err = "verification failed: sdc: 1 of 100 GEMMs in window %d differed, bit for bit" % w
        e = S.entry(S.CASES[k], w, w1, start, rates.get(k, S.RATES[k]), error=err)
        partial.write(("," if written else "") + json.dumps(e))
        written += 1
    partial.flush()
    if stop_after and w - first + 1 >= stop_after:
        sys.exit(137)  # as a node that lost power leaves it: .partial, no rename
partial.write("]}}")
partial.close()
os.replace(out + ".partial", out)
print("soak/gemm/... synthetic windows done")
sys.exit(1 if flips or xids else 0)
"""


def fake_soak_build(root: Path) -> Path:
    """root/synthetic-build/benchmarks/soak/triaudit_soak: the double, where `triaudit soak` looks."""
    exe = root / "synthetic-build" / "benchmarks" / "soak" / "triaudit_soak"
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text(DOUBLE.format(python=sys.executable, tests=str(TESTS)))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return root / "synthetic-build"


def fake_nvidia_smi_on_path(root: Path, gpus: list[tuple[int, str, str, str]]) -> Path:
    """A folder holding a stand-in `nvidia-smi` listing `gpus`, to put first on PATH."""
    folder = root / "synthetic-bin"
    folder.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{i}, {u}, {b}, {n}\n" for i, u, b, n in gpus)
    smi = folder / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\ncat <<'EOF'\n{lines}EOF\n")
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder
