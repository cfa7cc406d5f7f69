"""`triaudit run`: runs the built executables, JSON into results/<card>/<timestamp>-<host>/.

Standard library only, so it also runs on a bare GPU machine. A run is written to a staging
folder first and moved into place at the end under a name that does not exist yet: an earlier
run is never overwritten. manifest.json records the profile, the command lines, the exit codes
and the git commit, and whether the run completed; an interrupted run says "complete": false.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from triaudit.core.builddir import find_build_dir, git_commit
from triaudit.core.names import slug
from triaudit.results.case_info import gpu_measured
from triaudit.runner.child import last_words, run_executable, salvage
from triaudit.runner.profiles import (
    PROFILES,
    STEP_EXECUTABLE,
    check_extra,
    check_only,
    find_steps,
    profile_args,
)
from triaudit.runner.progress import PlainProgress, classify
from triaudit.runner.progress import choose as choose_progress
from triaudit.runner.timemodel import describe_cases

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_DEVICE = 0, 1, 2, 77
MIN_START_S = 20.0  # with --budget-s: an executable is not started with less than this left


@dataclass
class Outcome:
    exit_code: int
    run_dir: Path | None
    message: str


def staged_gpu_names(staging: Path) -> list[str]:
    """The GPU names (as CUDA gives them) in the result files of a run being made, in file order;
    also what an interrupted executable left."""
    names = []
    for f in sorted(staging.glob("*.json")):
        try:
            ctx = json.loads(f.read_text()).get("context", {})
        except (OSError, ValueError):
            continue
        if gpu_measured(ctx) and ctx.get("gpu_name") and ctx["gpu_name"] not in names:
            names.append(ctx["gpu_name"])
    return names


def step_cases(exe: Path, args: list[str]) -> list[str]:
    """The cases the step will run (its catalogue under the profile's filter); [] when it cannot say."""
    filt = [a for a in args if not a.startswith("--benchmark_repetitions") and not a.startswith("--benchmark_out")]
    try:
        out = subprocess.run([str(exe), *filt, "--benchmark_list_tests"], capture_output=True, text=True, timeout=60)
        return [line.strip() for line in out.stdout.splitlines() if line.strip()] if out.returncode == 0 else []
    except (OSError, subprocess.SubprocessError):
        return []


def _count_cases(exe: Path, args: list[str]) -> int:
    return len(step_cases(exe, args))


# An executable's time limit: its time-model estimate x 3 + 30 s, so one hang cannot starve the
# steps after it. For a card the model does not know, the slowest card it knows stands in.
LIMIT_FACTOR, LIMIT_SLACK_S = 3.0, 30.0


def local_gpus(nvidia_smi: str = "nvidia-smi") -> tuple[str, int]:
    """(the first GPU's name, how many) as nvidia-smi lists them; ("", 0) without one."""
    try:
        p = subprocess.run(
            [nvidia_smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return "", 0
    names = [line.strip() for line in p.stdout.splitlines() if line.strip()] if p.returncode == 0 else []
    return (names[0] if names else ""), len(names)


# Where the model cannot estimate a step (an executable too old to describe its cases' shapes):
# no limit of its own beyond this, and the run says so.
UNMODELLED_LIMIT_S = 24 * 3600.0


def step_limit(
    step: str, cases: list[str], args: list[str], gpu_name: str, gpus: int, descriptions: dict | None = None
) -> tuple[float, str]:
    """The limit of one step and how it was found."""
    from triaudit.core import specs
    from triaudit.runner import timemodel

    card = specs.match_card(gpu_name) if gpu_name else None
    basis = card.key if card else None
    if card is None:  # the slowest known card: a generous bound for a card the model cannot rate
        card = min(specs.CARDS, key=lambda c: c.mem_bw)
        basis = f"{card.key}'s rates (no datasheet for {gpu_name or 'this GPU'})"
    try:
        est = timemodel.estimate_cases(
            STEP_EXECUTABLE[step], cases, card, timemodel.settings_from_args(args), max(1, gpus), args, descriptions
        )
    except timemodel.ModelError as e:
        return UNMODELLED_LIMIT_S, f"no estimate ({e}): {UNMODELLED_LIMIT_S / 3600:g} h"
    return LIMIT_FACTOR * est.seconds + LIMIT_SLACK_S, f"{est.seconds:.0f} s estimated on {basis} x 3 + 30 s"


def _unique_dir(parent: Path, name: str) -> Path:
    candidate, k = parent / name, 2
    while candidate.exists():
        candidate = parent / f"{name}-{k}"
        k += 1
    return candidate


def check_seconds(flag: str, value: float | None) -> str:
    if value is not None and not (value > 0 and value == value and value != float("inf")):
        return f"{flag} {value:g}: must be a positive number of seconds"
    return ""


def _run_one(
    step: str,
    exe: Path,
    args: list[str],
    staging: Path,
    log=print,
    timeout_s: float | None = None,
    progress=None,
    cases: list[str] | None = None,
) -> dict:
    """One step: the executable in its own process group, its output into <step>.log, its results
    into <step>.json. A step stopped at its limit or killed keeps the cases it finished (child.salvage)."""
    json_path = staging / f"{step}.json"
    log_path = staging / f"{step}.log"
    cmd = [str(exe), f"--benchmark_out={json_path}", *args]
    total = len(cases) if cases is not None else _count_cases(exe, args)
    progress = progress or PlainProgress(log)
    tally = progress.begin(step, total)

    def on_line(line: str) -> None:
        # One line per finished case (or a live bar on a terminal); skipped cases summed up in one
        # line per executable (progress.py).
        ev = classify(line, step)
        if ev is not None:
            progress.line(tally, ev)

    try:
        done = run_executable(cmd, log_path, timeout_s, on_line=on_line)
    except BaseException:
        progress.end(tally)
        salvage(json_path, "interrupted")  # what it finished is kept, the run marked incomplete
        raise
    progress.end(tally)
    rc = done.exit_code
    why = f"stopped at its limit of {timeout_s:.0f} s" if done.timed_out else f"exit {rc}"
    if done.timed_out:
        log(f"  {step}: stopped at its limit of {timeout_s:.0f} s")
    entry = {
        "step": step,
        "executable": STEP_EXECUTABLE.get(step, step),
        "command": cmd,
        "exit_code": rc,
        "seconds": done.seconds,
        "log": log_path.name,
    }
    if timeout_s:
        entry["limit_s"] = round(timeout_s, 1)
    saved = salvage(json_path, why)
    if saved:
        entry["salvaged"] = saved
        log(f"  {saved}")
    entry["json"] = json_path.name if json_path.exists() else None
    return entry


def dry_run(
    build_dir: Path | None,
    profile: str,
    card: str | None,
    only: list[str] | None = None,
    extra_args: list[str] | None = None,
    gpus: int = 1,
) -> Outcome:
    """The estimated wall time of a profile on a card, per executable, without running anything
    (timemodel.py). The card: --card, else the local GPU's name matched against specs.py."""
    from triaudit.core import specs
    from triaudit.runner import timemodel

    if profile not in PROFILES:
        return Outcome(EXIT_USAGE, None, f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    bad = check_only(only)
    if bad:
        return Outcome(EXIT_USAGE, None, bad)
    build_dir, found = find_build_dir(build_dir)
    if build_dir is None:
        return Outcome(EXIT_USAGE, None, found)
    if card is None:
        name = ""
        try:
            p = subprocess.run(
                ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
            )
            name = p.stdout.splitlines()[0].strip() if p.returncode == 0 and p.stdout.strip() else ""
        except (OSError, subprocess.SubprocessError):
            pass
        spec = specs.match_card(name) if name else None
        if spec is None:
            return Outcome(
                EXIT_USAGE,
                None,
                "--dry-run needs --card (one of "
                + ", ".join(c.key for c in specs.CARDS)
                + ")"
                + (f": no datasheet matches the local GPU {name!r}" if name else ": no local GPU to ask"),
            )
        card = spec.key
    try:
        estimates, spec = timemodel.estimate_profile(build_dir, profile, card, only, extra_args, gpus)
    except timemodel.ModelError as e:
        return Outcome(EXIT_USAGE, None, str(e))
    text = timemodel.format_estimate(estimates, spec, profile)
    return Outcome(EXIT_OK, None, text + f"\n  ({gpus} GPU{'s' if gpus != 1 else ''} assumed; --gpu-count to change)")


def check_results_folder(results: Path) -> str:
    """ "" when results can hold runs (made if missing); otherwise why not, in a line."""
    if results.exists() and not results.is_dir():
        return f"--results {results}: is a file, not a folder"
    try:
        (results / ".incoming").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return f"--results {results}: cannot create a folder there ({e.strerror or e})"
    if not os.access(results / ".incoming", os.W_OK | os.X_OK):
        return f"--results {results}: not writable"
    return ""


def run_suite(
    build_dir: Path,
    results: Path,
    profile: str = "quick",
    only: list[str] | None = None,
    extra_args: list[str] | None = None,
    repo: Path | None = None,
    log=print,
    timeout_s: float | None = None,
    budget_s: float | None = None,
    bind_numa: str = "on",
    nvidia_smi: str = "nvidia-smi",
) -> Outcome:
    """Each step is limited to its time-model estimate x 3 + 30 s (step_limit), to timeout_s when
    that is less, and to what is left of budget_s: a step that would start with under MIN_START_S
    left is not started. The run is then kept and marked incomplete, so a machine lent for a few
    minutes still returns what it measured. Logs are never deleted."""
    if profile not in PROFILES:
        return Outcome(EXIT_USAGE, None, f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    bad = (
        check_only(only)
        or check_extra(extra_args)
        or check_seconds("--budget-s", budget_s)
        or check_seconds("--timeout-s", timeout_s)
    )
    if bad:
        return Outcome(EXIT_USAGE, None, bad)
    build_dir, found = find_build_dir(build_dir)
    if build_dir is None:
        return Outcome(EXIT_USAGE, None, found)
    if found:
        log(found)
    if not build_dir.is_dir():
        return Outcome(EXIT_USAGE, None, f"build directory {build_dir} does not exist: build first")
    steps = find_steps(build_dir, only)
    if not steps:
        return Outcome(
            EXIT_USAGE, None, f"no triaudit executables under {build_dir}" + (f" matching {only}" if only else "")
        )
    bad = check_results_folder(results)
    if bad:
        return Outcome(EXIT_USAGE, None, bad)

    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    run_name = f"{stamp}-{slug(socket.gethostname())}"
    staging = results / ".incoming" / f"{run_name}-{os.getpid()}"
    staging.mkdir(parents=True, exist_ok=False)
    gpu_name, gpu_count = local_gpus(nvidia_smi)
    manifest: dict[str, Any] = {
        "profile": profile,
        "started_utc": stamp,
        "host": socket.gethostname(),
        "git_commit": git_commit(repo),
        "complete": False,
        "executables": [],
    }
    if budget_s is not None:
        manifest["budget_s"] = budget_s
    interrupted = False
    began = time.monotonic()
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)  # CI cancellations arrive as SIGTERM
    progress = choose_progress(log)  # a live bar on a terminal, plain lines in CI logs
    log = progress.log  # on a terminal the bar's console prints the run's own lines too
    try:
        for i, (step, exe) in enumerate(steps.items(), 1):
            args = profile_args(profile, step) + [f"--bind-numa={bind_numa}"] + list(extra_args or [])
            cases = step_cases(exe, args)
            limit, basis = step_limit(step, cases, args, gpu_name, gpu_count, describe_cases(exe))
            if timeout_s is not None and timeout_s < limit:
                limit, basis = timeout_s, "--timeout-s"
            if budget_s is not None:
                left = budget_s - (time.monotonic() - began)
                if left < MIN_START_S:
                    manifest["not_started"] = [n for n in list(steps)[i - 1 :]]
                    log(f"budget of {budget_s:.0f} s spent: not started: {', '.join(manifest['not_started'])}")
                    break
                if left < limit:
                    limit, basis = left, "what is left of --budget-s"
            log(f"[{i}/{len(steps)}] {step} (limit {limit:.0f} s: {basis})")
            manifest["interrupted_during"] = step
            manifest["executables"].append(_run_one(step, exe, args, staging, log, limit, progress, cases))
            del manifest["interrupted_during"]
            if manifest["executables"][-1]["exit_code"] == EXIT_NO_DEVICE:
                log(f"{step}: no CUDA device; the other executables would skip every case too: stopping")
                break
        anchor_time_left = budget_s is None or budget_s - (time.monotonic() - began) > 2 * MIN_START_S
        if (
            "triaudit_gemm" in steps
            and anchor_time_left
            and all(e["exit_code"] != EXIT_NO_DEVICE for e in manifest["executables"])
        ):
            left = 300.0 if budget_s is None else budget_s - (time.monotonic() - began) - 5
            manifest["torch_anchor"] = _torch_anchor(staging, log, min(300.0, left))
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted: the run is kept and marked incomplete")
    finally:
        progress.close()
        signal.signal(signal.SIGTERM, previous)
    manifest["finished_utc"] = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    codes = [e["exit_code"] for e in manifest["executables"]]
    manifest["complete"] = not interrupted and len(codes) == len(steps)
    if codes and codes[-1] == EXIT_NO_DEVICE:
        codes = [EXIT_NO_DEVICE]

    card = next(iter(staged_gpu_names(staging)), None)
    if card is None:
        return _no_device_outcome(manifest, staging, results, codes, interrupted)

    manifest["card"] = card
    _write_manifest(staging, manifest)
    final = _unique_dir(results / slug(card), run_name)
    final.parent.mkdir(parents=True, exist_ok=True)
    os.rename(staging, final)
    _tidy_incoming(results)
    failed = [e["step"] for e in manifest["executables"] if e["exit_code"] not in (EXIT_OK,)]
    salvaged = [e["step"] for e in manifest["executables"] if e.get("salvaged")]
    kept = f"; the finished cases of {', '.join(salvaged)} kept" if salvaged else ""
    if interrupted:
        return Outcome(130, final, f"interrupted; partial run kept in {final} (marked incomplete){kept}")
    if manifest.get("not_started"):
        return Outcome(
            EXIT_FAILED,
            final,
            f"run written to {final} (marked incomplete); budget spent before "
            f"{', '.join(manifest['not_started'])}" + (f"; failed: {', '.join(failed)}" if failed else "") + kept,
        )
    if failed:
        return Outcome(
            EXIT_FAILED, final, f"run written to {final}; failed: {', '.join(failed)} (see their logs){kept}"
        )
    return Outcome(EXIT_OK, final, f"run written to {final}")


def _write_manifest(folder: Path, manifest: dict) -> None:
    tmp = folder / ".manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    os.replace(tmp, folder / "manifest.json")


def _no_device_outcome(manifest: dict, staging: Path, results: Path, codes: list[int], interrupted: bool) -> Outcome:
    """No result file names a GPU. When every executable said only "no CUDA device" nothing is
    kept (there is nothing to keep); otherwise the run's logs stay in results/.incoming with the
    manifest, and the message carries what the executables said."""
    said = []
    reason = "no CUDA device"
    for e in manifest["executables"]:
        text = (staging / e["log"]).read_text(errors="replace")
        if reason == "no CUDA device" and no_device_reason(text) != "no CUDA device":
            reason = no_device_reason(text)
        if e["exit_code"] != EXIT_NO_DEVICE:
            words = last_words(staging / e["log"])
            said.append(
                f"{e['step']} (exit {e['exit_code']}): {words}" if words else f"{e['step']} (exit {e['exit_code']})"
            )
    only_no_device = not interrupted and codes and all(c == EXIT_NO_DEVICE for c in codes)
    if only_no_device:
        shutil.rmtree(staging, ignore_errors=True)
        _tidy_incoming(results)
        return Outcome(EXIT_NO_DEVICE, None, f"{reason}: nothing measured, nothing written")
    _write_manifest(staging, manifest)
    where = f"; its logs are kept in {staging}"
    if interrupted:
        return Outcome(130, None, "interrupted before any executable reported a device" + where)
    return Outcome(
        EXIT_FAILED,
        None,
        f"no executable reported a device; exit codes {codes}" + (": " + "; ".join(said) if said else "") + where,
    )


def _torch_anchor(staging: Path, log, timeout_s: float = 300.0) -> str:
    """One torch.matmul BF16 figure in the same run, where PyTorch is installed (torch_anchor.py)."""
    try:
        p = subprocess.run(
            [sys.executable, "-m", "triaudit.runner.torch_anchor", str(staging / "torch_anchor.json")],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except (OSError, subprocess.SubprocessError) as e:
        return f"not run: {e}"
    text = (p.stdout + p.stderr).strip().splitlines()
    last = text[-1] if text else ""
    log(f"  torch anchor: {last}")
    return {0: "measured", 77: "skipped"}.get(p.returncode, f"failed (exit {p.returncode})") + f": {last}"


def no_device_reason(text: str) -> str:
    """ "no CUDA device (<CUDA's reason>)" as an executable printed it; the reason may hold parentheses
    ("no NVIDIA driver found (libcuda.so.1 not loadable)"), so they are matched, not cut at the first ')'."""
    start = text.find("no CUDA device (")
    if start < 0:
        return "no CUDA device"
    depth = 0
    for i in range(start + len("no CUDA device "), len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[start : i + 1]
        if text[i] == "\n":
            break
    return "no CUDA device"


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def _tidy_incoming(results: Path) -> None:
    incoming = results / ".incoming"
    try:
        incoming.rmdir()  # only when empty
    except OSError:
        pass
