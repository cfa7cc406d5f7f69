"""A finished soak's folder in the shape of a run (results/<card>/<UTC stamp>-<host>-soak/):
per GPU one result file (triaudit_soak.gpu<i>.json, every segment merged, windows as
repetitions) whose context carries the soak's verdict and events, and the hash log of all its
segments (triaudit_soak.gpu<i>.hashes); manifest.json names each GPU's file, as whole-node runs
do, and holds the events. Each file is written whole (atomic_write); the folder is moved into
place only when all of it is, under a name that does not exist yet. Standard library only."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from triaudit.core.files import atomic_write
from triaudit.core.names import slug
from triaudit.results.case_info import gpu_measured
from triaudit.runner import suite as runner
from triaudit.soak.analysis import Analysis, GpuSoak
from triaudit.soak.checkpoint import Checkpoint, segment_paths

SOAK_KEYS = (
    "soak_duration_s",
    "soak_window_s",
    "soak_windows",
    "soak_windows_done",
    "soak_segments",
    "soak_start_unix_s",
    "soak_drift_bound_pct",
    "soak_verdict",
    "soak_events",
    "soak_hash_log",
)


def result_name(g: GpuSoak) -> str:
    return f"triaudit_soak.{g.gpu.tag}.json"


def hash_log_name(g: GpuSoak) -> str:
    return f"triaudit_soak.{g.gpu.tag}.hashes"


def gpu_verdict(g: GpuSoak) -> str:
    if not g.events:
        return "clean"
    return (
        f"{len(g.events)} event(s): "
        + "; ".join(e.describe() for e in g.events[:3])
        + (f"; {len(g.events) - 3} more in manifest.json" if len(g.events) > 3 else "")
    )


def soak_context(g: GpuSoak, ck: Checkpoint) -> dict:
    ctx = {k: v for k, v in g.merged.context.items() if k not in ("soak_first_window",)}
    ctx.update(
        {
            "soak_duration_s": f"{ck.duration_s:g}",
            "soak_window_s": f"{ck.window_s:g}",
            "soak_windows": str(ck.windows),
            "soak_windows_done": str(g.windows_done),
            "soak_segments": str(sum(1 for s in ck.segments if g.gpu.uuid in s.first_window)),
            "soak_start_unix_s": f"{ck.start_unix:.3f}",
            "soak_drift_bound_pct": f"{ck.drift_bound_pct:g}",
            "soak_verdict": gpu_verdict(g),
            "soak_events": json.dumps([e.to_dict() for e in g.events]),
            "soak_hash_log": hash_log_name(g),
            "gpu_index": str(g.gpu.index),
        }
    )
    return ctx


def card_of(analysis: Analysis) -> str:
    """The GPU model as CUDA names it; "" when no process reached a GPU; mixed models say so."""
    names = sorted({str(g.merged.context.get("gpu_name")) for g in analysis.gpus if gpu_measured(g.merged.context)})
    return names[0] if len(names) == 1 else ("mixed " + " ".join(names) if names else "")


def write_folder(folder: Path, ck: Checkpoint, analysis: Analysis, complete: bool, finished_utc: str) -> dict:
    """Writes the result files, hash logs and manifest into `folder`; returns the manifest."""
    gpus: list[dict] = []
    entries: list[dict] = []
    for g in analysis.gpus:
        codes = [s.exit_codes.get(g.gpu.uuid) for s in ck.segments if g.gpu.uuid in s.first_window]
        entry: dict = {
            "step": "triaudit_soak",
            "executable": "triaudit_soak",
            "json": None,
            "hashes": None,
            "exit_code": codes[-1] if codes else None,
            "segments": len(codes),
            "verdict": gpu_verdict(g),
        }
        if g.merged.entries:
            atomic_write(
                folder / result_name(g),
                json.dumps({**g.merged.as_json(), "context": soak_context(g, ck)}, indent=2) + "\n",
            )
            entry["json"] = result_name(g)
        logs = [segment_paths(folder, g.gpu, s.number)[1] for s in ck.segments if g.gpu.uuid in s.first_window]
        text = "".join(p.read_text(encoding="utf-8", errors="replace") for p in logs if p.exists())
        if text:
            atomic_write(folder / hash_log_name(g), text if text.endswith("\n") else text + "\n")
            entry["hashes"] = hash_log_name(g)
        entries.append(entry)
        gpus.append(
            {
                "index": g.gpu.index,
                "uuid": g.gpu.uuid,
                "pci_bus_id": g.gpu.pci_bus_id,
                "name": g.gpu.name,
                "executables": [entry],
            }
        )
    manifest = {
        "profile": "soak",
        "mode": "soak",
        "started_utc": ck.started_utc,
        "finished_utc": finished_utc,
        "host": ck.host,
        "node": ck.node,
        "git_commit": ck.git_commit,
        "complete": complete,
        "card": card_of(analysis),
        "siblings_loaded": len(ck.gpus) > 1,
        "gpus": gpus,
        "executables": entries,
        "soak": {
            "duration_s": ck.duration_s,
            "window_s": ck.window_s,
            "windows": ck.windows,
            "drift_bound_pct": ck.drift_bound_pct,
            "segments": len(ck.segments),
            "verdict": analysis.verdict(),
            "events": [e.to_dict() for e in analysis.events],
            "notes": analysis.notes + [n for g in analysis.gpus for n in g.notes],
        },
    }
    atomic_write(folder / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    return manifest


def move_into_place(folder: Path, results: Path, card: str, started_utc: str, host: str) -> Path:
    """The soak's folder renamed to results/<card>/<stamp>-<host>-soak (made unique)."""
    final = runner._unique_dir(Path(results) / slug(card), f"{started_utc}-{slug(host)}-soak")
    final.parent.mkdir(parents=True, exist_ok=True)
    os.rename(folder, final)
    runner._tidy_incoming(Path(results))
    return final


def discard(folder: Path, results: Path) -> None:
    """A soak that reached no GPU leaves nothing behind (its processes said only "no CUDA device")."""
    shutil.rmtree(folder, ignore_errors=True)
    runner._tidy_incoming(Path(results))
