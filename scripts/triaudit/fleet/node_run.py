"""`triaudit run --all-gpus`: every GPU of this host at once, one process per GPU.

Each GPU gets its own chain of executables (stream, gemm, memcpy, launch), all chains start
together, so every GPU is measured with its siblings loaded, as in a real job. A GPU is pinned by
its UUID in CUDA_VISIBLE_DEVICES (CUDA's own device order is "fastest first", not nvidia-smi's
PCI order, so an index could name another card); TRIAUDIT_GPU_INDEX carries nvidia-smi's index
and TRIAUDIT_SIBLINGS_LOADED=true into the result's context. After the per-GPU phase,
the node-level corners (corners/: scope "node", p2p and the NCCL collectives) run once over all the
chosen GPUs (node-level figures, not one GPU's).

Layout under --results (a Slurm job gives each job its own folder):
    <card>/<UTC stamp>-<host>/        manifest.json (names each GPU), <exe>.gpu<i>.json/.log,
                                      <node-level exe>.node.json
    hosts/<UTC stamp>-<node>.status   this host's record, JSON: running, complete, failed,
                                      interrupted, no CUDA device (exit 77), bad setup
The status file is written when the run starts and finalised when it ends, so a node killed by
the scheduler's time limit is still on record ("running", never finished). Nothing is
overwritten: both names are made unique.

Standard library only: it runs under srun on bare GPU nodes with the system python3
(`python3 -m triaudit run --all-gpus`, PYTHONPATH=<repo>/scripts).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from triaudit.core.builddir import git_commit
from triaudit.core.errors import TriauditError
from triaudit.core.names import slug
from triaudit.corners import node_level_executables
from triaudit.results.case_info import gpu_measured
from triaudit.results.status import StatusFile
from triaudit.runner import child, profiles, timemodel
from triaudit.runner import suite as runner
from triaudit.runner.suite import EXIT_FAILED, EXIT_NO_DEVICE, EXIT_OK, EXIT_USAGE, Outcome

EXIT_INTERRUPTED = 130
NODE_LEVEL = node_level_executables()  # measured once over all chosen GPUs, not per GPU


@dataclass
class Gpu:
    index: int  # nvidia-smi's (NVML's, PCI order) index
    uuid: str
    pci_bus_id: str
    name: str


@dataclass
class Setup:
    """What a whole-node run was asked to do (the command line, resolved)."""

    build_dir: Path
    results: Path
    profile: str = "quick"
    only: list[str] | None = None
    extra_args: list[str] = field(default_factory=list)
    gpus: list[int] | None = None
    timeout_s: float | None = None
    budget_s: float | None = None
    bind_numa: str = "on"  # each per-GPU process on its GPU's NUMA node, as a real job would place it


class SetupError(TriauditError):
    """Bad --gpus, CUDA_VISIBLE_DEVICES naming no listed GPU, an nvidia-smi line that cannot be read."""


def utc_stamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def node_name() -> str:
    """Slurm's name for this node when under srun (what sacct and the node list say), else the host name."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname()


def parse_gpu_list(text: str) -> list[int]:
    """--gpus 0,3 -> [0, 3]; refuses anything but distinct non-negative integers."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit():
            raise SetupError(f"--gpus {text!r}: {part!r} is not a GPU index (expected e.g. --gpus 0,3)")
        if int(part) in out:
            raise SetupError(f"--gpus {text!r}: GPU {part} named twice")
        out.append(int(part))
    return out


# --- which GPUs ------------------------------------------------------------------------------


def parse_nvidia_smi(text: str) -> list[Gpu]:
    """Lines of `nvidia-smi --query-gpu=index,uuid,pci.bus_id,name --format=csv,noheader`."""
    gpus = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split(",", 3)]
        if len(parts) != 4 or not parts[0].isdigit():
            raise SetupError(f"nvidia-smi printed a line that is not index, uuid, pci.bus_id, name: {line!r}")
        gpus.append(Gpu(int(parts[0]), parts[1], parts[2], parts[3]))
    return gpus


def list_gpus(nvidia_smi: str = "nvidia-smi") -> tuple[list[Gpu], str]:
    """Every GPU the driver lists, and why there are none when there are none."""
    cmd = [nvidia_smi, "--query-gpu=index,uuid,pci.bus_id,name", "--format=csv,noheader"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        return [], "nvidia-smi not found (no NVIDIA driver on this host?)"
    except (OSError, subprocess.SubprocessError) as exc:
        return [], f"nvidia-smi could not run: {exc}"
    if p.returncode != 0:
        said = (p.stdout + p.stderr).strip().splitlines()
        return [], f"nvidia-smi exit {p.returncode}: {said[0] if said else 'no output'}"
    gpus = parse_nvidia_smi(p.stdout)
    return gpus, "" if gpus else "nvidia-smi lists no GPU"


def visible(gpus: list[Gpu], cuda_visible_devices: str | None) -> tuple[list[Gpu], str]:
    """An inherited CUDA_VISIBLE_DEVICES (Slurm sets one for a GPU allocation) restricts the GPUs.
    Entries are nvidia-smi indices or UUIDs (GPU-...; a unique prefix is enough, as for CUDA)."""
    if cuda_visible_devices is None:
        return gpus, ""
    entries = [e.strip() for e in cuda_visible_devices.split(",") if e.strip()]
    if not entries:
        return [], "CUDA_VISIBLE_DEVICES is set and empty: every GPU is hidden"
    chosen: list[Gpu] = []
    for e in entries:
        if e.isdigit():
            hits = [g for g in gpus if g.index == int(e)]
        else:
            hits = [g for g in gpus if g.uuid.startswith(e)]
        if len(hits) != 1:
            raise SetupError(
                f"CUDA_VISIBLE_DEVICES={cuda_visible_devices!r}: {e!r} names "
                f"{'no' if not hits else 'more than one'} GPU nvidia-smi lists "
                f"({', '.join(f'{g.index} {g.uuid}' for g in gpus) or 'none'})"
            )
        if hits[0] not in chosen:
            chosen.append(hits[0])
    return chosen, ""


def pick(gpus: list[Gpu], wanted: list[int] | None) -> list[Gpu]:
    if wanted is None:
        return gpus
    by_index = {g.index: g for g in gpus}
    missing = [i for i in wanted if i not in by_index]
    if missing:
        raise SetupError(
            f"--gpus: no GPU {', '.join(map(str, missing))} on {socket.gethostname()} "
            f"(visible: {', '.join(str(g.index) for g in gpus) or 'none'})"
        )
    return [by_index[i] for i in wanted]


def slurm_context(env=os.environ) -> dict:
    keys = {
        "SLURM_JOB_ID": "job_id",
        "SLURM_CLUSTER_NAME": "cluster",
        "SLURM_JOB_NODELIST": "job_nodelist",
        "SLURM_NODEID": "node_id",
        "SLURM_PROCID": "task_id",
        "SLURM_STEP_ID": "step_id",
    }
    return {v: env[k] for k, v in keys.items() if k in env}


# --- running ---------------------------------------------------------------------------------


class _Chains:
    """The executables of every GPU chain; what is running can be stopped from the main thread."""

    def __init__(self, staging: Path, deadline: float | None, timeout_s: float | None, log):
        self.staging, self.deadline, self.timeout_s, self.log = staging, deadline, timeout_s, log
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.procs: set[subprocess.Popen] = set()

    def run(
        self, name: str, exe: Path, args: list[str], tag: str, env: dict, gpu_name: str = "", gpus: int = 1
    ) -> dict | None:
        """One executable into <name>.<tag>.json/.log; None when not started (stopped, budget spent).
        Its limit is the time model's estimate x 3 + 30 s (runner.step_limit), as on one GPU, so one
        hang cannot hold a node's chain until the scheduler kills the job; --timeout-s lowers it."""
        cases, described = runner.step_cases(exe, args), timemodel.describe_cases(exe)
        limit, _basis = runner.step_limit(name, cases, args, gpu_name, gpus, described)
        if self.timeout_s is not None:
            limit = min(limit, self.timeout_s)
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left < runner.MIN_START_S:
                return None
            limit = left if limit is None else min(limit, left)
        if self.stop.is_set():
            return None
        json_path = self.staging / f"{name}.{tag}.json"
        log_path = self.staging / f"{name}.{tag}.log"
        cmd = [str(exe), f"--benchmark_out={json_path}", *args]
        self.log(f"  [{tag}] {name} started")

        def started(proc):
            with self.lock:  # interrupt() holds it too: a process it missed is stopped at once
                self.procs.add(proc)
                late = self.stop.is_set()
            if late:
                child.end_group(proc, signal.SIGINT)

        with self.lock:
            if self.stop.is_set():
                return None
        try:
            done = child.run_executable(cmd, log_path, limit, env=env, on_start=started)
        except BaseException:
            child.salvage(json_path, "interrupted")
            raise
        finally:
            with self.lock:
                self.procs = {p for p in self.procs if p.poll() is None}
        rc = done.exit_code
        saved = child.salvage(json_path, f"stopped at its limit of {limit:.0f} s" if done.timed_out else f"exit {rc}")
        self.log(f"  [{tag}] {name} exit {rc} after {done.seconds:.0f} s" + (f"; {saved}" if saved else ""))
        entry = {
            "step": name,
            "executable": profiles.STEP_EXECUTABLE.get(name, name),
            "command": cmd,
            "exit_code": rc,
            "seconds": done.seconds,
            "limit_s": round(limit, 1),
            "json": json_path.name if json_path.exists() else None,
            "log": log_path.name,
            "cuda_visible_devices": env.get("CUDA_VISIBLE_DEVICES"),
        }
        if saved:
            entry["salvaged"] = saved
        return entry

    def chain(self, gpu: Gpu, exes: list[tuple[str, Path, list[str]]], env: dict, record: dict) -> None:
        for name, exe, args in exes:
            r = self.run(name, exe, args, f"gpu{gpu.index}", env, gpu.name)
            if r is None:  # stopped or out of budget: the manifest lists it as not started
                continue
            record["executables"].append(r)
            if r["exit_code"] == EXIT_NO_DEVICE:  # the rest would only skip every case too
                break

    def interrupt(self) -> None:
        self.stop.set()
        with self.lock:
            procs = list(self.procs)
        for p in procs:  # each process group: SIGINT, then SIGKILL after the grace period
            child.end_group(p, signal.SIGINT)


def _gpu_env(base: dict, gpu_uuids: list[str], index: str | None, siblings: bool) -> dict:
    env = dict(base)
    env["CUDA_VISIBLE_DEVICES"] = ",".join(gpu_uuids)
    env["TRIAUDIT_SIBLINGS_LOADED"] = "true" if siblings else "false"
    if index is None:
        env.pop("TRIAUDIT_GPU_INDEX", None)
    else:
        env["TRIAUDIT_GPU_INDEX"] = index
    return env


def _args_for(name: str, profile: str, extra: list[str], per_gpu: bool, bind_numa: str = "on") -> list[str]:
    args = profiles.profile_args(profile, name) + list(extra)
    if per_gpu and not any(a.startswith("--bind-numa") for a in args):
        args.append(f"--bind-numa={bind_numa}")
    return args


def _probe(exe: Path, name: str, staging: Path, profile: str, env: dict) -> tuple[int, str]:
    """nvidia-smi found no GPU: ask CUDA itself (the executable exits 77 at once without a device)."""
    args = _args_for(name, profile, [], per_gpu=False)
    try:
        p = subprocess.run(
            [str(exe), f"--benchmark_out={staging / 'probe.json'}", *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return EXIT_FAILED, f"{name} could not run: {exc}"
    return p.returncode, runner.no_device_reason(p.stdout + p.stderr) if p.returncode == EXIT_NO_DEVICE else (
        p.stdout + p.stderr
    ).strip()[-300:]


def _check_uuid(staging: Path, entry: dict, gpu_uuids: list[str]) -> str:
    """The context must name the GPU we pinned: a mismatch means the results are another card's."""
    if not entry.get("json"):
        return "no result file"
    try:
        ctx = json.loads((staging / entry["json"]).read_text()).get("context", {})
    except (OSError, ValueError) as exc:
        return f"unreadable: {exc}"
    if not gpu_measured(ctx):
        return "no device in context"
    got = str(ctx.get("gpu_uuid", ""))
    if not got or got.startswith("unknown"):
        return "context has no gpu_uuid"
    return (
        "ok"
        if any(got == u or got.startswith(u) or u.startswith(got) for u in gpu_uuids)
        else f"MISMATCH: the context names {got}, expected {', '.join(gpu_uuids)}"
    )


def _card_of(staging: Path) -> str:
    """The GPU model as CUDA names it (as `triaudit run` files runs); mixed models on one node say so."""
    names = runner.staged_gpu_names(staging)
    if len(names) > 1:
        return "mixed " + " ".join(sorted(names))
    return next(iter(names), "")


def run_all_gpus(s: Setup, log=print, nvidia_smi: str = "nvidia-smi", env: dict | None = None) -> Outcome:
    env = dict(os.environ if env is None else env)
    started = utc_stamp()
    record: dict[str, Any] = {
        "host": socket.gethostname(),
        "node": node_name(),
        "state": "running",
        "exit_code": None,
        "message": "",
        "started_utc": started,
        "finished_utc": None,
        "pid": os.getpid(),
        "profile": s.profile,
        "gpus": [],
        "run_dir": None,
        "slurm": slurm_context(env),
    }
    try:
        s.results.mkdir(parents=True, exist_ok=True)
        status = StatusFile(s.results, record)
    except OSError as exc:
        return Outcome(EXIT_USAGE, None, f"cannot write into --results {s.results}: {exc.strerror or exc}")
    log(f"{record['node']}: status in {status.path}")

    def finish(code: int, run_dir: Path | None, message: str, state: str, **extra) -> Outcome:
        status.update(
            state=state,
            exit_code=code,
            message=message,
            finished_utc=utc_stamp(),
            run_dir=str(run_dir.relative_to(s.results)) if run_dir else None,
            **extra,
        )
        return Outcome(code, run_dir, message)

    if s.profile not in profiles.PROFILES:
        return finish(
            EXIT_USAGE,
            None,
            f"unknown profile {s.profile!r}; choose one of {', '.join(profiles.PROFILES)}",
            "bad setup",
        )
    if not s.build_dir.is_dir():
        return finish(
            EXIT_USAGE,
            None,
            f"build directory {s.build_dir} does not exist on {record['host']}: build first",
            "bad setup",
        )
    exes = profiles.find_steps(s.build_dir, s.only)
    if not exes:
        return finish(
            EXIT_USAGE,
            None,
            f"no triaudit executables under {s.build_dir}" + (f" matching {s.only}" if s.only else ""),
            "bad setup",
        )
    try:
        listed, why_none = list_gpus(nvidia_smi)
        chosen, hidden = visible(listed, env.get("CUDA_VISIBLE_DEVICES"))
        chosen = pick(chosen, s.gpus)
    except SetupError as exc:
        return finish(EXIT_USAGE, None, str(exc), "bad setup")
    record["gpus"] = [asdict(g) for g in chosen]

    staging = s.results / ".incoming" / f"{started}-{slug(record['node'])}-{os.getpid()}"
    staging.mkdir(parents=True, exist_ok=False)
    if not chosen:
        name, exe = next(iter(exes.items()))
        rc, said = _probe(exe, name, staging, s.profile, env)
        shutil.rmtree(staging, ignore_errors=True)
        runner._tidy_incoming(s.results)
        why = hidden or why_none
        if rc == EXIT_NO_DEVICE:
            return finish(
                EXIT_NO_DEVICE,
                None,
                f"{said}; {why}: nothing measured on {record['node']}",
                "no CUDA device",
                reason=said,
            )
        if hidden:
            return finish(
                EXIT_NO_DEVICE, None, f"{why}: nothing measured on {record['node']}", "no CUDA device", reason=why
            )
        return finish(
            EXIT_FAILED,
            None,
            f"{why}, yet {name} found a CUDA device (exit {rc}): whole-node mode needs "
            "nvidia-smi to name each GPU; `triaudit run` without --all-gpus measures one",
            "failed",
        )

    per_gpu = [
        (n, e, _args_for(n, s.profile, s.extra_args, True, s.bind_numa)) for n, e in exes.items() if n not in NODE_LEVEL
    ]
    node_level = [(n, e, _args_for(n, s.profile, s.extra_args, False)) for n, e in exes.items() if n in NODE_LEVEL]
    manifest: dict[str, Any] = {
        "profile": s.profile,
        "started_utc": started,
        "host": record["host"],
        "node": record["node"],
        "git_commit": git_commit(),
        "complete": False,
        "mode": "all-gpus",
        "siblings_loaded": len(chosen) > 1,
        "slurm": record["slurm"],
        "cuda_visible_devices_inherited": env.get("CUDA_VISIBLE_DEVICES"),
        "gpus": [dict(asdict(g), executables=[]) for g in chosen],
        "node_level": {"executables": []},
        "executables": [],
    }
    if s.budget_s is not None:
        manifest["budget_s"] = s.budget_s
    log(
        f"{record['node']}: {len(chosen)} GPU(s) at once: "
        + ", ".join(f"{g.index} {g.name} {g.pci_bus_id}" for g in chosen)
    )
    began = time.monotonic()
    chains = _Chains(staging, None if s.budget_s is None else began + s.budget_s, s.timeout_s, log)
    interrupted = False
    previous = signal.signal(signal.SIGTERM, runner._raise_interrupt)  # scancel / time limit arrive as SIGTERM
    try:
        threads = []
        for g, rec in zip(chosen, manifest["gpus"]):
            env_g = _gpu_env(env, [g.uuid], str(g.index), siblings=len(chosen) > 1)
            t = threading.Thread(target=chains.chain, args=(g, per_gpu, env_g, rec), daemon=True)
            t.start()
            threads.append(t)
        for t in threads:
            while t.is_alive():
                t.join(timeout=0.5)  # short joins: SIGTERM/Ctrl-C reach the main thread
        if node_level:
            env_n = _gpu_env(env, [g.uuid for g in chosen], None, siblings=False)
            rec = manifest["node_level"]
            for n, e, a in node_level:
                r = chains.run(n, e, a, "node", env_n, chosen[0].name if chosen else "", len(chosen))
                if r is not None:
                    rec["executables"].append(r)
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted (SIGTERM: the scheduler's time limit or a cancel, or Ctrl-C): stopping every GPU")
        chains.interrupt()
        for t in threads:
            t.join(timeout=15)
    finally:
        signal.signal(signal.SIGTERM, previous)

    # A GPU's thread still winding down after an interruption may add its last record after this
    # (join above gives up after 15 s): the checks below read uuid_check with a default.
    for rec in manifest["gpus"]:
        for entry in list(rec["executables"]):
            entry["uuid_check"] = _check_uuid(staging, entry, [rec["uuid"]])
    all_runs = [e for rec in manifest["gpus"] for e in rec["executables"]] + manifest["node_level"]["executables"]
    manifest["executables"] = all_runs  # flat, as `triaudit run` writes it
    manifest["finished_utc"] = utc_stamp()
    for rec, names in [(g, [n for n, _, _ in per_gpu]) for g in manifest["gpus"]] + [
        (manifest["node_level"], [n for n, _, _ in node_level])
    ]:
        ran = {e["step"] for e in rec["executables"]}
        if [n for n in names if n not in ran]:
            rec["not_started"] = [n for n in names if n not in ran]
    not_started = [
        f"{n} (gpu{rec['index']})" for rec in manifest["gpus"] for n in rec.get("not_started", [])
    ] + manifest["node_level"].get("not_started", [])
    if not_started:
        manifest["not_started"] = not_started
    manifest["complete"] = not interrupted and not not_started

    card = _card_of(staging)
    if not card:
        logs = "".join(
            (staging / e["log"]).read_text(errors="replace") for e in all_runs if (staging / e["log"]).exists()
        )
        codes = [e["exit_code"] for e in all_runs]
        if not interrupted and codes and all(c == EXIT_NO_DEVICE for c in codes):
            shutil.rmtree(staging, ignore_errors=True)  # they said only "no CUDA device"
            runner._tidy_incoming(s.results)
            reason = runner.no_device_reason(logs)
            return finish(
                EXIT_NO_DEVICE,
                None,
                f"{reason}: nvidia-smi lists {len(chosen)} GPU(s) but CUDA uses none; nothing written",
                "no CUDA device",
                reason=reason,
            )
        # Logs are never deleted: they stay in results/.incoming with the manifest.
        runner._write_manifest(staging, manifest)
        if interrupted:
            return finish(
                EXIT_INTERRUPTED,
                None,
                f"interrupted before any executable reported a device; its logs are kept in {staging}",
                "interrupted",
            )
        problems_said = [
            f"{e['step']} (exit {e['exit_code']}): {runner.last_words(staging / e['log'])}"
            for e in all_runs
            if e["exit_code"] != EXIT_NO_DEVICE
        ]
        return finish(
            EXIT_FAILED,
            None,
            f"no executable reported a device; exit codes {codes}"
            + (": " + "; ".join(problems_said) if problems_said else "")
            + f"; its logs are kept in {staging}",
            "failed",
        )

    manifest["card"] = card
    runner._write_manifest(staging, manifest)
    final = runner._unique_dir(s.results / slug(card), f"{started}-{slug(record['host'])}")
    final.parent.mkdir(parents=True, exist_ok=True)
    os.rename(staging, final)
    runner._tidy_incoming(s.results)

    tagged = [(f"gpu{rec['index']}", e) for rec in manifest["gpus"] for e in rec["executables"]] + [
        ("node", e) for e in manifest["node_level"]["executables"]
    ]
    failed = [f"{e['step']} ({tag}) exit {e['exit_code']}" for tag, e in tagged if e["exit_code"] != EXIT_OK]
    wrong = [
        f"{e['executable']} gpu{rec['index']}: {e['uuid_check']}"
        for rec in manifest["gpus"]
        for e in list(rec["executables"])
        if str(e.get("uuid_check", "")).startswith("MISMATCH")
    ]
    gpus_note = {"gpus_measured": [rec["index"] for rec in manifest["gpus"] if rec["executables"]]}
    if interrupted:
        return finish(
            EXIT_INTERRUPTED,
            final,
            f"interrupted; partial run kept in {final} (marked incomplete)",
            "interrupted",
            **gpus_note,
        )
    problems = failed + wrong + ([f"not started: {', '.join(not_started)}"] if not_started else [])
    if problems:
        return finish(EXIT_FAILED, final, f"run written to {final}; " + "; ".join(problems), "failed", **gpus_note)
    return finish(EXIT_OK, final, f"run written to {final}", "complete", **gpus_note)
