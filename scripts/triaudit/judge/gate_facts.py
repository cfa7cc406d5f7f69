"""What the gate knows of each node and GPU before judging: which run of each host it judges (the
newest: a results tree holds every night's; chosen from the runs' rows, store/rows.py, before any
of their rows is read), which files are each GPU's (results/facts.py: host, GPU index, UUID), and
the facts of the GPU's context that choose its floors and that the environment checks read (model,
memory, NVLink links, PCIe, power limit, ECC, driver)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triaudit import corners as registry
from triaudit.results.facts import gate_host, identities
from triaudit.results.figures import gpu_measured
from triaudit.results.runs import RunInfo
from triaudit.results.table import ResultSet

# The context keys in which a node-level corner says how many GPUs it saw (p2p, each collective).
GPU_COUNT_KEYS = tuple(c.gpus_context for c in registry.CORNERS if c.gpus_context)


@dataclass
class Gpu:
    host: str
    index: str
    uuid: str
    model: str
    files: list[str]
    facts: dict = field(default_factory=dict)

    def sort_key(self) -> tuple:
        return (int(self.index) if self.index.isdigit() else 1 << 30, self.index, self.uuid)


@dataclass
class Node:
    host: str
    run: RunInfo
    gpus: list[Gpu]
    files: list[str]  # every result file of the run judged (per-GPU and node-level)
    gpus_seen: int = 0  # the GPUs p2p or NCCL saw on the node (a one-GPU run on an 8-GPU node)

    @property
    def gpu_count(self) -> int:
        """How many GPUs the node has, as far as the run says."""
        return max(len(self.gpus), self.gpus_seen)


def _int(v) -> int | None:
    try:
        return int(str(v).strip())
    except (TypeError, ValueError):
        return None


def _float(v) -> float | None:
    try:
        x = float(str(v).strip())
    except (TypeError, ValueError):
        return None
    return x if x == x else None


def _nvlink(v) -> int | None:
    text = str(v or "").strip().lower()
    if text == "none reported":  # NVML reports no NVLink on this GPU: a PCIe-only card has none
        return 0
    return _int(text)


def gpu_facts(contexts: list[dict]) -> dict:
    """The facts of one GPU from the contexts of its files. Link width and generation are read when
    each executable starts, often at idle, when links train down to save power: the best seen."""
    first = contexts[0] if contexts else {}

    def best(key: str) -> int | None:
        seen = [x for x in (_int(c.get(key)) for c in contexts) if x is not None]
        return max(seen) if seen else None

    memory = _float(first.get("memory_bytes"))
    return {
        "gpu_name": str(first.get("gpu_name") or ""),
        "pci_device_id": str(first.get("gpu_pci_device_id") or ""),
        "pci_bus_id": str(first.get("gpu_pci_bus_id") or ""),
        "memory_gb": None if memory is None else memory / 1e9,
        "nvlink_links": next(
            (n for n in (_nvlink(c.get("nvlink_active_links")) for c in contexts) if n is not None), None
        ),
        "pcie_generation": best("pcie_generation_max"),
        "pcie_width": best("pcie_width_max"),
        "pcie_generation_current": best("pcie_generation_current"),
        "pcie_width_current": best("pcie_width_current"),
        "power_limit_w": _float(first.get("power_limit_enforced_w")),
        "power_limit_default_w": _float(first.get("power_limit_default_w")),
        "ecc": str(first.get("ecc") or "unknown").split(" ")[0].lower(),
        "driver_version": str(first.get("driver_version") or ""),
        "cuda_driver_version": str(first.get("cuda_driver_version") or ""),
        "cuda_runtime_version": str(first.get("cuda_runtime_version") or ""),
    }


def newest_runs(
    runs: list, summary: dict[str, tuple[int, list[str]]] | None = None
) -> tuple[dict[str, object], list[str]]:
    """Each host's newest run among `runs` (store/source.py Run: a folder with its `runs` row, from
    the store or from the JSON files), and notes: files that measured no GPU, older runs left out,
    an incomplete run judged. Chosen from the rows alone: the gate opens only the runs it judges.
    `summary`: when `runs` holds only each host's newest (and runs with notes) of a store's
    (Source.hosts), each host's number of runs and its newest names, oldest first, for the note."""
    notes: list[str] = []
    by_host: dict[str, list] = {}
    hosts_of: dict[str, list[str]] = {}  # a row's text -> its hosts (a host's nights say the same)
    for run in runs:
        if run.row["no_gpu"] != "[]":
            for name, why in json.loads(run.row["no_gpu"]):
                notes.append(f"{Path(run.run_dir) / name}: no GPU measured ({why})")
        text = run.row["gate_hosts"]
        hosts = hosts_of.get(text)
        if hosts is None:
            hosts = hosts_of[text] = json.loads(text)
        for host in hosts:
            by_host.setdefault(host, []).append(run)
    chosen = {}
    for host in sorted(by_host):
        # The run's start (its manifest's, else its folder's stamp), name and folder: RunInfo's own order.
        dirs = sorted(by_host[host], key=lambda r: (r.row["started"], r.row["name"], r.run_dir))
        chosen[host] = dirs[-1]
        name = dirs[-1].row["name"]
        count, names = summary[host] if summary and host in summary else (len(dirs), [d.row["name"] for d in dirs])
        if count > 1:
            notes.append(
                f"{host}: the newest run {name} judged; {count - 1} older run(s) left out "
                f"({', '.join(names[:-1][-3:])}{', ...' if count > 4 else ''})"
            )
        if not dirs[-1].row["complete"]:
            notes.append(f"{host}: run {name} is incomplete: what it lacks is NOT TESTED")
    return chosen, notes


def build_nodes(chosen: dict[str, Any], rs: ResultSet, who: dict[str, dict] | None = None) -> list[Node]:
    """The nodes to judge: each host's chosen run with its GPUs and files, from the run's contexts;
    `who`: each file's GPU (results/facts.py identities), when the caller has them (a store does)."""
    who = identities(rs) if who is None else who
    out = []
    for host in sorted(chosen):
        run = chosen[host]
        info = rs.runs.get(run.run_dir) or run.info
        files = sorted(
            str(f)
            for f in run.files
            if str(f) in rs.contexts
            and gpu_measured(rs.contexts[str(f)])
            and gate_host(rs.contexts[str(f)], info, who.get(str(f))) == host
        )
        gpus: dict[str, Gpu] = {}
        for f in files:
            w = who.get(f)
            if w is None:
                continue
            g = gpus.setdefault(w["gpu"], Gpu(host, w["gpu_index"], w["gpu_uuid"], w["model"], []))
            g.files.append(f)
        for g in gpus.values():
            g.facts = gpu_facts([rs.contexts[f] for f in g.files])
        seen = [max((_int(rs.contexts[f].get(k)) or 0 for k in GPU_COUNT_KEYS), default=0) for f in files]
        out.append(Node(host, info, sorted(gpus.values(), key=Gpu.sort_key), files, max(seen, default=0)))
    return out
