"""What each result file is, in the few words commands choose runs and GPUs by: the GPU it measured
(host, nvidia-smi index, UUID, model, driver), the host the gate files it under, its card column,
where its figures come from. Each a function of the file's context and its run alone, so the
results store (store/) computes them once, when a run is added, and a command over a year of runs
reads them without opening a context; a command over JSON files computes them the same way.
"""

from __future__ import annotations

from pathlib import Path

from triaudit import corners as registry
from triaudit.results.case_info import gpu_measured
from triaudit.results.runs import RunInfo, _origin_of, gpu_identity, read_run
from triaudit.results.table import ResultSet, card_of

# The identity of one GPU's file, as outliers, floors derive, the gate and the fleet section name it.
IDENTITY_KEYS = ("model", "driver", "host", "gpu_index", "gpu_uuid", "gpu", "siblings_loaded")


def gpu_key(uuid: str, host: str, index: str, run_dir: str) -> str:
    """The key one GPU's files share: its UUID, else (files that never recorded one) host, index and run."""
    return uuid or f"{host}:{index}:{run_dir}"


def identity(path: Path, ctx: dict, run: RunInfo) -> dict | None:
    """Which GPU a result file measured; None for files that are not one GPU's (no device, a
    node-level run over several GPUs: p2p, a collective)."""
    if not gpu_measured(ctx) or path.name in run.node_level_files:
        return None
    for key in registry.ranks_contexts():
        try:
            if int(ctx.get(key, "1")) > 1:
                return None
        except ValueError:
            pass
    uuid = gpu_identity(ctx, run, path.name)
    index = str(ctx.get("gpu_index", ""))
    if not index.isdigit():  # not recorded, or a placeholder for "not set": the manifest knows
        index = run.gpu_of(path.name)[1] or index or "?"
    host = ctx.get("host") or run.host or "?"
    return {
        "model": str(ctx.get("gpu_name", "unknown card")),
        "driver": str(ctx.get("driver_version") or "unknown driver"),
        "host": str(host),
        "gpu_index": index,
        "gpu_uuid": uuid or "?",
        "gpu": gpu_key(uuid, str(host), index, str(path.parent)),
        "siblings_loaded": str(ctx.get("siblings_loaded", "unknown")),
    }


def identities(rs: ResultSet) -> dict[str, dict]:
    """{file: the GPU that wrote it (model, driver, gpu, host, ...)}, from the contexts alone."""
    contexts, runs = rs.contexts, rs.runs
    ident = {}
    for f in map(Path, contexts):
        run = runs.get(str(f.parent)) or read_run(f.parent, [contexts[str(f)]])
        who = identity(f, contexts[str(f)], run)
        if who is not None:
            ident[str(f)] = who
    return ident


def gate_host(ctx: dict, run: RunInfo, who: dict | None) -> str:
    """The host the gate judges a file under: its GPU's host, else the context's, the run's, the name's."""
    if who is not None:
        return who["host"]
    return str(ctx.get("host") or run.host or ctx.get("host_name") or "?")


def file_facts(path: Path, ctx: dict, run: RunInfo) -> dict:
    """Everything above about one file, in one flat record (the results store's columns)."""
    who = identity(path, ctx, run)
    facts = {
        "card": card_of(ctx),
        "origin": _origin_of(ctx),
        "gpu_measured": gpu_measured(ctx),
        "unavailable_reason": str(ctx.get("gpu_unavailable_reason", "no device")),
        "gate_host": gate_host(ctx, run, who),
        "per_gpu": who is not None,
    }
    for k in IDENTITY_KEYS:
        facts[k] = who[k] if who is not None else ""
    return facts
