"""Runs: a folder of result files (`results/<card>/<timestamp>-<host>/`, or any folder holding result
files), what its manifest says about it, and which run's figures a table shows.

A report shows, per card, its newest complete run and names it; older runs are left out and
listed (`--all-runs` gives each run its own column). Runs are never mixed in one column. When the
chosen run measured several GPUs (whole-node mode), each GPU gets its own column.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from triaudit.results.case_info import SYNTHETIC, SYNTHETIC_LABEL, provenance
from triaudit.results.categorical import map_text

_STAMP = re.compile(r"^(\d{8}T\d{6}Z)")
_SEP = " · "


@dataclass(frozen=True)
class RunInfo:
    run_dir: str
    name: str  # the folder's name, e.g. 20260102T030405Z-node7
    started: str  # sortable: the manifest's started_utc, else the folder name's stamp, else the files' date
    host: str
    commit: str
    complete: bool
    manifest_note: str = ""  # e.g. "manifest.json unreadable"
    gpu_files: tuple = ()  # whole-node mode: (result file name, GPU uuid, GPU index) from the manifest
    node_level_files: tuple = ()  # whole-node mode: files measured over all GPUs at once (p2p, the collectives)

    def gpu_of(self, file_name: str) -> tuple[str, str]:
        """(uuid, index) the manifest gives for a result file of this run, ("", "") when it does not."""
        for name, uuid, index in self.gpu_files:
            if name == file_name:
                return uuid, index
        return "", ""

    def describe(self) -> str:
        parts = [f"started {self.started}" if self.started else "start time unknown"]
        if self.host:
            parts.append(f"host {self.host}")
        parts.append(f"commit {self.commit or 'unknown'}")
        if not self.complete:
            parts.append("incomplete")
        return f"{self.name} ({', '.join(parts)})"


def read_run(run_dir: Path, contexts: list[dict]) -> RunInfo:
    """The run a result file's folder is, from its manifest and, where that is silent, the files' contexts."""
    manifest: dict = {}
    note = ""
    path = run_dir / "manifest.json"
    complete = True
    if path.exists():
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(manifest, dict):
                raise ValueError("not an object")
            value = manifest.get("complete", True)
            if type(value) is not bool:  # "false" (a string) is true to bool(): say what it is instead
                raise ValueError(f'"complete" is {json.dumps(value)}, not true or false')
            complete = value
        except (OSError, ValueError) as e:
            manifest, complete = {}, False
            note = f"{path}: unreadable ({e}); the run is treated as incomplete"
    started = str(manifest.get("started_utc") or "")
    if not started:
        m = _STAMP.match(run_dir.name)
        started = m.group(1) if m else ""
    if not started:
        dates = sorted(str(c.get("date")) for c in contexts if c.get("date"))
        started = dates[0] if dates else ""
    host = str(manifest.get("host") or next((c.get("host_name") for c in contexts if c.get("host_name")), "") or "")
    commit = str(
        manifest.get("git_commit")
        or next((c.get("triaudit_git_commit") for c in contexts if c.get("triaudit_git_commit")), "")
        or ""
    )
    gpu_files = []
    for g in manifest.get("gpus", []) if isinstance(manifest.get("gpus"), list) else []:
        if isinstance(g, dict):
            exes = g.get("executables")
            for entry in exes if isinstance(exes, list) else []:
                if isinstance(entry, dict) and entry.get("json"):
                    gpu_files.append((str(entry["json"]), str(g.get("uuid", "")), str(g.get("index", ""))))
    node = manifest.get("node_level")
    node_exes = node.get("executables") if isinstance(node, dict) else None
    node_files = tuple(
        str(e["json"])
        for e in (node_exes if isinstance(node_exes, list) else [])
        if isinstance(e, dict) and e.get("json")
    )
    return RunInfo(str(run_dir), run_dir.name, started, host, commit, complete, note, tuple(gpu_files), node_files)


def gpu_identity(context: dict, run: RunInfo | None = None, file_name: str = "") -> str:
    """The GPU a file measured: its context's UUID, else what the run's manifest says (whole-node
    runs written before the context named the GPU), "" when neither says."""
    uuid = str(context.get("gpu_uuid") or "")
    if uuid and not uuid.startswith("unknown"):
        return uuid
    if run is not None:
        return run.gpu_of(file_name)[0]
    return ""


def gpu_index(context: dict, run: RunInfo | None = None, file_name: str = "") -> str:
    index = context.get("gpu_index")
    if index not in (None, ""):
        return str(index)
    return run.gpu_of(file_name)[1] if run is not None else ""


def origin(context: dict) -> str:
    """What wrote a file: "triaudit", "peer:<tool>" for imported peer outputs, or "soak" for a
    `triaudit soak` (each is its own run, kept beside triaudit's: a soak newer than a node's last
    run does not hide that run, nor the run the soak)."""
    exe = str(context.get("executable", ""))
    if exe.startswith("peer:"):
        return exe
    return "soak" if "soak_verdict" in context else "triaudit"


def _origin_of(context: dict) -> str:
    """origin(), with a synthetic file's own: a synthetic run never shares a column with a measured one."""
    org = origin(context)
    return SYNTHETIC if provenance(context) == SYNTHETIC and not org.startswith("peer:") else org


def _origin_words(org: str) -> str:
    return f" ({org[5:]} import)" if org.startswith("peer:") else (f" ({org})" if org != "triaudit" else "")


def select(df, runs: dict[str, RunInfo], contexts: dict[str, dict], all_runs: bool = False):
    """Rows of the runs to show, with the `card` column relabelled to the column each row belongs
    to, and what to say about it: (rows, shown {column label: [run descriptions]}, left_out [lines]).

    Default: per card and host (and per imported peer tool), the newest run (by start time, then
    name); `all_runs`: every run its own column, "<card> · <run>". A card measured on several hosts
    gets a column per host ("<card> · <host>"), a run with several GPUs one per GPU ("· GPU <i>").
    The real card name stays in `card_name`.
    """
    if df.empty:
        return df, {}, []
    # Decided per file (a file holds one card and one GPU), then mapped onto the rows.
    files = df[["file", "card", "run_dir"]].drop_duplicates("file")
    order = {d: (r.started, r.name, d) for d, r in runs.items()}

    def host(run_dir: str) -> str:
        return runs[run_dir].host if run_dir in runs else ""

    groups: dict[tuple, set[str]] = {}
    for f, card, run_dir in files.itertuples(index=False):
        # A synthetic run is a column of its own, labelled so: never the newest run of a measured card.
        groups.setdefault((card, host(run_dir), _origin_of(contexts.get(f, {}))), set()).add(run_dir)
    left_out: list[str] = []
    chosen: dict[tuple, list[str]] = {}
    for key in sorted(groups):
        card, h, org = key
        dirs = sorted(groups[key], key=lambda d: order.get(d, ("", "", d)))
        chosen[key] = dirs if all_runs else dirs[-1:]
        if not all_runs and len(dirs) > 1:
            older = [runs[d].name if d in runs else d for d in dirs[:-1]]
            what = card + (f" on {h}" if h else "") + (f" ({org})" if org != "triaudit" else "")
            left_out.append(
                f"{what}: newest run {runs[dirs[-1]].name if dirs[-1] in runs else dirs[-1]} shown; "
                f"{len(older)} older run(s) left out ({', '.join(older[-5:])}"
                + (", ..." if len(older) > 5 else "")
                + "; --all-runs shows every run)"
            )
    hosts_per_card: dict[str, set[str]] = {}
    for card, h, _ in chosen:
        hosts_per_card.setdefault(card, set()).add(h)
    labels: dict[str, str] = {}
    shown: dict[str, list[str]] = {}
    owner: dict[tuple, str] = {}  # (label, origin) -> run folder: one column never holds two runs
    by_dir = {d: g for d, g in files.groupby("run_dir", sort=False)}
    for (card, h, org), dirs in chosen.items():
        for run_dir in dirs:
            g = by_dir[run_dir]
            same_origin = [_origin_of(contexts.get(f, {})) == org for f in g["file"]]
            g = g[(g["card"] == card).to_numpy() & np.array(same_origin, dtype=bool)]
            run = runs.get(run_dir)
            gpus = sorted({gpu_identity(contexts.get(f, {}), run, Path(f).name) for f in g["file"]} - {""})
            if all_runs and run is not None:
                base = f"{card}{_SEP}{run.name}"
            elif len(hosts_per_card[card]) > 1:
                base = f"{card}{_SEP}{h or 'unknown host'}"
            else:
                base = card
            if org == SYNTHETIC:
                base += SYNTHETIC_LABEL
            if owner.setdefault((base, org), run_dir) != run_dir:  # two runs of one name: tell them apart
                base = f"{base}{_SEP}{Path(run_dir).parent.name}/{Path(run_dir).name}"
            for f in g["file"]:
                ctx = contexts.get(f, {})
                gpu, label = gpu_identity(ctx, run, Path(f).name), base
                if len(gpus) > 1 and gpu:
                    idx = gpu_index(ctx, run, Path(f).name)
                    label = f"{base}{_SEP}GPU {idx if idx else gpus.index(gpu)}"
                labels[f] = label
                if run is not None:
                    desc = run.describe() + _origin_words(org)
                    if desc not in shown.setdefault(label, []):
                        shown[label].append(desc)
    if len(labels) < len(files):
        df = df[df["file"].isin(labels)].copy()
    else:  # nothing left out: no copy (a hundred cards' rows are hundreds of MB)
        df = df.copy(deep=False)
    df["card_name"] = df["card"]

    df["card"] = map_text(df["file"], labels)
    return df, shown, left_out
