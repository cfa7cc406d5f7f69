"""nvbandwidth's JSON (`-j`, json_output.cpp / the older nvbandwidth_json.cpp): matrices of strings,
a bidirectional test's three matrices appended into one list, a status per testcase.

Statuses as the writers set them: `Passed` (results), `Waived` (name and status only), `ERROR` (a `-t`
name or index nvbandwidth does not know; its message is dropped), `Error`/`Not Found`, and
`Running`, which stays where the run died inside the testcase: the top-level `error` then holds
the ASSERT that stopped it. v0.10 adds `CUDA Driver API Version` and `Version Major/Minor/Patch`;
the device list (v0.8+) ends each entry with the host in parentheses.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from triaudit.peers import statistics
from triaudit.peers.model import PeerRun, refuse
from triaudit.peers.nvbandwidth_cases import (
    BIDIR,
    LATENCY,
    TOOL,
    Device,
    Matrix,
    Test,
    cell,
    devices_to_context,
    to_cases,
)

_JSON_DEVICE = re.compile(r"^(\d+):\s+(.*?)\s+\(([0-9a-fA-F:.]+)\)(?::\s+\(([^)]*)\))?")
_CONTEXT = (
    ("CUDA Runtime Version", "cuda_runtime_version_as_printed"),
    ("CUDA Driver API Version", "cuda_driver_api_version"),
    ("Driver Version", "driver_version"),
    ("Hostname", "host"),
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
    for k, ctx in _CONTEXT:
        if root.get(k) is not None:
            run.context[ctx] = str(root[k])
    error = str(root.get("error") or "").strip()
    if error:
        run.context["nvbandwidth_error"] = error
    if root.get("warning"):
        run.context["nvbandwidth_warning"] = str(root["warning"]).strip()
    devices = {}
    for d in root.get("GPU Device list") or []:
        m = _JSON_DEVICE.match(str(d))
        if m:
            devices[int(m.group(1))] = Device(m.group(2), m.group(3))
            if m.group(4):
                hosts = set(filter(None, run.context.get("host", "").split(", "))) | {m.group(4)}
                run.context["host"] = ", ".join(sorted(hosts))
    tests = _tests(root, path, error)
    if not tests:
        raise refuse(path, None, "at least one testcase in the nvbandwidth JSON")
    devices_to_context(run, devices)
    to_cases(run, tests, buffer_bytes, path)
    return run


def _tests(root: dict, path: Path, error: str) -> list[Test]:
    tests: list[Test] = []
    by_name: dict[str, Test] = {}
    for i, tc in enumerate(root.get("testcases") or []):
        if not isinstance(tc, dict) or "name" not in tc:
            raise refuse(path, None, f"testcases[{i}] to be an object with a name")
        t = Test(key=str(tc["name"]), line=0)
        status = str(tc.get("status", ""))
        message = str(tc.get("error") or "").strip()
        if status == "Running":
            # The run died inside this testcase; the writer keeps the ASSERT at the top level.
            t.status = "stopped"
            t.message = (
                f"nvbandwidth stopped in this testcase: {error}"
                if error
                else "nvbandwidth: the testcase is still 'Running' in the JSON and no error was recorded (the run died?)"
            )
        elif status == "Waived":
            t.status, t.message = status, message
        elif message or status not in ("Passed", ""):
            t.status = "Error" if status in ("Passed", "") else status
            t.message = message or (
                "(the JSON gives no message; nvbandwidth writes ERROR for a -t name or index it does not know)"
                if status == "ERROR"
                else "(the JSON gives no message)"
            )
        if not t.status:
            rows = tc.get("bandwidth_matrix")
            if not isinstance(rows, list) or not rows:
                raise refuse(path, None, f"testcases[{i}] ({t.key}) to have a bandwidth_matrix (status {status!r})")
            t.matrices = _matrices(rows, _description(tc, t.key), t.key, path)
        earlier = by_name.get(t.key)
        if earlier is not None and earlier.status == "stopped":
            tests.remove(earlier)  # the writer adds an errored testcase again under the same name
        by_name[t.key] = t
        tests.append(t)
    if error and not any(t.status == "stopped" for t in tests):
        tests.append(Test(key="run", line=0, status="stopped", message=f"nvbandwidth stopped: {error}"))
    return tests


def _description(tc: dict, key: str) -> str:
    """The title, which carries the unit; the older writer's ends in a space."""
    desc = str(tc.get("bandwidth_description", "")).strip()
    if desc:
        return desc
    return "(no bandwidth_description) " + ("(ns)" if key in LATENCY else "(GB/s)")


def _matrices(rows: list, description: str, key: str, path: Path) -> list[Matrix]:
    """JsonOutput appends every matrix's rows to one list (bidirectional tests write three): split
    square tests back into N x N matrices in the order written."""
    width = len(rows[0]) if isinstance(rows[0], list) else 0
    if not width or any(not isinstance(r, list) or len(r) != width for r in rows):
        raise refuse(path, None, f"rows of equal length in the bandwidth_matrix of {key}")
    try:
        values = [[cell(str(v)) for v in row] for row in rows]
    except ValueError:
        raise refuse(path, None, f'numbers or "N/A" in the bandwidth_matrix of {key}') from None
    chunks = [values]
    if key in BIDIR and len(values) == 3 * width:
        chunks = [values[k * width : (k + 1) * width] for k in range(3)]
    out = []
    for n, chunk in enumerate(chunks):
        m = Matrix(
            description=description,
            line=0,
            columns=[str(c) for c in range(width)],
            key=f"{key}_{('read1', 'read2', 'total')[n]}" if len(chunks) == 3 else key,
        )
        for r, row in enumerate(chunk):
            for c, v in enumerate(row):
                m.cells[(str(r), str(c))] = v
        out.append(m)
    return out
