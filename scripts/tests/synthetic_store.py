"""A small synthetic fleet for the results store's tests: several nights of whole-node runs
(synthetic_gate.py node_run) and the cases a reader must get right alike from the store and from
the JSON files: errors, missing cases, health counters that moved, a case two files of one run both
report (a conflict), a figure no card can produce, a file without its GPU's UUID (the manifest names
it), an incomplete run, a link that leads nowhere, a file cut off mid-entry, one GPU's `run`, and a
case described differently by two versions of an executable. Made-up numbers, not measurements:
every file says "synthetic" in its context.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import synthetic
from synthetic_gate import H100, node_run


def fleet(root: Path, nights: int = 2, hosts: int = 5) -> Path:
    """root/<host>/<stamp>-<host>/ for `hosts` hosts of 4 GPUs, `nights` nights, edge cases on top."""
    for n in range(nights):
        stamp = f"202601{n + 1:02d}T000000Z"
        for h in range(hosts):
            slow = {(h % 4, "hbm"): 0.8} if h == 1 else {}
            node_run(
                root,
                host=f"synthetic-node-{h}",
                gpus=4,
                stamp=stamp,
                seed=100 * n + h,
                scale=slow,
                errors={(2, "gemm_fp8"): "verification failed: 12 of 4096 outputs wrong"} if h == 2 else None,
                missing={(3, "d2d")} if h == 3 else None,
                counters={1: {"health_ecc_corrected": 2.0, "health_pcie_replays": 7.0}} if h == 4 else None,
            )
    last = f"202601{nights:02d}T000000Z"
    run0 = root / "synthetic-node-0" / f"{last}-synthetic-node-0"
    # A conflict: one GPU's case in two files of one run.
    shutil.copy(run0 / "triaudit_stream.gpu0.synthetic.json", run0 / "triaudit_stream.gpu0.again.synthetic.json")
    # A figure no card can produce (plausible.py): a triad at a thousand times the H100's memory.
    f = run0 / "triaudit_stream.gpu1.synthetic.json"
    data = json.loads(f.read_text())
    for e in data["benchmarks"]:
        e["bytes_per_second"] = e["bytes_per_second"] * 1000
    f.write_text(json.dumps(data))
    # A file that does not name its GPU's UUID: the manifest does.
    f = run0 / "triaudit_memcpy.gpu2.synthetic.json"
    data = json.loads(f.read_text())
    data["context"].pop("gpu_uuid")
    f.write_text(json.dumps(data))
    # A link that leads nowhere, and a file cut off in its last entry.
    os.symlink(run0 / "gone.json", run0 / "triaudit_launch.gpu9.synthetic.json")
    f = run0 / "triaudit_launch.gpu3.synthetic.json"
    text = f.read_text()
    f.write_text(text[: text.rindex("}", 0, len(text) - 3) - 5])
    # An incomplete run.
    run3 = root / "synthetic-node-3" / f"{last}-synthetic-node-3"
    m = json.loads((run3 / "manifest.json").read_text())
    m["complete"] = False
    (run3 / "manifest.json").write_text(json.dumps(m))
    # One GPU's `triaudit run` (no manifest GPU list, no node files), schema 1.
    single = root / "synthetic-card" / f"{last}-synthetic-single"
    entries = [synthetic.stream_run("triad", "fp32", "cold", 1 << 30, 3000.0 + r, r, 5, 4e12) for r in range(5)]
    ctx = synthetic.synthetic_context(H100) | {"host": "synthetic-single", "gpu_uuid": "GPU-synthetic-single-0"}
    synthetic.write(single / "triaudit_stream.synthetic.json", {"context": ctx, "benchmarks": entries})
    (single / "manifest.json").write_text(json.dumps({"started_utc": last, "complete": True, "synthetic": "true"}))
    # The same case described differently by two versions (schema 2 descriptions that disagree).
    old = root / "synthetic-card" / "20251231T000000Z-synthetic-single"
    entries = [synthetic.stream_run("triad", "fp32", "cold", 1 << 30, 2990.0 + r, r, 5, 4e12) for r in range(5)]
    for e in entries:
        e["triaudit"] = {
            "axes": {"op": "triad", "variant": "fp32", "cache": "cold", "bytes": "1073741824", "array": "a"}
        }
    synthetic.write(
        old / "triaudit_stream.synthetic.json",
        {"context": ctx | {"triaudit_schema_version": "2"}, "benchmarks": entries},
    )
    (old / "manifest.json").write_text(
        json.dumps({"started_utc": "20251231T000000Z", "complete": True, "synthetic": "true"})
    )
    return root
