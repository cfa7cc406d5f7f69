"""nvbandwidth: its text matrices (every version: `0.00` or `N/A` for pairs not measured, row and
column labels, `SUM`/`&&&& PERF` lines) and its JSON (`-j`, nvbandwidth_json.py).

Each matrix cell becomes one case (nvbandwidth_cases.py names them); the GPU of a host copy is a
`device:<i>` argument, GPU pairs are `src:<i>/dst:<j>` in the direction the data moved. nvbandwidth
prints neither its copy size nor -i/-m: `--buffer-size` supplies the size when known; otherwise the
cases carry no `bytes:` argument and the context says so. A 0 in a matrix means "not measured"
(older versions print 0.00 for skipped pairs and the diagonal), never a bandwidth.

Outputs as users paste them: a `> ` blockquote, a header that lost its indent, a `Running` line
left out (the matrix is then named by its SUM line), v0.2's `Waiving X.` and v0.6's bare
`Waived:`, multinode `Process N (host): device D:` lines, and a run that died in an
`ASSERT`/`NVML_ERROR`/`[CUDA_ERROR_...]` line (nvbandwidth exits there: the testcase it was in is an
error entry naming the line).
"""

from __future__ import annotations

import re
from pathlib import Path

from triaudit.peers import nvbandwidth_json, statistics
from triaudit.peers.model import PeerRun, refuse
from triaudit.peers.nvbandwidth_cases import (
    BIDIR,
    TOOL,
    Device,
    Matrix,
    Test,
    base_key,
    cell,
    devices_to_context,
    to_cases,
)

_DEVICE = re.compile(r"^Device\s+(\d+):\s+(.*?)(?:\s+\(([0-9a-fA-F:.]+)\))?\s*$")
_PROCESS = re.compile(r"^Process\s+(\d+)\s+\(([^)]*)\):\s+device\s+(\d+):\s+(.*?)(?:\s+\(([0-9a-fA-F:.]+)\))?\s*$")
_STATUS = re.compile(r"^(Waived|ERROR|Error|Not Found):\s*(.*)$")
_WAIVING = re.compile(r"^Waiving\s+(\S+?)\.?$")  # v0.2
_DESCRIPTION = re.compile(r"\((GB/s|ns)\)\s*$")
# error_handling.h: what every ASSERT / NVML_ASSERT / CU_ASSERT / CUDA_ASSERT prints before exit(1).
_FATAL = re.compile(r"^(ASSERT in expression |NVML_ERROR: \[|\[(?:CUDA_ERROR_\w+|cuda\w+)\] .* in expression )")
_HEADER = {
    "nvbandwidth Version": "version",
    "Built from Git version": "git_version",
    "CUDA Runtime Version": "cuda_runtime_version_as_printed",
    "CUDA Driver Version": "cuda_driver_version",  # v0.10: "CUDA Driver Version (API): 13.2 (13020)"
    "Driver Version": "driver_version",
    "MPI version": "mpi_version",
}


def _strip(line: str) -> str:
    return re.sub(r"^\s*>\s?", "", line).strip()  # a markdown blockquote around pasted lines


class _Reader:
    def __init__(self, path: Path, lines: list[str]):
        self.path, self.lines = path, lines
        self.tests: list[Test] = []
        self.devices: dict[int, Device] = {}
        self.current: Test | None = None
        self.run = PeerRun(tool=TOOL, source=path, statistic=statistics.nvbandwidth(None, None))
        self.unnamed_waived = 0
        self.sums = 0
        self.named_by_sum: list[str] = []
        self.cv: list[str] = []

    def header(self, s: str) -> bool:
        key, sep, value = s.partition(":")
        field = _HEADER.get(re.sub(r"\s*\(API\)$", "", key.strip())) if sep else None
        if field is None:
            return False
        if field == "version":
            self.run.version = value.strip()
        else:
            self.run.context[field] = value.strip()
        return True

    def new_test(self, key: str, lineno: int, status: str = "", message: str = "") -> Test:
        self.done()
        self.current = Test(key=key, line=lineno, status=status, message=message)
        self.tests.append(self.current)
        return self.current

    def done(self) -> None:
        t = self.current
        if t is not None and t.key == "":
            raise refuse(
                self.path,
                t.line,
                "the 'Running <testcase>.' line or a SUM line naming the matrix that starts here "
                "(neither is in the output: which testcase it is cannot be told)",
            )
        if t is not None and not t.matrices and not t.status:
            raise refuse(
                self.path,
                t.line,
                f"the bandwidth matrix of {t.key} (or a Waived/Error line) after "
                "this line: the output ends or moves on without it (truncated?)",
            )

    def fatal(self, s: str, i: int) -> None:
        """nvbandwidth printed its error and exited: the testcase it was in is an error entry."""
        t = self.current
        if t is None or t.matrices or t.status:
            t = self.new_test("before_any_testcase" if t is None else f"after_{t.key}", i + 1)
        start = t.line if t.line <= i else i
        detail = [_strip(x) for x in self.lines[start:i] if _strip(x) and not _strip(x).startswith("Running ")]
        t.status = "stopped"
        t.message = f"nvbandwidth stopped (line {i + 1}): {s}" + (
            f" (after: {'; '.join(detail[:3])})" if detail else ""
        )
        self.run.context["stopped"] = f"the run stopped at line {i + 1} ({s[:60]}...): later testcases did not run"

    def sum_line(self, s: str, lineno: int) -> None:
        parts = s.split()
        key = parts[1] if s.startswith("SUM ") else parts[2]
        t = self.current
        if t is None or not t.matrices or t.matrices[-1].key:
            return
        if t.key == "":
            t.key = base_key(key)
            self.named_by_sum.append(f"{t.key} (named by its SUM line (line {lineno}))")
        elif base_key(key) != t.key and len(t.matrices) > 1:
            # The Running line of the next testcase was left out: its matrix starts a test of its own.
            m = t.matrices.pop()
            self.current = Test(key=base_key(key), line=m.line, matrices=[m])
            self.tests.append(self.current)
            self.named_by_sum.append(f"{base_key(key)} (named by its SUM line (line {lineno}))")
        self.current.matrices[-1].key = key

    def read(self) -> PeerRun:
        i = 0
        while i < len(self.lines):
            s, lineno = _strip(self.lines[i]), i + 1
            if self.header(s):
                pass
            elif _DEVICE.match(s):
                m = _DEVICE.match(s)
                self.devices[int(m.group(1))] = Device(m.group(2), m.group(3) or "")
            elif _PROCESS.match(s):
                m = _PROCESS.match(s)
                self.devices[int(m.group(1))] = Device(m.group(4), m.group(5) or "", m.group(2), m.group(3))
            elif s.startswith("Running ") and s.endswith("."):
                self.new_test(s[len("Running ") : -1].strip(), lineno)
            elif _WAIVING.match(s):
                self.new_test(_WAIVING.match(s).group(1), lineno, "Waived")
            elif _FATAL.match(s):
                self.fatal(s, i)
            elif _STATUS.match(s):
                m = _STATUS.match(s)
                t = self.current
                if t is not None and not t.matrices and not t.status:
                    t.status, t.message = m.group(1), m.group(2)
                elif m.group(1) == "Waived" and not m.group(2):
                    self.unnamed_waived += 1  # v0.6 prints a bare 'Waived:' for a test it skips
                else:  # e.g. "ERROR: Testcase x not found!" before any Running line
                    self.new_test(m.group(2) or m.group(1), lineno, m.group(1), m.group(2))
            elif _DESCRIPTION.search(s):
                if self._starts_a_test():
                    self.new_test("", lineno)  # no Running line: named by the SUM line below
                i = self._matrix(i)
                continue
            elif s.startswith(("SUM ", "&&&& PERF ")):
                self.sums += 1
                self.sum_line(s, lineno)
            elif s.startswith("COEFFICIENT_OF_VARIATION "):
                self.cv.append(" ".join(s.split()[1:3]))
            i += 1
        self.done()
        return self.finish()

    def finish(self) -> PeerRun:
        run = self.run
        if not self.tests:
            if self.sums:
                raise refuse(
                    self.path,
                    1,
                    f"nvbandwidth's matrices: the output holds only SUM lines ({self.sums}, as `| grep SUM` "
                    "leaves them): a sum over every pair is no pair's figure",
                )
            raise refuse(self.path, None, "nvbandwidth output: a 'Running <testcase>.' line and its matrix")
        if self.named_by_sum:
            run.context["running_line_missing"] = "; ".join(self.named_by_sum)
        if self.cv:
            run.context["coefficient_of_variation"] = "; ".join(self.cv)
        devices_to_context(run, self.devices)
        return run

    def _starts_a_test(self) -> bool:
        """A matrix title with no Running line before it: the testcase before is finished (its SUM
        line seen), unless it is a bidirectional pair still printing its read1/read2/total."""
        t = self.current
        if t is None or t.status:
            return True
        finished = bool(t.matrices) and bool(t.matrices[-1].key)
        return finished and not (t.key in BIDIR and len(t.matrices) < 3)

    def _matrix(self, i: int) -> int:
        """The description at line i, the header after it, rows until a blank line; -> next index."""
        lines, path = self.lines, self.path
        desc = _strip(lines[i])
        j = i + 1
        while j < len(lines) and not _strip(lines[j]):
            j += 1
        if j >= len(lines):
            raise refuse(path, i + 1, f"the column header of the matrix '{desc}' (the output ends here)")
        columns = _strip(lines[j]).split()
        if not columns:
            raise refuse(path, j + 1, "a matrix header of column labels", lines[j])
        m = Matrix(description=desc, line=i + 1, columns=columns)
        j += 1
        while j < len(lines) and _strip(lines[j]):
            s = _strip(lines[j])
            tokens = s.split()
            if _DESCRIPTION.search(s) or s.startswith(("SUM ", "&&&&")) or _FATAL.match(s):
                break
            if len(tokens) != len(columns) + 1:
                raise refuse(path, j + 1, f"a matrix row: a label and {len(columns)} values (numbers or N/A)", lines[j])
            try:
                for col, tok in zip(columns, tokens[1:]):
                    m.cells[(tokens[0], col)] = cell(tok)
            except ValueError:
                raise refuse(path, j + 1, f"numbers or N/A in the matrix '{desc}'", lines[j]) from None
            j += 1
        if not m.cells:
            raise refuse(
                path,
                j + 1 if j < len(lines) else len(lines),
                f"the rows of the matrix '{desc}' (the output ends here: truncated?)",
            )
        assert self.current is not None
        self.current.matrices.append(m)
        return j


def read_text(path: Path, text: str, buffer_bytes: int | None = None) -> PeerRun:
    reader = _Reader(path, text.splitlines())
    run = reader.read()
    to_cases(run, reader.tests, buffer_bytes, path)
    if reader.unnamed_waived:
        run.context["left_out"] = "; ".join(
            filter(None, [run.context.get("left_out"), f"{reader.unnamed_waived} testcases waived without a name"])
        )
    return run


def read(path: Path, text: str, buffer_bytes: int | None = None) -> PeerRun:
    if text.lstrip().startswith("{"):
        return nvbandwidth_json.read_json(path, text, buffer_bytes)
    return read_text(path, text, buffer_bytes)
