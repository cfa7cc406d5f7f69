"""Loading Google Benchmark JSON (1.7 through 1.9) into plain records.

Handles: with or without aggregates, repetitions, errored and skipped cases (1.7 reports a skip
as an error whose message starts with "skipped:"; 1.8+ has "skipped"/"skip_message"), NaN and
Infinity literals. Malformed or truncated files are refused with the file's name and the reason.
Only this module knows Google Benchmark's field names.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Fields Google Benchmark writes itself: everything else numeric in a run is a user counter.
STANDARD_FIELDS = {
    "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
    "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit",
    "error_occurred", "error_message", "skipped", "skip_message", "label", "aggregate_name",
    "aggregate_unit", "big_o", "rms", "cpu_coefficient", "real_coefficient", "complexity",
    "manual_time",
}
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# Suffixes Google Benchmark appends to a registered name.
_GB_SUFFIX = re.compile(r"^(manual_time|real_time|process_time|(repeats|min_time|min_warmup_time|iterations|threads):.*)$")


class LoadError(ValueError):
    """A result file that cannot be used; the message names the file and what is wrong."""


@dataclass
class Run:
    """One entry of the "benchmarks" array."""
    case: str                  # the registered name, without Google Benchmark's suffixes
    run_type: str              # "iteration" or "aggregate"
    aggregate_name: str        # "mean", "median", ... for aggregates, "" otherwise
    repetition_index: int
    status: str                # "ok", "skipped" or "error"
    message: str
    time_s: float              # real (or manual) time per iteration, seconds
    iterations: int
    counters: dict[str, float] = field(default_factory=dict)
    label: str = ""


@dataclass
class ResultFile:
    path: Path
    context: dict[str, Any]
    runs: list[Run]


def case_name(name: str) -> str:
    parts = name.split("/")
    while len(parts) > 1 and _GB_SUFFIX.match(parts[-1]):
        parts.pop()
    return "/".join(parts)


def _status(entry: dict[str, Any]) -> tuple[str, str]:
    if entry.get("skipped") is True or (isinstance(entry.get("skipped"), int) and entry.get("skipped") == 2):
        return "skipped", str(entry.get("skip_message", ""))
    if entry.get("error_occurred"):
        msg = str(entry.get("error_message", ""))
        return ("skipped" if msg.startswith("skipped:") else "error"), msg
    return "ok", ""


def _number(value: Any, what: str, path: Path) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LoadError(f"{path}: {what} is not a number: {value!r}")
    return float(value)


def parse_result(data: Any, path: Path) -> ResultFile:
    if not isinstance(data, dict):
        raise LoadError(f"{path}: top level is not a JSON object (is this Google Benchmark JSON?)")
    if "benchmarks" not in data:
        raise LoadError(f"{path}: no 'benchmarks' array (is this Google Benchmark JSON?)")
    context = data.get("context", {})
    if not isinstance(context, dict):
        raise LoadError(f"{path}: 'context' is not an object")
    entries = data["benchmarks"]
    if not isinstance(entries, list):
        raise LoadError(f"{path}: 'benchmarks' is not an array")
    runs = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise LoadError(f"{path}: benchmarks[{i}] is not an object")
        name = e.get("run_name", e.get("name"))
        if not isinstance(name, str) or not name:
            raise LoadError(f"{path}: benchmarks[{i}] has no name")
        status, message = _status(e)
        run_type = e.get("run_type", "iteration")
        if run_type not in ("iteration", "aggregate"):
            raise LoadError(f"{path}: benchmarks[{i}] ({name}) has unknown run_type {run_type!r}")
        unit = e.get("time_unit", "ns")
        if unit not in TIME_UNITS:
            raise LoadError(f"{path}: benchmarks[{i}] ({name}) has unknown time_unit {unit!r}")
        time_s = math.nan
        counters: dict[str, float] = {}
        if status == "ok":
            time_s = _number(e.get("real_time"), f"benchmarks[{i}] ({name}) real_time", path) * TIME_UNITS[unit]
            for k, v in e.items():
                if k in STANDARD_FIELDS:
                    continue
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    counters[k] = float(v)
        iterations = e.get("iterations", 0)
        runs.append(Run(
            case=case_name(name), run_type=run_type, aggregate_name=str(e.get("aggregate_name", "")),
            repetition_index=int(e.get("repetition_index", 0) or 0), status=status, message=message,
            time_s=time_s, iterations=int(iterations) if isinstance(iterations, (int, float)) else 0,
            counters=counters, label=str(e.get("label", ""))))
    return ResultFile(path=path, context=context, runs=runs)


def load_result(path: str | Path) -> ResultFile:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LoadError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise LoadError(f"{path}: not UTF-8 text: {exc}") from exc
    if not text.strip():
        raise LoadError(f"{path}: empty file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LoadError(f"{path}: not valid JSON (truncated?): {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except RecursionError as exc:
        raise LoadError(f"{path}: JSON nested too deeply") from exc
    return parse_result(data, path)
