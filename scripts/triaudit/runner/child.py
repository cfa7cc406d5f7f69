"""Running one triaudit executable so that what it measured survives it.

- It starts in its own process group (session), and the whole group is ended: a child it started
  (a collective's NCCL-choice probe runs under `timeout ... 300`) cannot outlive it and hold the GPU.
- Past its time limit it gets SIGTERM, and SIGKILL only after a grace period; an interrupted run
  sends SIGINT first. Either way its log is kept.
- The executables write each finished case to `<file>.partial` and rename it when whole
  (benchmarks/common/result_file.hpp). When one ends without that rename (killed, crashed), the
  cases it finished are turned into `<file>`, marked in its context (gbench.SALVAGED_KEY).

Standard library only (with gbench): `triaudit run` works on a bare GPU machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from triaudit.results.gbench import SALVAGED_KEY, recover_truncated

GRACE_S = 10.0  # between SIGTERM (or SIGINT) and SIGKILL
EXIT_TIMEOUT = 124  # an executable stopped at its limit, as timeout(1) reports it


@dataclass
class Finished:
    exit_code: int
    seconds: float
    timed_out: bool = False


def _signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def end_group(proc: subprocess.Popen, first: int = signal.SIGTERM, grace_s: float | None = None) -> None:
    """Asks the process group to stop (`first`), waits up to grace_s (GRACE_S) for the leader, then
    kills whatever of the group is left."""
    grace_s = GRACE_S if grace_s is None else grace_s
    pgid = proc.pid
    if _signal_group(pgid, first):
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(pgid, signal.SIGKILL)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process SIGKILL cannot stop
        pass


def run_executable(
    cmd: list[str],
    log_path: Path,
    timeout_s: float | None = None,
    env: dict | None = None,
    on_line=None,
    grace_s: float | None = None,
    on_start=None,
) -> Finished:
    """Runs `cmd` with its output into log_path (each line also to on_line, from a reader thread),
    at most timeout_s. The leader's exit ends the run: what it started and left behind is killed,
    so a child still holding the output pipe cannot keep the run waiting. A KeyboardInterrupt
    stops the group with SIGINT (then SIGKILL) and is raised again. on_start(proc): called once the
    process runs (a caller that may stop it from another thread keeps it)."""
    start = time.monotonic()
    grace_s = GRACE_S if grace_s is None else grace_s
    with open(log_path, "a", encoding="utf-8") as logf:
        logf.write("$ " + " ".join(cmd) + "\n")
        logf.flush()
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            env=env,
            start_new_session=True,
            errors="replace",
        )

        def read():
            assert proc.stdout is not None
            for line in proc.stdout:
                logf.write(line)
                if on_line is not None:
                    on_line(line)

        if on_start is not None:
            on_start(proc)
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        timed_out = False
        try:
            try:
                rc = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                end_group(proc, signal.SIGTERM, grace_s)
                rc = EXIT_TIMEOUT
        except BaseException:
            end_group(proc, signal.SIGINT, grace_s)
            reader.join(timeout=grace_s)
            logf.write("\ntriaudit run: interrupted; the executable was stopped\n")
            raise
        _signal_group(proc.pid, signal.SIGKILL)  # whatever it started goes with it
        reader.join(timeout=grace_s)
        if timed_out:
            logf.write(f"\ntriaudit run: stopped after {timeout_s:.0f} s (its time limit): SIGTERM, then SIGKILL\n")
    return Finished(rc, round(time.monotonic() - start, 1), timed_out)


def salvage(json_path: Path, why: str) -> str:
    """When json_path is missing but its .partial is there, writes json_path from the whole cases
    in it and removes the .partial; returns what was done ("" when there was nothing to do). A
    .partial whose context is not whole is left as it is."""
    partial = json_path.with_name(json_path.name + ".partial")
    if json_path.exists() or not partial.exists():
        return ""
    text = partial.read_text(encoding="utf-8", errors="replace")
    try:
        data, kept = json.loads(text), None
    except json.JSONDecodeError:
        recovered = recover_truncated(text)
        if recovered is None:
            return f"{partial.name} holds no whole context: kept as it is"
        data, kept = recovered
    if kept is None:
        kept = len(data.get("benchmarks", []))
    data.setdefault("context", {})[SALVAGED_KEY] = (
        f"{json_path.stem} ended ({why}) before its result file was whole: {kept} whole benchmark "
        f"entr{'y' if kept == 1 else 'ies'} kept from {partial.name}; the case running then is lost"
    )
    tmp = json_path.with_name("." + json_path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, json_path)
    partial.unlink()
    return f"{json_path.name}: {kept} whole benchmark entries kept from {partial.name} ({why})"


def last_words(log_path: Path, lines: int = 3) -> str:
    """The executable's own explanation, from the end of its log: its 'bad command line' or error
    lines if it printed any, otherwise its last lines."""
    try:
        text = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    body = [t.strip() for t in text if t.strip() and not t.startswith("$ ") and not t.startswith("triaudit run:")]
    told = [t for t in body if "bad command line" in t or "error" in t.lower() or "refusing" in t]
    return "; ".join((told or body)[-lines:])
