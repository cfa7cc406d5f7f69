"""A GPU's soak as time series, from its merged result file (merge.py): per workload and window
the rate, and per window the power, SM clock, temperature, throttle reasons and health counters
(every case of a window carries the window's figures; its first case, the GEMM, the health
counters over the window). The cases that were not measured become events: an uncorrected error
or a critical XID during a window (the harness's "health: " errors), any other error once per
message. A window's "sdc: " error is in the hash log in full (sdc.py reads it there) and is taken
from here only when the hash log lacks that window. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

from triaudit.results.gbench import case_name
from triaudit.soak.drift import Point
from triaudit.soak.events import ERROR, SDC, UNCORRECTED, XID, Event

# The counter holding each workload's rate, and how its case is named (benchmarks/soak/soak_plan.hpp).
RATE = {
    "gemm": "flops",
    "triad": "bytes_per_second",
    "h2d": "bytes_per_second",
    "d2h": "bytes_per_second",
    "p2p": "bytes_per_second",
}
JUDGED_FOR_DRIFT = ("gemm", "triad")  # device-bound: the copies also carry the host's own load
UNITS = {
    "gemm": (1e12, "TFLOP/s"),
    "triad": (1e9, "GB/s"),
    "h2d": (1e9, "GB/s"),
    "d2h": (1e9, "GB/s"),
    "p2p": (1e9, "GB/s"),
}


def workload_of(case: str) -> str:
    """soak/gemm/... -> gemm; soak/stream/triad/... -> triad; soak/copy/h2d/... -> h2d."""
    parts = case.split("/")
    if len(parts) < 3 or parts[0] != "soak":
        return ""
    return parts[2] if parts[1] in ("stream", "copy") else parts[1]


@dataclass(frozen=True)
class WindowFigures:
    window: int
    end_unix: float | None
    rates: dict[str, float]  # workload -> its rate
    power_w: float | None
    sm_clock_mhz: float | None
    temperature_c: float | None
    throttled: bool | None
    health: dict[str, float]  # health_* counters over the window


def _status(e: dict) -> tuple[str, str]:
    if e.get("skipped") is True or (str(e.get("error_message", "")).startswith("skipped:")):
        return "skipped", str(e.get("skip_message") or e.get("error_message", ""))
    if e.get("error_occurred"):
        return "error", str(e.get("error_message", ""))
    return "ok", ""


def _power(e: dict) -> float | None:
    """The energy counter's mean power where NVML has it, else the power samples'."""
    for k in ("watts_mean", "power_samples_mean_w"):
        v = e.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            return float(v)
    return None


def _num(e: dict, key: str) -> float | None:
    v = e.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def figures(entries: list[dict]) -> list[WindowFigures]:
    """One WindowFigures per window that has a measured case, in window order."""
    by_window: dict[int, list[dict]] = {}
    for e in entries:
        by_window.setdefault(int(e.get("repetition_index", 0)), []).append(e)
    out = []
    for w in sorted(by_window):
        ok = [e for e in by_window[w] if _status(e)[0] == "ok"]
        if not ok:
            continue
        rates = {}
        for e in ok:
            load = workload_of(case_name(str(e.get("run_name", e.get("name", "")))))
            rate = _num(e, RATE.get(load, ""))
            if rate is not None:
                rates[load] = rate
        first = ok[0]
        throttled = _num(first, "throttled")
        out.append(
            WindowFigures(
                w,
                _num(first, "window_end_unix_s"),
                rates,
                _power(first),
                _num(first, "sm_clock_mean_mhz"),
                _num(first, "temperature_end_c"),
                None if throttled is None else throttled > 0,
                {
                    k: float(v)
                    for e in ok
                    for k, v in e.items()
                    if k.startswith("health_") and isinstance(v, (int, float))
                },
            )
        )
    return out


def points(figs: list[WindowFigures], workload: str) -> list[Point]:
    return [
        Point(f.window, f.end_unix or 0.0, f.rates[workload], f.power_w)
        for f in figs
        if workload in f.rates and f.end_unix is not None
    ]


def entry_events(
    entries: list[dict],
    gpu: tuple[str, str, str],
    start_unix: float,
    window_s: float,
    window_end: dict[int, float],
    hashed_windows: set[int],
) -> tuple[list[Event], list[str]]:
    """(events, notes) from the cases that were not measured. `gpu` is (uuid, index, name);
    `window_end` the windows' end times the hash log holds (an errored case carries none)."""
    uuid, index, name = gpu
    events: list[Event] = []
    notes: list[str] = []
    said: set[str] = set()
    for e in entries:
        status, message = _status(e)
        if status == "ok":
            continue
        w = int(e.get("repetition_index", 0))
        case = case_name(str(e.get("run_name", e.get("name", ""))))
        if status == "skipped":
            note = f"GPU {index}: {case}: {message}"
            if note not in notes:
                notes.append(note)
            continue
        if "sdc: " in message and w in hashed_windows:
            continue  # the hash log has it in full: sdc.py's event
        when = window_end.get(w, start_unix + (w + 1) * window_s)
        if "health: " in message:
            kind = XID if "XID" in message else UNCORRECTED
        elif "sdc: " in message:
            kind = SDC
        else:
            kind = ERROR
            if message in said:  # a process that failed says it again for every later case: once
                continue
            said.add(message)
        events.append(Event(kind, uuid, index, name, when, when - start_unix, w, case, message))
    return events, notes
