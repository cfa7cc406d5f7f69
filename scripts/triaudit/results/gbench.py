"""Loading Google Benchmark JSON (1.7 through 1.9) into plain records.

Handles: with or without aggregates, repetitions, errored and skipped cases (1.7 reports a skip
as an error whose message starts with "skipped:"; 1.8+ has "skipped"/"skip_message"), NaN and
Infinity literals (a non-finite time or counter makes its case an error naming file and case, except
an energy counter, which is then unknown), complexity rows (BigO/RMS: skipped and counted). Rows that
cannot be told apart (a case twice with one repetition_index) are a conflict, never pooled. A file cut
off after its context (a killed executable) is read up to its last whole entry, with a warning naming
the file and how many entries were kept. Malformed files, and other tools' JSON (nvbench,
pytest-benchmark), are refused with the file's name and the reason. Only this module knows Google
Benchmark's field names.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from triaudit.core.errors import TriauditError
from triaudit.core.io.tell import notice
from triaudit.results.counters import JUDGED_NAMES, is_energy
from triaudit.results.legacy_names import current_name

try:  # optional: only speed depends on it
    import orjson as _orjson
except ImportError:  # pragma: no cover - exercised where orjson is absent
    _orjson = None

# The version of triaudit's result conventions (names, counters, context keys) that the executables
# write as the context key `triaudit_schema_version` and exports carry. Files without it are older
# and read as version 1; older files' renamed cases are read under today's names (legacy_names.py).
# Version 2: each entry states what version 1 left to the name grammar, in
# its field CASE_FIELD (its axes, the counter it is judged on, its scope, the headline it may stand
# for), and the context says where the figures come from (PROVENANCE_KEY).
SCHEMA_VERSION = "2"
KNOWN_SCHEMAS = ("1", "2")
CASE_FIELD = "triaudit"
PROVENANCE_KEY = "triaudit_provenance"

# Fields Google Benchmark writes itself: everything else numeric in a run is a user counter.
STANDARD_FIELDS = {
    "name",
    "family_index",
    "per_family_instance_index",
    "run_name",
    "run_type",
    "repetitions",
    "repetition_index",
    "threads",
    "iterations",
    "real_time",
    "cpu_time",
    "time_unit",
    "error_occurred",
    "error_message",
    "skipped",
    "skip_message",
    "label",
    "aggregate_name",
    "aggregate_unit",
    "big_o",
    "rms",
    "cpu_coefficient",
    "real_coefficient",
    "complexity",
    "manual_time",
    CASE_FIELD,  # triaudit's own description of the case (schema 2), not a counter
}
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# Suffixes Google Benchmark appends to a registered name.
# threads:1 is the default; other thread counts are different cases and stay in the name.
_GB_SUFFIX = re.compile(
    r"^(manual_time|real_time|process_time|threads:1|(repeats|min_time|min_warmup_time|iterations):.*)$"
)


class LoadError(TriauditError):
    """A result file that cannot be used; the message names the file and what is wrong."""


@dataclass
class Run:
    """One entry of the "benchmarks" array."""

    case: str  # the registered name, without Google Benchmark's suffixes
    run_type: str  # "iteration" or "aggregate"
    aggregate_name: str  # "mean", "median", ... for aggregates, "" otherwise
    repetition_index: int | None  # None: the row has none (aggregates; Google Benchmark < 1.5)
    status: str  # "ok", "skipped" or "error"
    message: str
    time_s: float  # real (or manual) time per iteration, seconds
    iterations: int
    counters: dict[str, float] = field(default_factory=dict)
    label: str = ""


@dataclass
class ResultFile:
    path: Path
    context: dict[str, Any]
    runs: list[Run]
    skipped_rows: dict[str, int] = field(default_factory=dict)  # what was left out, e.g. complexity rows
    notes: list[str] = field(default_factory=list)  # what a reader should be told about the file


@lru_cache(maxsize=65536)
def case_name(name: str) -> str:
    """The case a result row is of: Google Benchmark's suffixes dropped, an earlier schema's name as today's."""
    parts = name.split("/")
    while len(parts) > 1 and _GB_SUFFIX.match(parts[-1]):
        parts.pop()
    return current_name("/".join(parts))


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


def _not_finite(v: float) -> str:
    return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")


# Fields by which Google Benchmark's runs are recognised; a JSON file whose runs have none of them
# was written by another tool. Only the first _LOOK_AT entries are looked at.
_LOOK_AT = 64
_GB_RUN_FIELDS = {"real_time", "cpu_time", "time_unit", "run_type", "iterations", "error_occurred", "skipped"}


def foreign_format(data: dict) -> str | None:
    """The tool that wrote a JSON object that is not Google Benchmark's, if it can be told (from
    its first entries: a tool writes every entry alike, and a large file is not scanned twice)."""
    entries = data.get("benchmarks")
    runs = [e for e in entries[:_LOOK_AT] if isinstance(e, dict)] if isinstance(entries, list) else []
    if "devices" in data and (not runs or any("states" in e or "axes" in e for e in runs)):
        return "nvbench"
    if any("states" in e and "axes" in e for e in runs):
        return "nvbench"
    if "machine_info" in data or any("stats" in e and "fullname" in e for e in runs):
        return "pytest-benchmark"
    if isinstance(data.get("results"), list) and "benchmarks" not in data:
        return "hyperfine or another tool"
    if runs and not any(_GB_RUN_FIELDS & e.keys() for e in runs):
        return "another tool: its runs have no real_time, time_unit or run_type"
    return None


COMPLEXITY_AGGREGATES = ("BigO", "RMS")


def is_complexity(e: dict) -> bool:
    """->Complexity() rows: BigO (coefficients) and RMS, aggregates without a time of their own."""
    return e.get("run_type") == "aggregate" and (
        e.get("aggregate_name") in COMPLEXITY_AGGREGATES or "big_o" in e or "rms" in e
    )


def mark_conflicts(runs: list[Run], path: Path) -> None:
    """Rows that cannot be told apart are not repetitions: each case whose iteration rows repeat a
    repetition_index (or lack one and come twice), or whose aggregate of one kind comes twice,
    becomes an error naming the file, instead of being pooled into one wide-spread case."""
    seen: set[tuple] = set()
    dup: set[tuple] = set()
    for r in runs:  # a set first: conflicts are rare, and this runs over every row of every file
        if r.status == "ok":
            key = (r.case, r.run_type, r.aggregate_name if r.run_type == "aggregate" else r.repetition_index)
            if key in seen:
                dup.add(key)
            seen.add(key)
    if not dup:
        return
    counts: dict[tuple, int] = {}
    for r in runs:
        if r.status == "ok":
            key = (r.case, r.run_type, r.aggregate_name if r.run_type == "aggregate" else r.repetition_index)
            if key in dup:
                counts[key] = counts.get(key, 0) + 1
    bad: dict[str, str] = {}
    for (case, run_type, which), n in counts.items():
        if case in bad:
            continue
        if run_type == "aggregate":
            what = f"{n} '{which or 'unnamed'}' aggregate rows"
        elif which is None:
            what = (
                f"{n} rows without a repetition_index (repetitions are told apart by it; Google "
                f"Benchmark before 1.5 did not write it)"
            )
        else:
            what = f"{n} rows for repetition {which} (a duplicated case, not repetitions)"
        bad[case] = f"{path.name}: conflict: {what} named {case}"
    for r in runs:
        if r.case in bad:
            r.status, r.message, r.counters, r.time_s = "error", bad[r.case], {}, math.nan


def checked_entries(data: Any, path: Path) -> tuple[dict[str, Any], list]:
    """(context, benchmarks array) of a Google Benchmark JSON object; LoadError for anything else."""
    if not isinstance(data, dict):
        raise LoadError(f"{path}: top level is not a JSON object (is this Google Benchmark JSON?)")
    foreign = foreign_format(data)
    if foreign:
        raise LoadError(f"{path}: not Google Benchmark JSON (looks like {foreign})")
    if "benchmarks" not in data:
        raise LoadError(f"{path}: no 'benchmarks' array (is this Google Benchmark JSON?)")
    context = data.get("context", {})
    if not isinstance(context, dict):
        raise LoadError(f"{path}: 'context' is not an object")
    entries = data["benchmarks"]
    if not isinstance(entries, list):
        raise LoadError(f"{path}: 'benchmarks' is not an array")
    return context, entries


COMPLEXITY_ROWS = "complexity (BigO/RMS)"


def entry_run(i: int, e: Any, path: Path, skipped_rows: dict[str, int]) -> Run | None:
    """benchmarks[i] as a Run; None for a complexity row (counted in skipped_rows)."""
    if type(e) is not dict:
        raise LoadError(f"{path}: benchmarks[{i}] is not an object")
    name = e.get("run_name", e.get("name"))
    if type(name) is not str or not name:
        raise LoadError(f"{path}: benchmarks[{i}] has no name")
    run_type = e.get("run_type", "iteration")
    aggregate_name = e.get("aggregate_name", "")
    if run_type == "aggregate" and is_complexity(e):
        skipped_rows[COMPLEXITY_ROWS] = skipped_rows.get(COMPLEXITY_ROWS, 0) + 1
        return None
    status, message = _status(e) if ("error_occurred" in e or "skipped" in e) else ("ok", "")
    if run_type != "iteration" and run_type != "aggregate":
        raise LoadError(f"{path}: benchmarks[{i}] ({name}) has unknown run_type {run_type!r}")
    unit = e.get("time_unit", "ns")
    if type(unit) is not str or unit not in TIME_UNITS:
        raise LoadError(f"{path}: benchmarks[{i}] ({name}) has unknown time_unit {unit!r}")
    case = case_name(name)
    time_s = math.nan
    counters: dict[str, float] = {}
    if status == "ok":
        if "real_time" not in e:
            raise LoadError(f"{path}: benchmarks[{i}] ({name}) has no real_time")
        try:
            time_s = _number(e["real_time"], f"benchmarks[{i}] ({name}) real_time", path) * TIME_UNITS[unit]
            huge = []
        except OverflowError:  # a JSON integer beyond any float
            time_s, huge = math.inf, ["real_time is too large for a float"]
        # NaN time: the tool printed none (imported peer outputs); the case stands on its
        # throughput counter then, and is an error without one. Infinity is never a time.
        time_unknown = time_s != time_s
        broken = huge or ([] if time_unknown or math.isfinite(time_s) else [f"real_time is {_not_finite(time_s)}"])
        # Counters are read from repetitions and from the median aggregate (aggregates-only
        # files); the mean/stddev/cv aggregates are never used, so their fields are not read.
        if run_type == "iteration" or aggregate_name == "median":
            for k, v in e.items():  # the file's order: the same table every time
                if k in STANDARD_FIELDS:
                    continue
                t = type(v)  # exact types: bool is not a counter, strings are not numbers
                if t is float:
                    if v - v == 0.0:  # finite
                        counters[k] = v
                    elif v != v and is_energy(k):
                        continue  # unknown on this board: absent, never 0
                    else:
                        broken.append(f"{k} is {_not_finite(v)}")
                elif t is int:
                    try:
                        counters[k] = float(v)
                    except OverflowError:  # a JSON integer beyond any float
                        broken.append(f"{k} is too large for a float")
        if time_unknown and not any(k in JUDGED_NAMES for k in counters):
            broken.append("real_time is NaN")
        if broken:
            status, time_s, counters = "error", math.nan, {}
            message = f"{path.name}: {case}: " + ", ".join(sorted(broken)) + " (not a measurement)"
    iterations = e.get("iterations", 0)
    rep = e.get("repetition_index")
    return Run(
        case=case,
        run_type=run_type,
        aggregate_name=str(aggregate_name),
        repetition_index=int(rep) if type(rep) is int or (type(rep) is float and math.isfinite(rep)) else None,
        status=status,
        message=message,
        time_s=time_s,
        iterations=int(iterations)
        if type(iterations) is int or (type(iterations) is float and math.isfinite(iterations))
        else 0,
        counters=counters,
        label=str(e.get("label", "")),
    )


def file_notes(path: Path, context: dict, skipped_rows: dict[str, int]) -> list[str]:
    """What a reader should be told about a file: rows left out, a different result schema."""
    notes = [f"{path.name}: {n} {what} row(s) skipped (no time of their own)" for what, n in skipped_rows.items()]
    for key in (TRUNCATED_KEY, SALVAGED_KEY):
        if context.get(key):
            notes.append(f"warning: {path}: {context[key]}")
    version = context.get("triaudit_schema_version")
    if version is not None and str(version) not in KNOWN_SCHEMAS:
        notes.append(
            f"{path.name}: written with triaudit result schema {version}; this triaudit reads "
            f"{', '.join(KNOWN_SCHEMAS)}: what it does not know is read as version {SCHEMA_VERSION}"
        )
    return notes


def parse_result(data: Any, path: Path) -> ResultFile:
    context, entries = checked_entries(data, path)
    skipped_rows: dict[str, int] = {}
    runs = [r for i, e in enumerate(entries) if (r := entry_run(i, e, path, skipped_rows)) is not None]
    mark_conflicts(runs, path)
    notes = file_notes(path, context, skipped_rows)
    return ResultFile(path=path, context=context, runs=runs, skipped_rows=skipped_rows, notes=notes)


def read_json(path: Path) -> Any:
    """A file's JSON value; LoadError naming the file when it cannot be read or parsed."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LoadError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    data = _fast_json(raw)
    if data is None:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LoadError(f"{path}: not UTF-8 text: {exc}") from exc
        if not text.strip():
            raise LoadError(f"{path}: empty file")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            recovered = recover_truncated(text) if cut_tail(text, exc) else None
            if recovered is None:
                cut = " (cut off)" if cut_tail(text, exc) else ""
                raise LoadError(
                    f"{path}: not valid JSON{cut}: {exc.msg} at line {exc.lineno} column {exc.colno}"
                ) from exc
            data, kept = recovered
            data["context"][TRUNCATED_KEY] = (
                f"the file ends before its last entry closes (its writer was stopped?): {kept} whole "
                f"benchmark entr{'y' if kept == 1 else 'ies'} read, the rest lost"
            )
            notice(f"warning: {path}: {data['context'][TRUNCATED_KEY]}")  # on the console too
        except RecursionError as exc:
            raise LoadError(f"{path}: JSON nested too deeply") from exc
    return data


# What a JSON text cut off in the middle of a token can end in, from where the parser stopped:
# part of a literal, of a number, or nothing (the text ended where a value or delimiter was due).
_LITERALS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")
_PART_OF_A_NUMBER = re.compile(r"-?\d*(\.\d*)?([eE][-+]?\d*)?")


def cut_tail(text: str, exc: json.JSONDecodeError) -> bool:
    """Whether the parser stopped only because the text ended: a truncated file (its writer was
    stopped), not a broken one. A syntax error anywhere before the end is not a truncation."""
    if exc.msg.startswith("Unterminated string"):
        return "\n" not in text[exc.pos :]  # the string runs to the end (a JSON string holds no newline)
    rest = text[exc.pos :].rstrip()
    return (
        rest == "" or any(lit.startswith(rest) for lit in _LITERALS) or (_PART_OF_A_NUMBER.fullmatch(rest) is not None)
    )


# Context keys that say a file is not what its executable would have written had it finished:
# set by the reader for a truncated file, by `triaudit run` for one it rebuilt from the cases an
# executable had written before it was stopped. Both become a warning naming the file.
TRUNCATED_KEY = "triaudit_truncated"
SALVAGED_KEY = "triaudit_salvaged"
_BENCHMARKS_OPEN = re.compile(r'"benchmarks"\s*:\s*\[')


def recover_truncated(text: str) -> tuple[dict, int] | None:
    """A Google Benchmark file cut off after its context, read up to its last whole entry:
    ({"context": ..., "benchmarks": [...]}, entries kept), or None when even the context is not
    whole. Google Benchmark writes the closing `]}` only at the end, so a killed executable leaves
    such a prefix; triaudit's own executables write it case by case (result_file.hpp)."""
    m = _BENCHMARKS_OPEN.search(text)
    if m is None:
        return None
    head = text[: m.start()].rstrip().rstrip(",")
    try:
        top = json.loads(head + "}")
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(top, dict) or not isinstance(top.get("context"), dict):
        return None  # no context: nothing says what ran where
    decoder, pos, entries = json.JSONDecoder(), m.end(), []
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            break
        try:
            entry, pos = decoder.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError):
            break
        entries.append(entry)
    return {"context": dict(top["context"]), "benchmarks": entries}, len(entries)


def _fast_json(raw: bytes) -> Any:
    """orjson where installed (several times faster on large files); None when it cannot decide, so
    that the standard library parses instead: NaN/Infinity literals (Google Benchmark writes them),
    and every error message."""
    if _orjson is None:
        return None
    try:
        return _orjson.loads(raw)
    except (_orjson.JSONDecodeError, RecursionError, OverflowError):
        return None


def load_result(path: str | Path) -> ResultFile:
    path = Path(path)
    return parse_result(read_json(path), path)
