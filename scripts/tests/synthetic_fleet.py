"""Synthetic fleets for tests: per-GPU Google Benchmark JSON in the shape whole-node mode writes,
a stand-in `nvidia-smi` and stand-in executables. Made-up numbers, not measurements: every file
made here has "synthetic" in its path and its context says so.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import synthetic


def gpu_context(
    host: str,
    index: int,
    uuid: str,
    card: str = "NVIDIA H100 80GB HBM3",
    driver: str = "550.54.15",
    executable: str = "triaudit_stream",
) -> dict:
    return {
        "host_name": host,
        "executable": executable,
        "gpu_available": "true",
        "gpu_name": card,
        "gpu_uuid": uuid,
        "gpu_pci_bus_id": f"00000000:{0x18 + index:02X}:00.0",
        "driver_version": driver,
        "host": host,
        "gpu_index": str(index),
        "siblings_loaded": "true",
        "synthetic": "true (test fixture, not a measurement)",
        "triaudit_provenance": "synthetic",
    }


def stream_entries(
    gbps: float,
    reps: int = 5,
    jitter: float = 0.002,
    cases=("stream/triad/fp32/cache:cold/bytes:1073741824", "stream/copy/fp32/cache:cold/bytes:1073741824"),
) -> list[dict]:
    out = []
    for case in cases:
        arrays = 3 if "/triad/" in case or "/add/" in case else 2
        nbytes = int(case.rsplit(":", 1)[1])
        for r in range(reps):
            bw = gbps * 1e9 * (1 + jitter * (r - (reps - 1) / 2))
            out.append(
                synthetic._entry(
                    case,
                    arrays * nbytes / bw,
                    r,
                    reps,
                    bytes_per_second=bw,
                    bytes_per_op=float(arrays * nbytes),
                    ops_per_region=1.0,
                    working_set_bytes=float(arrays * nbytes),
                )
            )
    return out


def gemm_entries(
    tflops: float, reps: int = 5, case: str = "gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192"
) -> list[dict]:
    flop = 2 * 8192**3
    return [
        synthetic._entry(case, flop / (tflops * 1e12), r, reps, flops=tflops * 1e12 * (1 + 0.001 * r))
        for r in range(reps)
    ]


def write_gpu_result(
    root: Path, host: str, index: int, uuid: str, entries: list[dict], folder: str | None = None, **ctx
) -> Path:
    """root/<folder or host>/triaudit_stream.gpu<i>.synthetic.json, one GPU's result file."""
    context = gpu_context(host, index, uuid, **ctx)
    name = context["executable"]
    return synthetic.write(
        root / (folder or host) / f"{name}.gpu{index}.synthetic.json", {"context": context, "benchmarks": entries}
    )


def uuid_of(host_no: int, index: int, family: int = 0) -> str:
    return f"GPU-5e7e7e7e-{host_no:04d}-{index:04d}-{family:04x}-000000000000"


# --- stand-ins for a GPU node ----------------------------------------------------------------

FAKE_EXE = r"""#!{python}
# Synthetic stand-in for a triaudit executable (test fixture): writes Google Benchmark JSON
# whose context echoes what the runner set, and when it started and ended.
import json, os, socket, sys, time
out = next(a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--benchmark_out="))
visible = os.environ.get("CUDA_VISIBLE_DEVICES")
name = os.path.basename(sys.argv[0])
if os.environ.get("SYNTHETIC_NO_GPU") or visible == "":
    print(name + ": no CUDA device (synthetic: no device here): every case is reported as skipped; exit code 77")
    json.dump({{"context": {{"gpu_available": "false", "gpu_unavailable_reason": "synthetic: no device here"}},
               "benchmarks": [{{"name": "stream/copy/fp32/cache:cold/bytes:1048576/manual_time", "run_type": "iteration",
                               "error_occurred": True, "error_message": "skipped: no CUDA device (synthetic)",
                               "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "us"}}]}}, open(out, "w"))
    sys.exit(77)
start = time.time()
slow = name == os.environ.get("SYNTHETIC_SLOW_EXE")
time.sleep(60 if slow else float(os.environ.get("SYNTHETIC_SLEEP_S", "0.5")))
fail = os.environ.get("SYNTHETIC_FAIL_UUID")
ctx = {{"gpu_available": "true", "gpu_name": "Synthetic GPU", "gpu_uuid": os.environ.get("SYNTHETIC_REPORT_UUID", visible),
       "host": socket.gethostname(), "gpu_index": os.environ.get("TRIAUDIT_GPU_INDEX", "(unset)"),
       "siblings_loaded": os.environ.get("TRIAUDIT_SIBLINGS_LOADED", "false"), "cuda_visible_devices": visible,
       "argv": " ".join(sys.argv[1:]), "started": start, "ended": time.time(), "synthetic": "true"}}
bench = [{{"name": "stream/copy/fp32/cache:cold/bytes:1048576/manual_time", "run_name": "stream/copy/fp32/cache:cold/bytes:1048576/manual_time",
          "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 1,
          "real_time": 1.0, "cpu_time": 1.0, "time_unit": "us", "bytes_per_second": 2.0e12,
          "bytes_per_op": 2097152.0, "ops_per_region": 1.0, "working_set_bytes": 2097152.0}}]
json.dump({{"context": ctx, "benchmarks": bench}}, open(out, "w"))
print("stream/copy/fp32/cache:cold/bytes:1048576/manual_time 1.0 us")
sys.exit(1 if fail and fail == visible else 0)
"""


def _executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def fake_build(root: Path, names=("triaudit_stream", "triaudit_gemm", "triaudit_allreduce")) -> Path:
    """root/synthetic-build/benchmarks/<x>/<name>: stand-in executables (not the real suite)."""
    build = root / "synthetic-build"
    for n in names:
        _executable(build / "benchmarks" / n.removeprefix("triaudit_") / n, FAKE_EXE.format(python=sys.executable))
    return build


def fake_nvidia_smi(root: Path, gpus: list[tuple[int, str, str, str]]) -> Path:
    """A stand-in nvidia-smi printing `index, uuid, pci.bus_id, name` lines for the given GPUs."""
    lines = "".join(f"{i}, {u}, {b}, {n}\n" for i, u, b, n in gpus)
    return _executable(root / "synthetic-nvidia-smi", f"#!/bin/sh\ncat <<'EOF'\n{lines}EOF\n")
