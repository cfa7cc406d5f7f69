"""Inside a fleet job (scripts/slurm/triaudit.sbatch): the job's own record, job.record, in its
results folder: job id, cluster, node list (expanded), start and end, srun's exit code. `slurm
collect` reads it to know which nodes should have reported. Standard library only (it runs with
the nodes' python3)."""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path

JOB_RECORD = "job.record"  # JSON; not *.json, which `report` would read as a result file


def expand_nodelist(nodelist: str) -> list[str]:
    """Slurm's compact node list -> names: "gpu[01-03,07],login" -> gpu01 gpu02 gpu03 gpu07 login.
    Asks `scontrol show hostnames` first (it knows every form); this is the fallback."""
    try:
        p = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True, timeout=30)
        if p.returncode == 0 and p.stdout.strip():
            return p.stdout.split()
    except (OSError, subprocess.SubprocessError):
        pass
    return _expand(nodelist)


def _expand(nodelist: str) -> list[str]:
    names: list[str] = []
    for item in re.findall(r"[^,\[]+(?:\[[^\]]*\][^,\[]*)*", nodelist):
        parts = re.split(r"(\[[^\]]*\])", item)
        expanded = [""]
        for part in parts:
            if part.startswith("["):
                choices = []
                for rng in part[1:-1].split(","):
                    lo, _, hi = rng.partition("-")
                    if hi:
                        choices += [str(k).zfill(len(lo)) for k in range(int(lo), int(hi) + 1)]
                    else:
                        choices.append(lo)
                expanded = [e + c for e in expanded for c in choices]
            else:
                expanded = [e + part for e in expanded]
        names += [e for e in expanded if e]
    return names


def _utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _write(path: Path, record: dict) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def record(jobdir: Path, build_dir: str, profile: str, env=os.environ) -> dict:
    nodelist = env.get("SLURM_JOB_NODELIST", "")
    rec = {
        "job_id": env.get("SLURM_JOB_ID", ""),
        "cluster": env.get("SLURM_CLUSTER_NAME", ""),
        "job_name": env.get("SLURM_JOB_NAME", ""),
        "nodelist": nodelist,
        "nodes": expand_nodelist(nodelist) if nodelist else [],
        "started_utc": _utc(),
        "finished_utc": None,
        "srun_exit_code": None,
        "build_dir": build_dir,
        "profile": profile,
        "submit_dir": env.get("SLURM_SUBMIT_DIR", ""),
        "batch_host": os.uname().nodename,
        "python": sys.executable,
    }
    path = Path(jobdir) / JOB_RECORD
    if path.exists():  # the batch script made this folder afresh; an existing record is not ours
        raise SystemExit(f"triaudit: {path} exists already: refusing to write over it")
    _write(path, rec)
    return rec


def finish(jobdir: Path, exit_code: int) -> dict:
    path = Path(jobdir) / JOB_RECORD
    rec = json.loads(path.read_text(encoding="utf-8"))
    rec.update(finished_utc=_utc(), srun_exit_code=exit_code)
    _write(path, rec)
    return rec


def read(jobdir: Path) -> dict:
    try:
        rec = json.loads((Path(jobdir) / JOB_RECORD).read_text(encoding="utf-8"))
        return rec if isinstance(rec, dict) else {}
    except (OSError, ValueError):
        return {}


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python3 -m triaudit.fleet.slurm_job", description=__doc__)
    sub = p.add_subparsers(dest="what", required=True)
    r = sub.add_parser("record", help="write job.record at the start of the job")
    r.add_argument("jobdir", type=Path)
    r.add_argument("--build-dir", default="")
    r.add_argument("--profile", default="")
    f = sub.add_parser("finish", help="add the end and srun's exit code to job.record")
    f.add_argument("jobdir", type=Path)
    f.add_argument("--exit-code", type=int, required=True)
    a = p.parse_args(argv)
    if a.what == "record":
        record(a.jobdir, a.build_dir, a.profile)
    else:
        finish(a.jobdir, a.exit_code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
