"""`triaudit slurm submit | collect`: the fleet under the cluster's own scheduler.

submit writes the job script (scripts/slurm/triaudit.sbatch with the settings filled in) into the
results folder, where it stays as the record, submits it with sbatch and prints the job id.
collect waits for the job (sacct; where accounting is off, as on a one-node test cluster without
slurmdbd, `scontrol show job`), reads the job's record and every host's status file, says per
node what happened (measured, no CUDA device, failed, timed out, no record) and runs the fleet
report (outliers and the full report, with its fleet section) into the job's folder.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triaudit.core.errors import TriauditError
from triaudit.fleet import slurm_job
from triaudit.results.status import read_statuses

TEMPLATE = Path(__file__).resolve().parents[2] / "slurm" / "triaudit.sbatch"
SETTINGS_MARK = "# @triaudit-settings@"
DONE = {
    "COMPLETED",
    "FAILED",
    "TIMEOUT",
    "CANCELLED",
    "NODE_FAIL",
    "PREEMPTED",
    "OUT_OF_MEMORY",
    "BOOT_FAIL",
    "DEADLINE",
    "REVOKED",
    "SPECIAL_EXIT",
}
EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, EXIT_NOT_JUDGED, EXIT_NO_DEVICE = 0, 1, 2, 3, 77


class SlurmError(TriauditError):
    pass


# --- submit ----------------------------------------------------------------------------------


def render(
    template: str,
    nodes: int,
    results: Path,
    build_dir: Path,
    profile: str,
    python: str,
    repo: Path,
    partition: str | None = None,
    time_limit: str | None = None,
    run_args: str = "",
    sbatch_cmd: str = "",
) -> str:
    """The template with #SBATCH lines for this submission after its own and the settings exported."""
    # The template's own log file name is for plain `sbatch`; a submission keeps its log beside its folder.
    lines = [line for line in template.splitlines() if not line.startswith("#SBATCH --output")]
    if SETTINGS_MARK not in lines:
        raise SlurmError(f"{TEMPLATE}: no '{SETTINGS_MARK}' line to put the settings at")
    last_sbatch = max(i for i, line in enumerate(lines) if line.startswith("#SBATCH"))
    directives = [f"#SBATCH --nodes={nodes}", f"#SBATCH --output={results}/job-%j.out"]
    if partition:
        directives.append(f"#SBATCH --partition={partition}")
    if time_limit:
        directives.append(f"#SBATCH --time={time_limit}")
    lines[last_sbatch + 1 : last_sbatch + 1] = directives
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    settings = [
        f"# written by `triaudit slurm submit` at {stamp}" + (f"; submitted as: {sbatch_cmd}" if sbatch_cmd else ""),
        f"export TRIAUDIT_REPO={shlex.quote(str(repo))}",
        f"export TRIAUDIT_BUILD_DIR={shlex.quote(str(build_dir))}",
        f"export TRIAUDIT_RESULTS={shlex.quote(str(results))}",
        f"export TRIAUDIT_PROFILE={shlex.quote(profile)}",
        f"export TRIAUDIT_PYTHON={shlex.quote(python)}",
        f"export TRIAUDIT_RUN_ARGS={shlex.quote(run_args)}",
    ]
    i = lines.index(SETTINGS_MARK)
    lines[i : i + 1] = settings
    return "\n".join(lines) + "\n"


def _unique_file(folder: Path, stem: str, suffix: str) -> tuple[Path, int]:
    k = 1
    while True:
        path = folder / f"{stem}{'' if k == 1 else f'-{k}'}{suffix}"
        try:
            return path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            k += 1


def submit(
    nodes: int,
    results: Path,
    build_dir: Path,
    profile: str = "quick",
    partition: str | None = None,
    time_limit: str | None = None,
    sbatch_args: list[str] | None = None,
    run_args: str = "",
    python: str | None = None,
    log=print,
) -> tuple[str, Path]:
    """Returns (job id, the script kept in the results folder)."""
    if nodes < 1:
        raise SlurmError(f"--nodes {nodes}: needs at least one node")
    if shutil.which("sbatch") is None:
        raise SlurmError("sbatch not found: the Slurm client tools are not installed here (or not on PATH)")
    if not build_dir.is_dir():
        raise SlurmError(
            f"--build-dir {build_dir} does not exist: build first (the nodes run the executables "
            "from it, so it must be on a filesystem they share)"
        )
    results = results.resolve()
    try:
        results.mkdir(parents=True, exist_ok=True)
        from triaudit.store.hooks import prepare

        prepare(results)  # the fleet's results store, where every node's run is added (store/hooks.py)
    except OSError as exc:
        raise SlurmError(f"--results {results}: cannot create it: {exc.strerror or exc}") from exc
    repo = TEMPLATE.parents[2]
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    script, fd = _unique_file(results, f"submitted-{stamp}", ".sbatch")
    cmd = ["sbatch", "--parsable", *(sbatch_args or []), str(script)]
    text = render(
        TEMPLATE.read_text(encoding="utf-8"),
        nodes,
        results,
        build_dir.resolve(),
        profile,
        python or sys.executable,
        repo,
        partition,
        time_limit,
        run_args,
        shlex.join(cmd),
    )
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise SlurmError(
            f"sbatch refused the job (exit {p.returncode}): {(p.stderr or p.stdout).strip()} (script kept: {script})"
        )
    m = re.match(r"\s*(\d+)", p.stdout)
    if not m:
        raise SlurmError(f"sbatch printed no job id: {p.stdout.strip()!r} (script kept: {script})")
    job_id = m.group(1)
    kept = results / f"job-{job_id}.sbatch"
    if not kept.exists():
        os.rename(script, kept)
        script = kept
    return job_id, script


# --- the job's state -------------------------------------------------------------------------


@dataclass
class JobState:
    state: str  # COMPLETED, RUNNING, ..., or "unknown" when Slurm no longer knows the job
    exit_code: str = ""
    nodelist: str = ""
    reason: str = ""
    source: str = ""  # sacct, scontrol or squeue: what answered
    notes: list = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.state in DONE or self.state == "unknown"


def parse_sacct(text: str, job_id: str) -> JobState | None:
    """`sacct -j ID -X -n -P -o JobID,State,ExitCode,NodeList,Reason`: the allocation's line."""
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) >= 4 and parts[0].split("_")[0].split("+")[0] == job_id:
            return JobState(
                parts[1].split()[0] if parts[1].strip() else "unknown",
                parts[2],
                parts[3],
                parts[4] if len(parts) > 4 else "",
                "sacct",
            )
    return None


def parse_scontrol(text: str) -> JobState | None:
    """`scontrol show job -o ID`: key=value fields on one line."""
    fields = dict(re.findall(r"(\w+(?:/\w+)?)=(\S*)", text))
    if "JobState" not in fields:
        return None
    return JobState(
        fields["JobState"], fields.get("ExitCode", ""), fields.get("NodeList", ""), fields.get("Reason", ""), "scontrol"
    )


def _run(cmd: list[str]) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None


def job_state(job_id: str) -> JobState:
    notes = []
    p = _run(["sacct", "-j", job_id, "-X", "-n", "-P", "-o", "JobID,State,ExitCode,NodeList,Reason"])
    if p is not None and p.returncode == 0:
        st = parse_sacct(p.stdout, job_id)
        if st is not None:
            return st
    elif p is not None:
        said = (p.stderr or p.stdout).strip()
        notes.append(
            "sacct: "
            + (
                "accounting storage is disabled on this cluster (no slurmdbd): asked scontrol"
                if "accounting storage is disabled" in said.lower()
                else said[:200]
            )
        )
    p = _run(["scontrol", "show", "job", "-o", job_id])
    if p is not None and p.returncode == 0:
        st = parse_scontrol(p.stdout)
        if st is not None:
            st.notes = notes
            return st
    p = _run(["squeue", "-h", "-j", job_id, "-o", "%T|%N|%r"])
    if p is not None and p.returncode == 0 and p.stdout.strip():
        state, nodes, reason = (p.stdout.strip().splitlines()[0].split("|") + ["", ""])[:3]
        return JobState(state, "", nodes, reason, "squeue", notes)
    notes.append(
        "Slurm no longer knows this job (finished longer ago than MinJobAge, without accounting): "
        "judged from the hosts' status files alone"
    )
    return JobState("unknown", source="none", notes=notes)


def wait(job_id: str, wait_s: float | None, log=print, poll_s: float = 2.0, state_fn=job_state) -> JobState:
    start = time.monotonic()
    last = None
    while True:
        st = state_fn(job_id)
        if st.state != last:
            log(
                f"job {job_id}: {st.state}"
                + (f" ({st.reason})" if st.reason and st.reason != "None" else "")
                + f" [{st.source}]"
            )
            last = st.state
        if st.done:
            return st
        if wait_s is not None and time.monotonic() - start + poll_s > wait_s:
            return st
        time.sleep(poll_s)
        poll_s = min(poll_s * 1.5, 30.0)


# --- what each node did ----------------------------------------------------------------------


def job_folder(results: Path, job_id: str) -> tuple[Path | None, list[Path]]:
    """The job's folder (the newest if a reset cluster reused the id) and every candidate."""
    cands = sorted(
        p
        for p in results.glob(f"job-{job_id}*")
        if p.is_dir() and re.fullmatch(rf"job-{job_id}(-\d{{8}}T\d{{6}}Z)?", p.name)
    )
    return (cands[-1] if cands else None), cands


def node_verdicts(expected: list[str], statuses: list[dict], st: JobState) -> list[dict]:
    """One row per node: expected ones first (in the job's order), then any unexpected reporter."""
    latest: dict[str, dict] = {}
    for s in statuses:
        key = s.get("node") or s.get("host") or "?"
        if key not in latest or str(s.get("started_utc", "")) >= str(latest[key].get("started_utc", "")):
            latest[key] = s
    timed_out = st.state == "TIMEOUT"
    rows = []
    for node in expected + sorted(set(latest) - set(expected)):
        s = latest.get(node)
        row: dict[str, Any] = {"node": node, "gpus": "", "run_dir": "", "ok": False}
        if s is None:
            row["verdict"] = (
                "timed out before it recorded anything"
                if timed_out
                else f"no record: the task never started or could not write to the results folder (job {st.state})"
            )
        else:
            state = s.get("state", "?")
            row["gpus"] = str(len(s.get("gpus") or []))
            row["run_dir"] = s.get("run_dir") or ""
            msg = s.get("message", "")
            if state == "complete":
                row["verdict"], row["ok"] = f"measured {len(s.get('gpus_measured') or [])} GPU(s)", True
            elif state in ("running", "interrupted") and timed_out:
                row["verdict"] = "timed out" + (" (partial run kept, marked incomplete)" if row["run_dir"] else "")
            elif state == "running":
                row["verdict"] = f"did not finish (job {st.state}; killed?)"
            elif state == "interrupted":
                row["verdict"] = f"interrupted (job {st.state})" + (" (partial run kept)" if row["run_dir"] else "")
            elif state == "no CUDA device":
                why = str(s.get("reason") or msg)
                inner = re.fullmatch(r"no CUDA device \((.*)\)", why)
                row["verdict"] = f"no CUDA device (exit 77): {inner.group(1) if inner else why}"
            else:
                row["verdict"] = f"{state} (exit {s.get('exit_code')}): {msg}"
            if node not in expected and expected:
                row["verdict"] += " (not a node of this job?)"
        rows.append(row)
    return rows


def _md_table(rows: list[dict]) -> list[str]:
    out = ["| node | verdict | GPUs | run folder |", "|---|---|---|---|"]
    out += [f"| {r['node']} | {r['verdict']} | {r['gpus']} | {r['run_dir']} |" for r in rows]
    return out


def collect(
    job_id: str, results: Path, wait_s: float | None = None, log=print, state_fn=job_state, poll_s: float = 2.0
) -> int:
    from triaudit.judge import outliers as O
    from triaudit.report.page import ReportError, write_report
    from triaudit.results.gbench import LoadError
    from triaudit.results.reading import expand_paths

    if not job_id.isdigit():
        raise SlurmError(f"job id {job_id!r}: expected a number (what `slurm submit` printed)")
    st = wait(job_id, wait_s, log, poll_s, state_fn)
    if not st.done:
        log(f"job {job_id} is still {st.state} after {wait_s:g} s: run collect again later (nothing judged yet)")
        return EXIT_NOT_JUDGED
    jobdir, cands = job_folder(results, job_id)
    if jobdir is None:
        out = results / f"job-{job_id}.out"
        tail = out.read_text(errors="replace").strip().splitlines()[-5:] if out.exists() else []
        if st.state == "unknown":
            raise SlurmError(
                f"job {job_id}: Slurm does not know it and {results} has no job-{job_id} folder (wrong --results?)"
            )
        log(
            f"job {job_id} ended {st.state} without writing its folder under {results}"
            + ("; its output ends:\n  " + "\n  ".join(tail) if tail else "")
        )
        return EXIT_PROBLEM
    if len(cands) > 1:
        log(f"note: {len(cands)} folders for job id {job_id} (the id was reused): using {jobdir.name}")
    rec = slurm_job.read(jobdir)
    expected = rec.get("nodes") or (
        slurm_job.expand_nodelist(st.nodelist) if st.nodelist and st.nodelist not in ("(null)", "None assigned") else []
    )
    rows = node_verdicts(expected, read_statuses(jobdir), st)

    head = [
        f"# triaudit fleet job {job_id}",
        "",
        f"Slurm: {st.state}"
        + (f", exit code {st.exit_code}" if st.exit_code else "")
        + (f", reason {st.reason}" if st.reason and st.reason != "None" else "")
        + f" (from {st.source})."
        + (f" srun exit {rec['srun_exit_code']}." if rec.get("srun_exit_code") is not None else ""),
        f"{len(expected)} node(s) in the job; {sum(r['ok'] for r in rows)} measured."
        if expected
        else "The job's node list is unknown (no job.record and Slurm forgot the job).",
        "",
    ]
    head += [f"- {n}" for n in st.notes] + ([""] if st.notes else [])
    head += _md_table(rows) + [""]
    for line in _md_table(rows):
        log(line)

    out_dir = jobdir / "report"
    k = 2
    while out_dir.exists():
        out_dir = jobdir / f"report-{k}"
        k += 1
    from triaudit.store.hooks import add_job

    add_job(jobdir, log)  # the nodes' runs into the results store (nodes often lack its libraries)
    try:
        files = expand_paths([jobdir])
        judged = O.find_outliers([jobdir]) if files else None
    except (LoadError, O.OutlierError) as exc:
        raise SlurmError(f"fleet report on {jobdir}: {exc}") from exc
    written, report_failed = [], ""
    if files:
        try:
            written = write_report([jobdir], out_dir)
        except (LoadError, ReportError) as exc:
            report_failed = str(exc)
        except Exception as exc:  # noqa: BLE001 - the verdict above stands; say what broke, no traceback
            report_failed = f"{type(exc).__name__}: {exc}"
        if report_failed:
            log(f"the full report could not be written: {report_failed}")
    body = head + ([f"The full report could not be written: {report_failed}", ""] if report_failed else [])
    if judged is not None:
        body += [O.summary_markdown(judged)] + (
            ["", f"Full report: {out_dir.name}/report.html (and report.md)."] if written else []
        )
    else:
        body += ["No result files: nothing was measured, so there is nothing to judge."]
    out_dir.mkdir(parents=True, exist_ok=True)
    fleet_md = out_dir / "fleet.md"
    fleet_md.write_text("\n".join(body) + "\n", encoding="utf-8")
    if judged is not None:
        log(O.summary_markdown(judged))
    log(f"wrote {fleet_md}" + (f" and {len(written)} report file(s)" if written else ""))

    if rows and all(r["verdict"].startswith("no CUDA device") for r in rows):
        return EXIT_NO_DEVICE
    if not rows or not all(r["ok"] for r in rows) or st.state not in ("COMPLETED", "unknown"):
        return EXIT_PROBLEM
    if judged is None:
        return EXIT_NOT_JUDGED
    return O.exit_code(judged)
