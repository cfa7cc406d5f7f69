"""Running a soak: one triaudit_soak process per GPU, all at once, each pinned by its UUID (its
peer's too, for the p2p round trips), watched through its hash log (a line per window, an SDC
said the moment it is logged, a process whose windows stop coming stopped), then judged
(analysis.py) and written as a run (outputs.py). The checkpoint (checkpoint.py) is saved as each
segment starts and ends; an interrupted soak (Ctrl-C, SIGTERM from a batch system) stops its
processes, keeps every finished window and says how to resume. Standard library only: it runs
on bare GPU nodes.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from triaudit.core.builddir import git_commit
from triaudit.core.errors import EXIT_FOUND, EXIT_INTERRUPTED, EXIT_NO_DEVICE, EXIT_USAGE
from triaudit.core.names import slug
from triaudit.runner import child
from triaudit.runner.suite import no_device_reason
from triaudit.soak import checkpoint as C
from triaudit.soak import plan as P
from triaudit.soak.analysis import analyse
from triaudit.soak.hashlog import parse_window
from triaudit.soak.outputs import card_of, discard, move_into_place, write_folder
from triaudit.soak.progress import Progress, clock, window_line
from triaudit.soak.sdc import OPERATIONS

POLL_S = 1.0  # how often the hash logs are read while the processes run
LOG = "soak.log"
EXECUTABLE = "triaudit_soak"


@dataclass
class Outcome:
    exit_code: int
    run_dir: Path | None
    message: str


def find_executable(build_dir: Path) -> Path | None:
    hits = sorted(p for p in Path(build_dir).rglob(EXECUTABLE) if p.is_file() and os.access(p, os.X_OK))
    return hits[0] if hits else None


def probe(exe: Path, env: dict, scratch: Path) -> tuple[int, str]:
    """nvidia-smi named no GPU: asks CUDA itself, with the smallest soak (exit 77 at once without
    a device, with CUDA's reason)."""
    out = scratch / "probe.json"
    cmd = [
        str(exe),
        f"--benchmark_out={out}",
        "--windows=1",
        f"--window-s={P.MIN_WINDOW_S:g}",
        "--gemm-dim=256",
        "--copy-bytes=1MiB",
    ]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=P.SETUP_ALLOWANCE_S, env=env)
    except (OSError, subprocess.SubprocessError) as exc:
        return 1, f"{exe.name} could not run: {exc}"
    text = p.stdout + p.stderr
    return p.returncode, no_device_reason(text) if p.returncode == EXIT_NO_DEVICE else text.strip()[-300:]


def new_soak(
    results: Path,
    build_dir: Path,
    gpus: list[P.SoakGpu],
    duration_s: float,
    window_s: float,
    drift_pct: float,
    extra: list[str],
    node: str,
) -> tuple[Path, C.Checkpoint]:
    """A new soak's folder under results/.incoming and its first checkpoint."""
    windows, window = P.windows_for(duration_s, window_s)
    started = C.utc_stamp()
    folder = Path(results) / ".incoming" / f"soak-{started}-{slug(node)}-{os.getpid()}"
    (folder / C.SEGMENTS).mkdir(parents=True, exist_ok=False)
    ck = C.Checkpoint(
        node=node,
        host=socket.gethostname(),
        started_utc=started,
        start_unix=time.time(),
        duration_s=duration_s,
        window_s=window,
        windows=windows,
        drift_bound_pct=drift_pct,
        build_dir=str(Path(build_dir).resolve()),
        extra_args=list(extra),
        gpus=list(gpus),
        git_commit=git_commit(),
    )
    ck.save(folder)
    return folder, ck


def _env(base: dict, gpu: P.SoakGpu, peer: P.SoakGpu | None, siblings: bool) -> dict:
    env = dict(base)
    env["CUDA_VISIBLE_DEVICES"] = gpu.uuid + (f",{peer.uuid}" if peer else "")
    env["TRIAUDIT_GPU_INDEX"] = str(gpu.index)
    env["TRIAUDIT_SIBLINGS_LOADED"] = "true" if siblings else "false"
    return env


class _Processes:
    """The running processes of a segment, stoppable from the main thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.procs: dict[str, subprocess.Popen] = {}
        self.stopping = threading.Event()
        self.codes: dict[str, int] = {}
        self.failures: dict[str, str] = {}

    def run(self, uuid: str, cmd: list[str], log: Path, limit: float, env: dict) -> None:
        def started(proc: subprocess.Popen) -> None:
            with self.lock:
                self.procs[uuid] = proc
                late = self.stopping.is_set()
            if late:
                child.end_group(proc, signal.SIGINT)

        try:
            done = child.run_executable(cmd, log, limit, env=env, on_start=started)
            self.codes[uuid] = done.exit_code
        except Exception as exc:  # noqa: BLE001 - a process that cannot start is this GPU's error, said once
            self.failures[uuid] = f"could not run {cmd[0]}: {exc}"
            self.codes[uuid] = 1

    def stop(self, uuid: str | None = None) -> None:
        with self.lock:
            if uuid is None:
                self.stopping.set()
            procs = [p for u, p in self.procs.items() if uuid is None or u == uuid]
        for p in procs:
            child.end_group(p, signal.SIGINT)


class _Watch:
    """Reads each process's hash log as it grows: the window lines, SDC the moment it is logged."""

    def __init__(self, path: Path, gpu: P.SoakGpu):
        self.path, self.gpu = path, gpu
        self.offset = 0
        self.last = time.monotonic()
        self.windows = 0

    def new_windows(self) -> list:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except OSError:
            return []
        end = chunk.rfind(b"\n")
        if end < 0:
            return []
        self.offset += end + 1
        out = []
        for line in chunk[: end + 1].decode("utf-8", errors="replace").splitlines():
            try:
                r = json.loads(line)
                if r.get("record") == "window":
                    out.append(parse_window(r))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # the analysis reads the log again and names what it cannot read
        if out:
            self.last = time.monotonic()
            self.windows += len(out)
        return out


def process_command(exe: Path, json_path: Path, ck: C.Checkpoint, first: int, windows: int, peer: bool) -> list[str]:
    """One GPU's triaudit_soak: its windows, numbered on from `first`, on the soak's clock; the
    GPU is device 0 of its CUDA_VISIBLE_DEVICES and its peer device 1."""
    return [
        str(exe),
        f"--benchmark_out={json_path}",
        f"--windows={windows}",
        f"--first-window={first}",
        f"--window-s={ck.window_s:g}",
        f"--soak-start-unix={ck.start_unix:.3f}",
        "--device=0",
        *(["--peer-device=1"] if peer else []),
        *([] if any(a.startswith("--bind-numa") for a in ck.extra_args) else ["--bind-numa=on"]),
        *ck.extra_args,
    ]


def _segment(folder: Path, ck: C.Checkpoint, exe: Path, env: dict, progress: Progress, plan: dict) -> bool:
    """Runs one segment: GPU uuid -> (first window, windows); False when it was interrupted."""
    seg = C.Segment(
        len(ck.segments), C.utc_stamp(), {u: f for u, (f, _) in plan.items()}, {u: n for u, (_, n) in plan.items()}
    )
    seg.exit_codes = {u: None for u in plan}
    ck.segments.append(seg)
    ck.save(folder)
    chosen = [g for g in ck.gpus if g.uuid in plan]
    peer_of = P.peers(chosen)
    procs = _Processes()
    threads, watches = [], []
    for g in chosen:
        first, n = plan[g.uuid]
        json_path, hashes, log = C.segment_paths(folder, g, seg.number)
        peer = peer_of.get(g.uuid)
        cmd = process_command(exe, json_path, ck, first, n, peer is not None)
        limit = P.process_limit_s(n, ck.window_s)
        t = threading.Thread(
            target=procs.run, args=(g.uuid, cmd, log, limit, _env(env, g, peer, len(ck.gpus) > 1)), daemon=True
        )
        progress.line(
            f"{g.tag} ({g.name}, {g.uuid}): windows {first + 1}-{first + n} of {ck.windows}"
            + (f", p2p with {peer.tag}" if peer else ""),
            important=True,
        )
        t.start()
        threads.append(t)
        watches.append(_Watch(hashes, g))
    interrupted = False
    try:
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(timeout=POLL_S / max(1, len(threads)))
            _report(watches, ck, progress, procs, seg)
        _report(watches, ck, progress, procs, seg)
    except KeyboardInterrupt:
        interrupted = True
        progress.line(
            "interrupted (Ctrl-C, or SIGTERM from the batch system): stopping every GPU's process", important=True
        )
        procs.stop()
        for t in threads:
            t.join(timeout=child.GRACE_S * 2)
    for g in chosen:
        json_path, _, log = C.segment_paths(folder, g, seg.number)
        code = procs.codes.get(g.uuid)
        # A process the interrupt stopped has no exit of its own to judge (None, as after a reboot);
        # what it finished is judged from its files.
        seg.exit_codes[g.uuid] = None if interrupted else code
        if g.uuid in procs.failures:  # said in the process's own log, after what it said
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"\ntriaudit soak: {procs.failures[g.uuid]}\n")
        child.salvage(json_path, "interrupted" if interrupted else f"exit {code}")
    seg.ended_utc = C.utc_stamp()
    ck.save(folder)
    return not interrupted


def _report(watches: list[_Watch], ck: C.Checkpoint, progress: Progress, procs: _Processes, seg: C.Segment) -> None:
    now = time.monotonic()
    for w in watches:
        for win in w.new_windows():
            elapsed = win.end_unix - ck.start_unix
            progress.line(
                window_line(w.gpu.tag, win, ck.windows, elapsed),
                important=any(x.deviating for x in win.workloads.values()),
            )
            for key, load in win.workloads.items():
                if load.deviating:
                    progress.line(
                        f"SDC on {w.gpu.tag} ({w.gpu.uuid}) in window {win.window}: {load.deviating} of {load.checked} "
                        f"{OPERATIONS.get(key, key)} differed ({load.case})",
                        important=True,
                    )
        limit = P.stall_limit_s(ck.window_s, first_window=w.windows == 0)
        if procs.codes.get(w.gpu.uuid) is None and now - w.last > limit and w.gpu.uuid not in procs.failures:
            procs.failures[w.gpu.uuid] = (
                f"no window finished in {limit:.0f} s: the load or its host thread hung; stopped"
            )
            progress.line(f"{w.gpu.tag}: {procs.failures[w.gpu.uuid]}", important=True)
            procs.stop(w.gpu.uuid)
    done = sum(min(w.windows + seg.first_window.get(w.gpu.uuid, 0), ck.windows) for w in watches)
    total = ck.windows * max(1, len(watches))
    progress.status(
        f"soak {clock(time.time() - ck.start_unix)} · {done}/{total} GPU-windows · "
        + " ".join(f"{w.gpu.tag} {w.windows + seg.first_window.get(w.gpu.uuid, 0)}/{ck.windows}" for w in watches)
    )


def _segments(folder: Path, ck: C.Checkpoint, exe: Path, env: dict, progress: Progress) -> bool:
    """Runs what the soak owes, at most MAX_WINDOWS_PER_PROCESS windows per process: a GPU whose
    process ran all it was given goes on in a new one (its first output checked against the
    golden one); a GPU whose process stopped short is not restarted (its stop is an event).
    False when interrupted."""
    going: set[str] | None = None  # None: every GPU with windows left
    while True:
        owed = C.next_segment(ck, C.windows_done(folder, ck))
        plan = {
            u: (first, min(n, P.MAX_WINDOWS_PER_PROCESS))
            for u, (first, n) in owed.items()
            if going is None or u in going
        }
        if not plan:
            return True
        if not _segment(folder, ck, exe, env, progress, plan):
            return False
        done = C.windows_done(folder, ck)
        going = {u for u, (first, n) in plan.items() if max(done[u], default=-1) >= first + n - 1}


def _salvage_earlier(folder: Path, ck: C.Checkpoint, progress: Progress) -> None:
    """The result files a reboot left .partial, made whole from their finished cases."""
    for seg in ck.segments:
        for g in ck.gpus:
            if g.uuid in seg.first_window:
                said = child.salvage(C.segment_paths(folder, g, seg.number)[0], "the soak was stopped before it ended")
                if said:
                    progress.line(f"{g.tag}: {said}")


def run_soak(folder: Path, ck: C.Checkpoint, results: Path, env: dict, say=print, tty: bool = False) -> Outcome:
    """Runs what the soak still owes, then judges and writes it. The exit code: 0 clean, 1 an
    event, 77 no GPU reached, 130 interrupted (resumable)."""
    exe = find_executable(Path(ck.build_dir))
    if exe is None:
        return Outcome(
            EXIT_USAGE,
            None,
            f"no {EXECUTABLE} under {ck.build_dir}: build it (cmake --build <build> --target {EXECUTABLE})",
        )
    progress = Progress(folder / LOG, say, tty)
    try:
        resumed = len(ck.segments)
        progress.line(
            f"soak of {len(ck.gpus)} GPU(s) on {ck.node}: {ck.windows} window(s) of {ck.window_s:g} s"
            + (f", resumed (segment {resumed})" if resumed else "")
            + f"; in {folder}",
            important=True,
        )
        _salvage_earlier(folder, ck, progress)
        if not _segments(folder, ck, exe, env, progress):
            done = C.windows_done(folder, ck)
            said = ", ".join(f"{g.tag} {len(done[g.uuid])}/{ck.windows}" for g in ck.gpus)
            return Outcome(
                EXIT_INTERRUPTED,
                None,
                f"interrupted: windows finished {said}; the soak is kept in {folder}; "
                f"`triaudit soak --resume {folder}` continues it",
            )
        codes = [c for s in ck.segments for c in s.exit_codes.values()]
        analysis = analyse(folder, ck)
        card = card_of(analysis)
        if not card and codes and all(c == EXIT_NO_DEVICE for c in codes):
            logs = "".join(
                C.segment_paths(folder, g, s.number)[2].read_text(errors="replace")
                for s in ck.segments
                for g in ck.gpus
                if C.segment_paths(folder, g, s.number)[2].exists()
            )
            discard(folder, results)
            return Outcome(EXIT_NO_DEVICE, None, f"{no_device_reason(logs)}: nothing soaked, nothing written")
        done = C.windows_done(folder, ck)
        complete = all(len(done[g.uuid]) == ck.windows for g in ck.gpus)
        for e in analysis.events:
            progress.line(e.describe(), important=True)
        ck.finished = True
        write_folder(folder, ck, analysis, complete, C.utc_stamp())
        ck.save(folder)
        progress.line(f"verdict: {analysis.verdict()}", important=True)
        progress.close()
        if not card:
            return Outcome(
                EXIT_FOUND, None, f"no process reached a GPU (exit codes {codes}); the soak is kept in {folder}"
            )
        final = move_into_place(folder, results, card, ck.started_utc, ck.host)
        return Outcome(analysis.exit_code, final, f"soak written to {final}: {analysis.verdict()}")
    finally:
        progress.close()
