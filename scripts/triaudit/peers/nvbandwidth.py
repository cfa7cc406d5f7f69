"""nvbandwidth: its text matrices (every version: `0.00` or `N/A` for pairs not measured, row and
column labels, `SUM`/`&&&& PERF` lines) and its JSON (`-j`).

Each matrix cell becomes one case in triaudit's scheme where one exists (see TESTS); the GPU of a
host copy is a `device:<i>` argument, GPU pairs are `src:<i>/dst:<j>` in the direction the data
moved (checked against testcases_ce.cpp / testcases_sm.cpp: a "write" copies row -> column from the
row's context, a "read" copies column -> row from the row's context). nvbandwidth prints neither its
copy size nor -i/-m: `--buffer-size` supplies the size when known; otherwise the cases carry no
`bytes:` argument and the context says so. A 0 in a matrix means "not measured" (older versions
print 0.00 for skipped pairs and the diagonal), never a bandwidth.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from triaudit.peers import statistics
from triaudit.peers.model import PeerCase, PeerRun, gpu_name_of, refuse

TOOL = "nvbandwidth"


@dataclass
class Matrix:
    description: str
    line: int
    columns: list[str]
    cells: dict = field(default_factory=dict)  # (row label, column label) -> float | None
    key: str = ""  # from the SUM / &&&& PERF line


@dataclass
class Test:
    key: str
    line: int
    status: str = ""  # "" (results), Waived, Error, ...
    message: str = ""
    matrices: list = field(default_factory=list)


# test key -> (what it is in triaudit's scheme, how a cell maps): the name template takes
# r (row label), c (column label). Host tests are 1 x N (row "0" is the CPU).
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
# Bidirectional GPU pairs: three matrices (the first copy column -> row, the second row -> column,
# their sum).
BIDIR = {
    "device_to_device_bidirectional_memcpy_write_ce": "p2p/ce/bidir/src:{c}/dst:{r}",
    "device_to_device_bidirectional_memcpy_read_ce": "p2p/ce_read/bidir/src:{c}/dst:{r}",
    "device_to_device_bidirectional_memcpy_write_sm": "p2p/sm_write/bidir/src:{c}/dst:{r}",
    "device_to_device_bidirectional_memcpy_read_sm": "p2p/sm_read/bidir/src:{c}/dst:{r}",
}
LATENCY = {
    "host_device_latency_sm": "latency/host_device/sm/device:{c}",
    "device_to_device_latency_sm": "latency/p2p/sm/src:{r}/dst:{c}",
}

_DEVICE = re.compile(r"^Device\s+(\d+):\s+(.*?)\s+\(([0-9a-fA-F:.]+)\)\s*$")
_PROCESS = re.compile(r"^Process\s+\d+\s+\(([^)]*)\):\s+device\s+(\d+):\s+(.*?)\s+\(([0-9a-fA-F:.]+)\)\s*$")
_JSON_DEVICE = re.compile(r"^(\d+):\s+(.*?)\s+\(([0-9a-fA-F:.]+)\)")
_STATUS = re.compile(r"^(Waived|ERROR|Error|Not Found):\s*(.*)$")
_DESCRIPTION = re.compile(r"\((GB/s|ns)\)\s*$")


def _cell(token: str) -> float | None:
    if token.upper() == "N/A":
        return None
    v = float(token)
    return None if v == 0.0 else v


def read_text(path: Path, text: str, buffer_bytes: int | None = None) -> PeerRun:
    run = PeerRun(tool=TOOL, source=path, statistic=statistics.nvbandwidth(None, None))
    lines = text.splitlines()
    tests: list[Test] = []
    devices: dict[int, tuple[str, str]] = {}
    current: Test | None = None
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        lineno = i + 1
        if s.startswith("nvbandwidth Version:"):
            run.version = s.split(":", 1)[1].strip()
        elif s.startswith("Built from Git version:"):
            run.context["git_version"] = s.split(":", 1)[1].strip()
        elif s.startswith("CUDA Runtime Version:"):
            run.context["cuda_runtime_version_as_printed"] = s.split(":", 1)[1].strip()
        elif s.startswith("CUDA Driver Version:"):
            run.context["cuda_driver_version"] = s.split(":", 1)[1].strip()
        elif s.startswith("Driver Version:"):
            run.context["driver_version"] = s.split(":", 1)[1].strip()
        elif s.startswith("MPI version:"):
            run.context["mpi_version"] = s.split(":", 1)[1].strip()
        elif _DEVICE.match(s):
            m = _DEVICE.match(s)
            devices[int(m.group(1))] = (m.group(2), m.group(3))
        elif _PROCESS.match(s):
            m = _PROCESS.match(s)
            devices[len(devices)] = (m.group(3), m.group(4))
        elif s.startswith("Running ") and s.endswith("."):
            _check_done(current, path)
            current = Test(key=s[len("Running ") : -1].strip(), line=lineno)
            tests.append(current)
        elif _STATUS.match(s):
            m = _STATUS.match(s)
            if current is not None and not current.matrices and not current.status:
                current.status, current.message = m.group(1), m.group(2)
            else:  # e.g. "ERROR: Testcase x not found!" before any Running line
                tests.append(Test(key=m.group(2) or m.group(1), line=lineno, status=m.group(1), message=m.group(2)))
        elif _DESCRIPTION.search(s) and current is not None:
            i = _read_matrix(current, lines, i, path)
            continue
        elif (s.startswith("SUM ") or s.startswith("&&&& PERF ")) and current is not None and current.matrices:
            parts = s.split()
            key = parts[1] if s.startswith("SUM ") else parts[2]
            current.matrices[-1].key = key
        i += 1
    _check_done(current, path)
    if not tests:
        raise refuse(path, None, "nvbandwidth output: a 'Running <testcase>.' line and its matrix")
    _devices_to_context(run, devices)
    _cases(run, tests, buffer_bytes, path)
    return run


def _check_done(test: Test | None, path: Path) -> None:
    if test is not None and not test.matrices and not test.status:
        raise refuse(
            path,
            test.line,
            f"the bandwidth matrix of {test.key} (or a Waived/Error line) after "
            "this line: the output ends or moves on without it (truncated?)",
        )


def _read_matrix(test: Test, lines: list[str], i: int, path: Path) -> int:
    """The description at line i, the header after it, rows until a blank line; -> next index."""
    desc = lines[i].strip()
    j = i + 1
    while j < len(lines) and not lines[j].strip():
        j += 1
    if j >= len(lines):
        raise refuse(path, i + 1, f"the column header of the matrix '{desc}' (the output ends here)")
    columns = lines[j].split()
    if not columns:
        raise refuse(path, j + 1, "a matrix header of column labels", lines[j])
    m = Matrix(description=desc, line=i + 1, columns=columns)
    j += 1
    while j < len(lines) and lines[j].strip():
        tokens = lines[j].split()
        if _DESCRIPTION.search(lines[j].strip()) or lines[j].strip().startswith(("SUM ", "&&&&")):
            break
        if len(tokens) != len(columns) + 1:
            raise refuse(path, j + 1, f"a matrix row: a label and {len(columns)} values (numbers or N/A)", lines[j])
        try:
            for col, tok in zip(columns, tokens[1:]):
                m.cells[(tokens[0], col)] = _cell(tok)
        except ValueError:
            raise refuse(path, j + 1, f"numbers or N/A in the matrix '{desc}'", lines[j]) from None
        j += 1
    if not m.cells:
        raise refuse(
            path,
            j + 1 if j < len(lines) else len(lines),
            f"the rows of the matrix '{desc}' (the output ends here: truncated?)",
        )
    test.matrices.append(m)
    return j


def _devices_to_context(run: PeerRun, devices: dict) -> None:
    if devices:
        run.context["devices"] = "; ".join(f"{k}: {n} ({b})" for k, (n, b) in sorted(devices.items()))
        run.gpu_name = gpu_name_of([n for n, _ in devices.values()], run.not_read, "devices")
    else:
        run.not_read.append("the GPU name (no 'Device N:' lines)")
    if run.version is None:
        run.not_read.append("the nvbandwidth version (no 'nvbandwidth Version:' line)")


def _name(template: str, r: str, c: str, buffer_bytes: int | None) -> str:
    name = template.format(r=r, c=c)
    return name + (f"/bytes:{buffer_bytes}" if buffer_bytes else "")


def _cases(run: PeerRun, tests: list[Test], buffer_bytes: int | None, path: Path) -> None:
    if buffer_bytes:
        run.context["copy_size_bytes"] = f"{buffer_bytes} (given with --buffer-size; nvbandwidth does not print it)"
    else:
        run.not_read.append(
            "the copy size (nvbandwidth does not print it; --buffer-size supplies it): no bytes: argument"
        )
    run.not_read.append("-i/--testSamples and -m/--useMean (not printed): statistic as nvbandwidth's defaults")
    left_out = []
    for t in tests:
        if t.status:
            if t.status != "Waived":
                run.cases.append(
                    PeerCase(name=f"nvbandwidth_test/{t.key}", error=f"nvbandwidth: {t.status}: {t.message}".strip())
                )
            else:
                left_out.append(f"{t.key} (waived: {t.message})" if t.message else f"{t.key} (waived)")
            continue
        if t.key in BIDIR:
            _bidir_cases(run, t, BIDIR[t.key], buffer_bytes, left_out)
            continue
        template, unit = (UNI.get(t.key), "bw") if t.key in UNI else (LATENCY.get(t.key), "latency")
        if template is None:
            template = t.key + "/row:{r}/col:{c}" if len(_rows(t.matrices[0])) > 1 else t.key + "/device:{c}"
        for extra in t.matrices[1:]:
            left_out.append(f"{t.key}: the extra matrix '{extra.description}'")
        m = t.matrices[0]
        for (r, c), v in m.cells.items():
            if v is None:
                continue
            name = _name(template, r, c, buffer_bytes if unit == "bw" else None)
            counters = {"bytes_per_second": v * 1e9} if unit == "bw" else {"latency_s": v * 1e-9}
            run.cases.append(PeerCase(name=name, counters=counters, label=f"nvbandwidth {t.key}"))
    if left_out:
        run.context["left_out"] = "; ".join(left_out)


def _rows(m: Matrix) -> set:
    return {r for r, _ in m.cells}


def _bidir_cases(run, t: Test, template, buffer_bytes, left_out) -> None:
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


def read_json(path: Path, text: str, buffer_bytes: int | None = None) -> PeerRun:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise refuse(path, exc.lineno, f"nvbandwidth JSON ({exc.msg} at column {exc.colno}; truncated?)") from None
    root = data.get("nvbandwidth") if isinstance(data, dict) else None
    if not isinstance(root, dict):
        raise refuse(path, 1, 'an nvbandwidth JSON object ({"nvbandwidth": {...}})')
    run = PeerRun(tool=TOOL, source=path, statistic=statistics.nvbandwidth(None, None))
    run.version = root.get("version")
    if root.get("git_version"):
        run.context["git_version"] = str(root["git_version"])
    for k, ctx in (
        ("CUDA Runtime Version", "cuda_runtime_version_as_printed"),
        ("Driver Version", "driver_version"),
        ("Hostname", "host"),
    ):
        if root.get(k) is not None:
            run.context[ctx] = str(root[k])
    if root.get("error"):
        run.context["nvbandwidth_error"] = str(root["error"])
    if root.get("warning"):
        run.context["nvbandwidth_warning"] = str(root["warning"])
    devices = {}
    for d in root.get("GPU Device list") or []:
        m = _JSON_DEVICE.match(str(d))
        if m:
            devices[int(m.group(1))] = (m.group(2), m.group(3))
    tests = []
    for i, tc in enumerate(root.get("testcases") or []):
        if not isinstance(tc, dict) or "name" not in tc:
            raise refuse(path, None, f"testcases[{i}] to be an object with a name")
        t = Test(key=str(tc["name"]), line=0)
        status = str(tc.get("status", ""))
        if tc.get("error") or status not in ("Passed", ""):
            t.status = status or "Error"
            t.message = str(tc.get("error", ""))
            if status == "Passed" and tc.get("error"):
                t.status = "Error"
        rows = tc.get("bandwidth_matrix")
        if not t.status:
            if not isinstance(rows, list) or not rows:
                raise refuse(path, None, f"testcases[{k}] ({t.key}) to have a bandwidth_matrix (status {status!r})")
            t.matrices = _json_matrices(rows, str(tc.get("bandwidth_description", "")), t.key, path)
        tests.append(t)
    if not tests:
        raise refuse(path, None, "at least one testcase in the nvbandwidth JSON")
    _devices_to_context(run, devices)
    _cases(run, tests, buffer_bytes, path)
    return run


def _json_matrices(rows: list, description: str, key: str, path: Path) -> list[Matrix]:
    """JsonOutput appends every matrix's rows to one list (bidirectional tests write three): split
    square tests back into N x N matrices in the order written."""
    width = len(rows[0])
    try:
        values = [[_cell(str(v)) for v in row] for row in rows]
    except ValueError:
        raise refuse(path, None, f'numbers or "N/A" in the bandwidth_matrix of {key}') from None
    if any(len(r) != width for r in rows):
        raise refuse(path, None, f"rows of equal length in the bandwidth_matrix of {key}")
    chunks = [values]
    if key in BIDIR and len(values) == 3 * width:
        chunks = [values[k * width : (k + 1) * width] for k in range(3)]
    out = []
    for n, chunk in enumerate(chunks):
        m = Matrix(
            description=description,
            line=0,
            columns=[str(c) for c in range(width)],
            key=f"{key}_{('first', 'second', 'total')[n]}" if len(chunks) == 3 else key,
        )
        for r, row in enumerate(chunk):
            for c, v in enumerate(row):
                m.cells[(str(r), str(c))] = v
        out.append(m)
    return out


def read(path: Path, text: str, buffer_bytes: int | None = None) -> PeerRun:
    if text.lstrip().startswith("{"):
        return read_json(path, text, buffer_bytes)
    return read_text(path, text, buffer_bytes)
