"""One `torch.matmul` figure beside the suite: BF16 8192^3 on the local GPU, written as Google
Benchmark JSON (`gemm/torch/bf16/layout:nn/m:8192/n:8192/k:8192`) so the report puts it next to
cuBLASLt. Only where PyTorch is installed; CUDA events, warm-up, 5 repetitions, the result checked
against an FP64 product at sampled elements.

    python -m triaudit.runner.torch_anchor OUT.json [--size 8192]
Exit codes: 0 written, 77 no PyTorch or no GPU (nothing written), 1 verification failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="triaudit-torch-anchor")
    p.add_argument("out", type=Path)
    p.add_argument("--size", type=int, default=8192)
    p.add_argument("--repetitions", type=int, default=5)
    a = p.parse_args(argv)
    if a.out.exists():
        print(f"refusing to overwrite {a.out}", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print("no PyTorch: no torch.matmul anchor")
        return 77
    if not torch.cuda.is_available():
        print("PyTorch sees no CUDA device: no torch.matmul anchor")
        return 77
    n = a.size
    g = torch.Generator(device="cuda").manual_seed(1)
    x = (torch.rand(n, n, device="cuda", generator=g) * 2 - 1).to(torch.bfloat16)
    y = (torch.rand(n, n, device="cuda", generator=g) * 2 - 1).to(torch.bfloat16)
    out = torch.matmul(x, y)
    rows = torch.randint(0, n, (256,), device="cuda", generator=g)
    cols = torch.randint(0, n, (256,), device="cuda", generator=g)
    ref = (x[rows].double() * y[:, cols].double().T).sum(dim=1)
    scale = (x[rows].double().abs() * y[:, cols].double().abs().T).sum(dim=1)
    err = ((out[rows, cols].double() - ref).abs() / scale).max().item()
    if not err <= 1e-2:
        print(f"torch.matmul BF16 failed its check: normwise error {err:.3g}", file=sys.stderr)
        return 1
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        torch.matmul(x, y, out=out)
    runs = []
    flops = 2.0 * n**3
    name = f"gemm/torch/bf16/layout:nn/m:{n}/n:{n}/k:{n}"
    for rep in range(a.repetitions):
        iters = 20
        start.record()
        for _ in range(iters):
            torch.matmul(x, y, out=out)
        stop.record()
        stop.synchronize()
        t = start.elapsed_time(stop) / 1e3 / iters
        runs.append(
            {
                "name": name,
                "run_name": name,
                "run_type": "iteration",
                "repetitions": a.repetitions,
                "repetition_index": rep,
                "threads": 1,
                "iterations": iters,
                "real_time": t * 1e6,
                "cpu_time": t * 1e6,
                "time_unit": "us",
                "flops": flops / t,
            }
        )
    props = torch.cuda.get_device_properties(0)
    context = {
        "executable": "triaudit.runner.torch_anchor",
        "gpu_available": "true",
        "gpu_name": torch.cuda.get_device_name(0),
        "compute_capability": f"{props.major}.{props.minor}",
        "torch_version": torch.__version__,
        "cuda_runtime_version": str(torch.version.cuda),
        "verification": f"normwise error {err:.3g} at 256 samples",
    }
    a.out.write_text(json.dumps({"context": context, "benchmarks": runs}, indent=1))
    print(f"torch.matmul BF16 {n}^3: {sorted(r['flops'] for r in runs)[len(runs) // 2] / 1e12:.1f} TFLOP/s -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
