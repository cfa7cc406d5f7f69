"""nvbandwidth's testcases as triaudit cases: which name each matrix cell gets, in which unit.

Shared by the text and the JSON reader (nvbandwidth.py, nvbandwidth_json.py). The unit always comes
from the matrix title nvbandwidth prints (`... bandwidth (GB/s)`, `... (ns)`), never from the
testcase's name: a testcase this module does not know keeps its own name (`<testcase>/row:/col:`)
rather than a triaudit name it might not mean. The descriptions the names follow are nvbandwidth's
own (testcase.h): a "write" copies row -> column from the row's context, a "read" column -> row;
`all_to_host` / `host_to_all` measure one GPU's host copy while every other GPU copies too
(`load:all_gpus`); `all_to_one` / `one_to_all` report one GPU's total over all its peers;
multinode matrices are indexed by MPI process, not by local device (the context maps them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from triaudit.peers.model import PeerCase, PeerRun, gpu_name_of, refuse

TOOL = "nvbandwidth"


@dataclass
class Matrix:
    description: str
    line: int
    columns: list[str]
    cells: dict = field(default_factory=dict)  # (row label, column label) -> float | None
    key: str = ""  # from the SUM / &&&& PERF line

    @property
    def unit(self) -> str | None:
        m = re.search(r"\((GB/s|ns)\)\s*$", self.description)
        return {"GB/s": "bw", "ns": "latency"}[m.group(1)] if m else None


@dataclass
class Test:
    key: str
    line: int
    status: str = ""  # "" (results), Waived, Error, ERROR, Not Found, stopped (the run died in it)
    message: str = ""
    matrices: list = field(default_factory=list)


@dataclass
class Device:
    name: str
    bus: str = ""  # "" where the version prints none (v0.2)
    host: str = ""  # multinode: the process's host
    local: str = ""  # multinode: the device index on that host


# test key -> name template (r: row label, c: column label). Host tests are 1 x N (row "0" is the CPU).
UNI = {
    "host_to_device_memcpy_ce": "memcpy/h2d/pinned/device:{c}",
    "device_to_host_memcpy_ce": "memcpy/d2h/pinned/device:{c}",
    "host_to_device_bidirectional_memcpy_ce": "memcpy/bidir/pinned/device:{c}",
    "device_to_host_bidirectional_memcpy_ce": "memcpy/bidir/pinned/measured:d2h/device:{c}",
    # An SM copy from pinned host memory is a kernel reading mapped host memory: triaudit's zero_copy.
    "host_to_device_memcpy_sm": "memcpy/h2d/zero_copy/device:{c}",
    "device_to_host_memcpy_sm": "memcpy/d2h/zero_copy/device:{c}",
    "host_to_device_bidirectional_memcpy_sm": "memcpy/bidir/zero_copy/device:{c}",
    "device_to_host_bidirectional_memcpy_sm": "memcpy/bidir/zero_copy/measured:d2h/device:{c}",
    "device_local_copy": "memcpy/d2d/copy_engine/device:{c}",
    "device_to_device_memcpy_write_ce": "p2p/ce/uni/src:{r}/dst:{c}",
    "device_to_device_memcpy_read_ce": "p2p/ce_read/uni/src:{c}/dst:{r}",
    "device_to_device_memcpy_write_sm": "p2p/sm_write/uni/src:{r}/dst:{c}",
    "device_to_device_memcpy_read_sm": "p2p/sm_read/uni/src:{c}/dst:{r}",
}
for _kind, _var in (("ce", "pinned"), ("sm", "zero_copy")):
    # One GPU's host copy while all others copy too; the bidirectional ones report the direction
    # their description names (all_to_host: device to host, host_to_all: host to device).
    UNI[f"all_to_host_memcpy_{_kind}"] = f"memcpy/d2h/{_var}/load:all_gpus/device:{{c}}"
    UNI[f"host_to_all_memcpy_{_kind}"] = f"memcpy/h2d/{_var}/load:all_gpus/device:{{c}}"
    UNI[f"all_to_host_bidirectional_memcpy_{_kind}"] = f"memcpy/bidir/{_var}/measured:d2h/load:all_gpus/device:{{c}}"
    UNI[f"host_to_all_bidirectional_memcpy_{_kind}"] = f"memcpy/bidir/{_var}/load:all_gpus/device:{{c}}"
    for _rw, _test in (("write", "ce" if _kind == "ce" else "sm_write"), ("read", f"{_kind}_read")):
        # One GPU's total over all its peers, in nvbandwidth's own read/write sense.
        UNI[f"all_to_one_{_rw}_{_kind}"] = f"p2p/{_test}/all_to_one/device:{{c}}"
        UNI[f"one_to_all_{_rw}_{_kind}"] = f"p2p/{_test}/one_to_all/device:{{c}}"
        src_dst = "src:{c}/dst:{r}" if _rw == "read" else "src:{r}/dst:{c}"
        # Indexed by MPI process: a variant of their own, so they never meet a single-node pair.
        UNI[f"multinode_device_to_device_memcpy_{_rw}_{_kind}"] = f"p2p/{_test}/multinode/{src_dst}"
# Bidirectional GPU pairs: three matrices since v0.5-ish (the first copy column -> row, the second
# row -> column, their sum); one before (CE: the measured copy; SM: the sum of both).
BIDIR = {
    "device_to_device_bidirectional_memcpy_write_ce": "p2p/ce/bidir/src:{c}/dst:{r}",
    "device_to_device_bidirectional_memcpy_read_ce": "p2p/ce_read/bidir/src:{c}/dst:{r}",
    "device_to_device_bidirectional_memcpy_write_sm": "p2p/sm_write/bidir/src:{c}/dst:{r}",
    "device_to_device_bidirectional_memcpy_read_sm": "p2p/sm_read/bidir/src:{c}/dst:{r}",
}
for _k, _t in list(BIDIR.items()):
    BIDIR["multinode_" + _k] = _t.replace("/bidir/", "/multinode_bidir/")
LATENCY = {
    "host_device_latency_sm": "latency/host_device/sm/device:{c}",
    "device_to_device_latency_sm": "latency/p2p/sm/src:{r}/dst:{c}",
}


def cell(token: str) -> float | None:
    """A matrix cell: N/A, or 0 (older versions' "not measured"), is no figure."""
    if token.upper() == "N/A":
        return None
    v = float(token)
    return None if v == 0.0 else v


def base_key(key: str) -> str:
    """A SUM key of a bidirectional test's matrix (`..._read1`, `_write2`, `_total`) -> the test."""
    return re.sub(r"_(read1|read2|write1|write2|total)$", "", key)


def _rows(m: Matrix) -> set:
    return {r for r, _ in m.cells}


def _template(t: Test, m: Matrix) -> tuple[str, str]:
    """(name template, unit) for the test's first matrix; its own name where the test is unknown,
    where its title's unit is not the unit the mapping is for, or where a one-row test has more."""
    unit = m.unit or ""
    if t.key in LATENCY:
        known, want = LATENCY[t.key], "latency"
    else:
        known, want = UNI.get(t.key) or BIDIR.get(t.key), "bw"
    if known and unit == want and ("{r}" in known or len(_rows(m)) == 1):
        return known, unit
    return (t.key + "/row:{r}/col:{c}" if len(_rows(m)) > 1 else t.key + "/device:{c}"), unit


def _name(template: str, r: str, c: str, buffer_bytes: int | None) -> str:
    return template.format(r=r, c=c) + (f"/bytes:{buffer_bytes}" if buffer_bytes else "")


def _counters(unit: str, v: float) -> dict:
    return {"bytes_per_second": v * 1e9} if unit == "bw" else {"latency_s": v * 1e-9}


def devices_to_context(run: PeerRun, devices: dict[int, Device]) -> None:
    if devices:
        run.context["devices"] = "; ".join(
            f"{k}: {d.name} on {d.host}, device {d.local} ({d.bus})" if d.host else f"{k}: {d.name} ({d.bus or '?'})"
            for k, d in sorted(devices.items())
        )
        hosts = sorted({d.host for d in devices.values() if d.host})
        if hosts:
            run.context["hosts"] = ", ".join(hosts)
        run.gpu_name = gpu_name_of([d.name for d in devices.values()], run.not_read, "devices")
    else:
        run.not_read.append("the GPU name (no 'Device N:' lines)")
    if run.version is None:
        run.not_read.append("the nvbandwidth version (no 'nvbandwidth Version:' line)")


def to_cases(run: PeerRun, tests: list[Test], buffer_bytes: int | None, path: Path) -> None:
    if buffer_bytes:
        run.context["copy_size_bytes"] = f"{buffer_bytes} (given with --buffer-size; nvbandwidth does not print it)"
    else:
        run.not_read.append(
            "the copy size (nvbandwidth does not print it; --buffer-size supplies it): no bytes: argument"
        )
    run.not_read.append("-i/--testSamples and -m/--useMean (not printed): statistic as nvbandwidth's defaults")
    left_out, waived = [], []
    for t in tests:
        if t.status == "Waived":
            waived.append(t.key)
            left_out.append(f"{t.key} (waived: {t.message})" if t.message else f"{t.key} (waived)")
        elif t.status == "stopped":
            run.cases.append(PeerCase(name=f"nvbandwidth_test/{t.key}", error=t.message))
        elif t.status:
            run.cases.append(
                PeerCase(name=f"nvbandwidth_test/{t.key}", error=f"nvbandwidth: {t.status}: {t.message}".strip())
            )
        elif t.key in BIDIR and t.matrices[0].unit == "bw":
            _bidir_cases(run, t, BIDIR[t.key], buffer_bytes, left_out)
        else:
            template, unit = _template(t, t.matrices[0])
            if unit not in ("bw", "latency"):
                raise refuse(path, t.matrices[0].line, "a matrix title ending in '(GB/s)' or '(ns)'")
            for extra in t.matrices[1:]:
                left_out.append(f"{t.key}: the extra matrix '{extra.description}'")
            for (r, c), v in t.matrices[0].cells.items():
                if v is not None:
                    name = _name(template, r, c, buffer_bytes if unit == "bw" else None)
                    run.cases.append(PeerCase(name=name, counters=_counters(unit, v), label=f"nvbandwidth {t.key}"))
    if not run.cases:
        raise refuse(path, None, f"at least one measured testcase: every testcase was waived ({', '.join(waived)})")
    if left_out:
        run.context["left_out"] = "; ".join(left_out)


def _bidir_cases(run, t: Test, template, buffer_bytes, left_out) -> None:
    if len(t.matrices) == 1 and base_key(t.matrices[0].key or t.key) == (t.matrices[0].key or t.key):
        _single_bidir(run, t, template, buffer_bytes)
        return
    by_key = {}
    for k, m in enumerate(t.matrices):
        suffix = m.key.rsplit("_", 1)[-1] if m.key else ("first", "second", "total")[k] if k < 3 else ""
        by_key[{"read1": "first", "write1": "first", "read2": "second", "write2": "second"}.get(suffix, suffix)] = m
    first, second, total = by_key.get("first"), by_key.get("second"), by_key.get("total")
    if first is None:
        left_out.append(f"{t.key}: no first-direction matrix")
        return
    for (r, c), v in first.cells.items():
        if v is None:
            continue
        counters = {"bytes_per_second": v * 1e9}
        if second is not None and second.cells.get((r, c)) is not None:
            counters["bytes_per_second_reverse"] = second.cells[(r, c)] * 1e9
        if total is not None and total.cells.get((r, c)) is not None:
            counters["bytes_per_second_total"] = total.cells[(r, c)] * 1e9
        run.cases.append(
            PeerCase(
                name=_name(template, r, c, buffer_bytes),
                counters=counters,
                label=f"nvbandwidth {t.key}: first copy; reverse and total as counters",
            )
        )


def _single_bidir(run, t: Test, template, buffer_bytes) -> None:
    """Versions that print one matrix for a bidirectional pair (v0.2): the CE tests report the
    measured copy (the reverse runs unmeasured), the SM tests the sum of both directions."""
    total = t.key.endswith("_sm")
    for (r, c), v in t.matrices[0].cells.items():
        if v is None:
            continue
        counters = {"bytes_per_second_total": v * 1e9} if total else {"bytes_per_second": v * 1e9}
        what = "the sum of both directions" if total else "the measured copy (the reverse ran unmeasured)"
        run.cases.append(
            PeerCase(name=_name(template, r, c, buffer_bytes), counters=counters, label=f"nvbandwidth {t.key}: {what}")
        )
