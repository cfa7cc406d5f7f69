"""Synthetic whole-node runs for the gate's tests: per-GPU result files with the cases the gate
reads, node-level p2p and allreduce files and a manifest, in the shape `triaudit run --all-gpus`
writes. Made-up numbers, not measurements: every result file has "synthetic" in its name, and
every context says so; hosts are synthetic-node-<n> unless a test needs the real node's name (the
Slurm drain test, whose scheduler knows only that).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import synthetic
from synthetic_fleet import gpu_context, uuid_of

H100 = "NVIDIA H100 80GB HBM3"
A100_40 = "NVIDIA A100-SXM4-40GB"
L40S = "NVIDIA L40S"

# A healthy synthetic GPU's figures, base units (a little above the H100's provisional floors'
# expected figures, which the gate tests scale from).
HEALTHY = {
    "hbm": ("stream/triad/fp32/cache:cold/bytes:1073741824", "bytes_per_second", 3.05e12),
    "gemm_bf16": ("gemm/ceiling/bf16/burst", "flops", 8.2e14),
    "gemm_fp8": ("gemm/ceiling/fp8e4m3/burst", "flops", 1.45e15),
    "h2d": ("memcpy/h2d/pinned/bytes:268435456", "bytes_per_second", 5.6e10),
    "d2h": ("memcpy/d2h/pinned/bytes:268435456", "bytes_per_second", 5.6e10),
    "d2d": ("memcpy/d2d/copy_engine/bytes:268435456", "bytes_per_second", 1.6e12),
    "launch": ("launch/empty/enqueue/kernels:512", "time_s", 2.5e-6),
}
P2P_CASE = "p2p/ce/uni/src:{s}/dst:{d}/bytes:536870912"
P2P_HEALTHY = 3.9e11
ALLREDUCE_CASE = "allreduce/out_of_place/fp32/algo:auto/bytes:2147483648"
ALLREDUCE_HEALTHY = 3.6e11
HEALTH_ZERO = (
    "health_ecc_corrected",
    "health_ecc_uncorrected",
    "health_remap_pending",
    "health_remap_failure",
    "health_xid_events",
    "health_pcie_replays",
)

EXECUTABLE = {
    "hbm": "triaudit_stream",
    "gemm_bf16": "triaudit_gemm",
    "gemm_fp8": "triaudit_gemm",
    "h2d": "triaudit_memcpy",
    "d2h": "triaudit_memcpy",
    "d2d": "triaudit_memcpy",
    "launch": "triaudit_launch",
}


def gpu_env(card: str = H100, links: int = 18, gen: int = 5, width: int = 16, power: float = 700.0) -> dict:
    """Context keys of one synthetic GPU as the executables write them."""
    memory = {H100: 85_051_572_224, A100_40: 42_505_273_344, L40S: 48_305_799_168}.get(card, 85_000_000_000)
    return {
        "memory_bytes": str(memory),
        "nvlink_active_links": str(links) if links else "none reported",
        "pcie_generation_current": str(gen),
        "pcie_generation_max": str(gen),
        "pcie_width_current": str(width),
        "pcie_width_max": str(width),
        "ecc": "on",
        "power_limit_enforced_w": f"{power:g}",
        "power_limit_default_w": f"{power:g}",
        "cuda_driver_version": "12.4",
        "cuda_runtime_version": "12.4",
    }


def _entries(case: str, metric: str, value: float, reps: int, noise: float, rng: random.Random, extra: dict) -> list:
    out = []
    for r in range(reps):
        v = value * (1 + rng.gauss(0, noise))
        seconds = v if metric == "time_s" else 1e9 / v
        counters = {} if metric == "time_s" else {metric: v}
        out.append(synthetic._entry(case, seconds, r, reps, **counters, **extra))
    return out


def node_run(
    root: Path,
    host: str = "synthetic-node-0",
    gpus: int = 8,
    card: str = H100,
    scale: dict | None = None,
    env: dict | None = None,
    counters: dict | None = None,
    errors: dict | None = None,
    missing: set | None = None,
    reps: int = 5,
    noise: float = 0.003,
    seed: int = 0,
    link: str = "NV18",
    p2p_scale: dict | None = None,
    allreduce: float | None = ALLREDUCE_HEALTHY,
    stamp: str = "20260101T000000Z",
    family: int = 0,
    healthy: dict | None = None,
    with_node_files: bool = True,
    with_health: bool = True,
) -> Path:
    """One node's run folder: root/<host>/<stamp>-<host>/.

    scale {(gpu, check): factor} makes a GPU's figure that much of the healthy one (a time: that
    much slower); env {gpu: {context key: value}} and counters {gpu: {counter: value}} (every case
    of that GPU) override; errors {(gpu, check): message} make a case an error; missing {(gpu,
    check)} leaves a case out; p2p_scale {(src, dst): factor}; with_health=False: no health_*
    counter (executables from before they were recorded)."""
    rng = random.Random(seed)
    run = root / host / f"{stamp}-{host}"
    scale, env, counters, errors, missing = scale or {}, env or {}, counters or {}, errors or {}, missing or set()
    figures = {**HEALTHY, **(healthy or {})}
    manifest_gpus = []
    links = 0 if link in ("PIX", "PXB", "PHB", "NODE", "SYS") else 18
    host_no = int(host.rsplit("-", 1)[-1]) if host[-1].isdigit() else 0
    for i in range(gpus):
        uuid = uuid_of(host_no, i, family)
        base_ctx = {**gpu_env(card, links=links), **env.get(i, {})}
        per_exe: dict[str, list] = {}
        for check, (case, metric, value) in figures.items():
            if (i, check) in missing:
                continue
            exe = EXECUTABLE[check]
            if (i, check) in errors:
                per_exe.setdefault(exe, []).append(synthetic.skipped_entry(case, "x") | _error(errors[(i, check)]))
                continue
            f = scale.get((i, check), 1.0)
            v = value / f if metric == "time_s" else value * f
            health = {c: 0.0 for c in HEALTH_ZERO} if with_health else {}
            extra = {"throttled": 0.0, "clock_low": 0.0, **health, **counters.get(i, {})}
            per_exe.setdefault(exe, []).extend(_entries(case, metric, v, reps, noise, rng, extra))
        executables = []
        for exe, entries in per_exe.items():
            name = f"{exe}.gpu{i}.synthetic.json"
            ctx = gpu_context(host, i, uuid, card=card, executable=exe) | base_ctx
            synthetic.write(run / name, {"context": ctx, "benchmarks": entries})
            executables.append({"json": name, "exit_code": 0})
        manifest_gpus.append({"index": i, "uuid": uuid, "executables": executables})
    node_level = []
    if with_node_files and gpus >= 2:
        node_ctx = gpu_context(host, 0, uuid_of(host_no, 0, family), card=card, executable="triaudit_p2p")
        node_ctx.pop("gpu_index")
        node_ctx.update(p2p_gpu_count=str(gpus), p2p_gpus_visible=str(gpus))
        entries = []
        for s in range(gpus):
            node_ctx[f"gpu_{s}_pci_bus_id"] = f"00000000:{0x18 + s:02X}:00.0"
            for d in range(gpus):
                if s == d:
                    continue
                node_ctx[f"p2p_link_{s}_{d}"] = link
                v = P2P_HEALTHY * (p2p_scale or {}).get((s, d), 1.0)
                entries += _entries(P2P_CASE.format(s=s, d=d), "bytes_per_second", v, reps, noise, rng, {})
        synthetic.write(run / "triaudit_p2p.node.synthetic.json", {"context": node_ctx, "benchmarks": entries})
        node_level.append({"json": "triaudit_p2p.node.synthetic.json", "exit_code": 0})
        if allreduce is not None:
            ar_ctx = dict(node_ctx, executable="triaudit_allreduce", allreduce_ranks=str(gpus))
            ar_ctx["allreduce_gpus_per_node"] = str(gpus)
            ar = _entries(ALLREDUCE_CASE, "busbw", allreduce, reps, noise, rng, {})
            synthetic.write(run / "triaudit_allreduce.node.synthetic.json", {"context": ar_ctx, "benchmarks": ar})
            node_level.append({"json": "triaudit_allreduce.node.synthetic.json", "exit_code": 0})
    manifest = {
        "started_utc": stamp,
        "host": host,
        "complete": True,
        "synthetic": "true (test fixture, not a measurement)",
        "triaudit_provenance": "synthetic",
        "gpus": manifest_gpus,
        "node_level": {"executables": node_level},
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


# A floors file of the tests' own (synthetic, provenance "policy"): every check of the synthetic
# H100, FAIL 10 % below the healthy figure, WARN 5 % below.
POLICY = '[sku.floors.{key}.provenance]\nkind = "policy"\nbasis = "a synthetic test floor"\n'


def synthetic_floors(folder: Path, name="synthetic-floors.toml", links=18, link="NV18", entries=None) -> str:
    """A floors file of the tests' own, for the synthetic H100: entries (name, NVLink links, p2p
    link type, allreduce GPUs), each with every check; returns its path."""

    def entry(sku_name: str, links: int, link: str, gpus: int = 8) -> str:
        text = f'[[sku]]\nname = "{sku_name}"\n[sku.match]\ngpu_name = "H100 80GB HBM3"\nnvlink_links = {links}\n'
        text += "pcie_generation = 5\npcie_width = 16\n"
        text += '[sku.expect]\necc = "on"\n'
        for key, (case, metric, value) in HEALTHY.items():
            if metric == "time_s":
                fail, warn = value / 0.90, value / 0.95
            else:
                fail, warn = value * 0.90, value * 0.95
            text += f'[sku.floors.{key}]\ncase = "{case}"\nfail = {fail!r}\nwarn = {warn!r}\n' + POLICY.format(key=key)
        text += (
            f'[sku.floors."p2p:{link}"]\ncase = "p2p/ce/uni/src:*/dst:*/bytes:536870912"\n'
            f"fail = {P2P_HEALTHY * 0.9!r}\nwarn = {P2P_HEALTHY * 0.95!r}\n" + POLICY.format(key=f'"p2p:{link}"')
        )
        text += (
            f'[sku.floors.allreduce]\ncase = "allreduce/out_of_place/fp32/algo:auto/bytes:2147483648"\n'
            f"fail = {ALLREDUCE_HEALTHY * 0.9!r}\nwarn = {ALLREDUCE_HEALTHY * 0.95!r}\ngpus = {gpus}\n"
            + POLICY.format(key="allreduce")
        )
        return text

    body = "schema = 1\n" + "".join(entry(*e) for e in (entries or [("synthetic H100", links, link)]))
    path = folder / name
    path.write_text(body)
    return str(path)


def _error(message: str) -> dict:
    return {"error_occurred": True, "error_message": message}
