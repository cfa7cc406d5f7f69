"""How long a profile takes on a card, before it runs: `triaudit run --dry-run`.

Each corner models its own cases (its module of corners/, `time_model`), from the loop every case
shares (corners/timing.py): this module lists each step's cases from the built executable's own
catalogue, adds each executable's start-up, and totals. An estimate for planning a run and for
holding the profiles to their goals, never a measurement. Standard library only: `run` imports it
on a bare GPU machine.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from triaudit.core import specs
from triaudit.core.errors import TriauditError
from triaudit.corners import corner_of_case, corner_of_executable
from triaudit.corners.timing import EXE_STARTUP_S, Settings, settings_from_args, unmodelled
from triaudit.runner import profiles

__all__ = ["Settings", "settings_from_args", "estimate_profile", "estimate_cases", "describe_cases", "format_estimate"]


@dataclass
class CaseEstimate:
    name: str
    seconds: float  # all repetitions and the first call's setup
    note: str = ""


@dataclass
class ExeEstimate:
    executable: str
    startup: float
    cases: list[CaseEstimate] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return self.startup + sum(c.seconds for c in self.cases)


class ModelError(TriauditError):
    pass


def estimate_cases(
    executable: str,
    names: list[str],
    card: specs.CardSpec,
    s: Settings,
    gpus: int = 1,
    args: list[str] | None = None,
    descriptions: dict[str, dict] | None = None,
) -> ExeEstimate:
    """The estimate of one executable's cases; `descriptions`: each case's axes as the executable
    describes them (describe_cases: a GEMM's shapes come from there, never from a copy here). A case
    whose shape is not known is a ModelError."""
    startup = EXE_STARTUP_S
    owner = corner_of_executable(executable)
    if owner is not None and owner.startup_s is not None:
        startup += owner.startup_s(names, list(args or ()))
    out = ExeEstimate(executable, startup)
    for name in names:
        case = name.removesuffix("/manual_time")
        corner = corner_of_case(case)
        model = corner.time_model if corner else None
        try:
            sec = model(case, card, s, gpus, (descriptions or {}).get(case)) if model is not None else unmodelled(s)
        except ValueError as e:  # a shape neither the name nor the description gives
            raise ModelError(str(e)) from None
        out.cases.append(CaseEstimate(case, sec))
    return out


def describe_cases(exe: Path) -> dict[str, dict]:
    """case -> its axes, from the executable's own description of its catalogue (`--describe-cases`,
    no GPU needed); {} from an executable too old to describe itself."""
    import json

    try:
        p = subprocess.run([str(exe), "--describe-cases"], capture_output=True, text=True, timeout=60)
        cases = json.loads(p.stdout) if p.returncode == 0 else []
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}
    return {str(c["name"]): dict(c["triaudit"].get("axes") or {}) for c in cases if isinstance(c, dict)}


def list_cases(exe: Path, args: list[str]) -> list[str]:
    """The cases a profile runs, from the executable's own catalogue (no GPU needed)."""
    keep = [
        a
        for a in args
        if not a.startswith(("--benchmark_repetitions", "--benchmark_out", "--benchmark_display_aggregates_only"))
    ]
    try:
        p = subprocess.run([str(exe), *keep, "--benchmark_list_tests"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise ModelError(f"{exe}: could not list its cases: {e}") from e
    if p.returncode != 0:
        raise ModelError(f"{exe.name} refused the profile's arguments: {(p.stderr or p.stdout).strip()[:300]}")
    return [line.strip() for line in p.stdout.splitlines() if line.strip()]


def card_by_key(key: str) -> specs.CardSpec:
    """specs.card_by_key (a key such as h200, or a name CUDA gives), as a ModelError when unknown."""
    try:
        return specs.card_by_key(key)
    except KeyError as e:
        raise ModelError(e.args[0]) from None


def format_estimate(estimates: list[ExeEstimate], card: specs.CardSpec, profile: str, top: int = 5) -> str:
    lines = [f"Estimated wall time of profile {profile!r} on {card.name} (datasheet rates, not a measurement):"]
    for e in estimates:
        lines.append(f"  {e.executable:<22} {e.seconds:7.1f} s  ({len(e.cases)} cases, startup {e.startup:.1f} s)")
    total = sum(e.seconds for e in estimates)
    lines.append(f"  {'total':<22} {total:7.1f} s")
    longest = sorted((c for e in estimates for c in e.cases), key=lambda c: -c.seconds)[:top]
    if longest:
        lines.append("  longest cases: " + "; ".join(f"{c.name} {c.seconds:.1f} s" for c in longest))
    return "\n".join(lines)


def estimate_profile(
    build_dir: Path,
    profile: str,
    card_key: str,
    only: list[str] | None = None,
    extra_args: list[str] | None = None,
    gpus: int = 1,
) -> tuple[list[ExeEstimate], specs.CardSpec]:
    """Every executable of `profile` found under `build_dir`, its cases and their estimated time."""
    card = card_by_key(card_key)
    if profile not in profiles.PROFILES:
        raise ModelError(f"unknown profile {profile!r}; choose one of {', '.join(profiles.PROFILES)}")
    exes = profiles.find_steps(build_dir, only)
    if not exes:
        raise ModelError(f"no triaudit executables under {build_dir}: build first (the dry run lists their cases)")
    out = []
    for step, exe in exes.items():
        args = profiles.profile_args(profile, step) + list(extra_args or [])
        e = estimate_cases(
            profiles.STEP_EXECUTABLE[step],
            list_cases(exe, args),
            card,
            settings_from_args(args),
            gpus,
            args,
            describe_cases(exe),
        )
        e.executable = step
        out.append(e)
    return out, card
