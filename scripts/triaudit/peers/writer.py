"""Writes peer runs as Google Benchmark-shaped JSON into a new run folder under results/<card>/.

One JSON per input file, `peer/<tool>/...` names, one repetition per case (the tool's figure is
already its own statistic over its iterations), `real_time` per operation where the tool prints a
time and NaN where it does not, counters in triaudit's units. The context says which tool and
version produced it, its statistic, the source file and what could not be read. The folder's name
does not exist yet: nothing is ever overwritten.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import re
from pathlib import Path

from triaudit.core.names import slug
from triaudit.core.specs import canonical_gpu_name
from triaudit.peers.model import PeerFormatError, PeerRun

SCHEMA = "1"


def choose_card(runs: list[PeerRun], card: str | None, force: bool = False) -> str:
    """The GPU name the run folder is filed under: --card, else the one every file names (both in
    their canonical spelling, core/specs.canonical_gpu_name). A --card that contradicts the GPU an
    output names is refused unless `force`: filing an H100's output under an H200 would put
    another card's figures in its column."""
    if card:
        wanted = canonical_gpu_name(card)
        named = sorted({canonical_gpu_name(r.gpu_name) for r in runs if r.gpu_name})
        other = [n for n in named if n != wanted]
        if other and not force:
            raise PeerFormatError(
                f"--card {card!r}, but the output names {', '.join(repr(n) for n in other)}: leave --card out to "
                "file it under the GPU it names, or pass --force to file it under --card anyway"
            )
        return wanted
    missing = [str(r.source) for r in runs if not r.gpu_name]
    if missing:
        raise PeerFormatError(
            f"{missing[0]}: the output does not name its GPU (or names several): pass --card NAME "
            "(the GPU name as CUDA reports it, e.g. 'NVIDIA H200')"
        )
    names = sorted({canonical_gpu_name(r.gpu_name) for r in runs})
    if len(names) > 1:
        raise PeerFormatError("the files are from different GPUs (" + ", ".join(names) + "): import them separately")
    return names[0]


def _entry(tool: str, case) -> dict:
    name = f"peer/{tool}/{case.name}"
    e = {
        "name": name,
        "run_name": name,
        "run_type": "iteration",
        "repetitions": 1,
        "repetition_index": 0,
        "threads": 1,
        "time_unit": "s",
    }
    if case.iterations:
        e["iterations"] = int(case.iterations)
    if case.error:
        e.update({"error_occurred": True, "error_message": case.error, "real_time": math.nan})
        return e
    e["real_time"] = case.time_s if case.time_s is not None else math.nan
    for k, v in case.counters.items():
        e[k] = float(v)
    if case.label:
        e["label"] = case.label
    return e


def _context(run: PeerRun, card: str, sha: str, command: str) -> dict:
    ctx = {
        "gpu_available": "true",
        "gpu_name": card,
        "executable": f"peer:{run.tool}",
        "triaudit_provenance": "imported",  # another tool's figures, brought in: never triaudit's measurement
        "peer_tool": run.tool,
        "peer_statistic": run.statistic,
        "peer_source_file": str(run.source),
        "peer_source_sha256": sha,
        "peer_not_read": "; ".join(run.not_read) if run.not_read else "nothing",
        "peer_schema_version": SCHEMA,
        "imported_by": command,
        "imported_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if run.version:
        ctx["peer_tool_version"] = run.version
    if run.gpu_name and canonical_gpu_name(run.gpu_name) != card:
        ctx["peer_gpu_name_in_output"] = run.gpu_name
        ctx["gpu_name_from"] = "--card --force (the output names another GPU)"
    elif run.gpu_name and run.gpu_name != card:
        ctx["peer_gpu_name_in_output"] = run.gpu_name
    elif not run.gpu_name:
        ctx["gpu_name_from"] = "--card (the output does not name its GPU)"
    for k, v in run.context.items():
        ctx[k if k.startswith("peer_") else f"peer_{k}"] = str(v)
    return ctx


def _new_folder(parent: Path, name: str) -> Path:
    parent.mkdir(parents=True, exist_ok=True)
    k = 1
    while True:
        candidate = parent / (name if k == 1 else f"{name}-{k}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            k += 1


def write_run(
    runs: list[PeerRun], texts: list[bytes], results: Path, card: str | None, command: str, force: bool = False
) -> Path:
    gpu = choose_card(runs, card, force)
    tool = runs[0].tool
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    folder = _new_folder(Path(results) / slug(gpu), f"{stamp}-import-{tool}")
    used: set[str] = set()
    for run, raw in zip(runs, texts):
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(run.source).stem)[:80] or "output"
        fname = f"{tool}_{stem}.json"
        k = 2
        while fname in used:
            fname = f"{tool}_{stem}-{k}.json"
            k += 1
        used.add(fname)
        doc = {"context": _context(run, gpu, hashlib.sha256(raw).hexdigest(), command), "benchmarks": _entries(run)}
        with open(folder / fname, "x", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    manifest = {
        "kind": "peer import",
        "tool": tool,
        "card": gpu,
        "complete": True,
        "imported_from": [str(r.source) for r in runs],
        "command": command,
        "cases": sum(len(r.cases) for r in runs),
        "errors": sum(1 for r in runs for c in r.cases if c.error),
    }
    with open(folder / "manifest.json", "x", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    return folder


def _entries(run: PeerRun) -> list[dict]:
    out = []
    reps: dict[str, int] = {}
    for c in run.cases:
        e = _entry(run.tool, c)
        k = reps.get(c.name, 0)
        reps[c.name] = k + 1
        e["repetition_index"] = k
        out.append(e)
    for e in out:
        e["repetitions"] = reps[e["name"][len(f"peer/{run.tool}/") :]]
    return out
