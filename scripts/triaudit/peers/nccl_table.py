"""nccl-tests' text output as tables: the lines of one file split into its tables (header, rows,
footer, the program that names each, a failure that ended it) and the run's facts around them.

What is cleaned on the way (outputs as users paste them): `mpirun --tag-output` prefixes, a missing
leading `#` (pages that strip it), NCCL INFO/WARN lines inside a table, foreign lines printed into a
table (kept aside, named in the context), a paste that starts below the column header (13-field
rows of the standard columns). nccl_tests.py turns the tables into cases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from triaudit.peers import nccl_common as C
from triaudit.peers.model import PeerRun, refuse
from triaudit.peers.nccl_common import TOOL, collective_name, nccl_code_to_version

_TAG = re.compile(r"^\[\d+,\d+\]<(?:stdout|stderr)>:")  # mpirun --tag-output
_RANK = re.compile(
    r"^#?\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s+(.*?)\s*$"
)
_CONFIG = re.compile(r"^#?\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)")
_VERSION = re.compile(r"^#?\s*nccl-tests version\s+(\S+)\s+nccl-headers=(\d+)\s+nccl-library=(\d+)")
_RCCL_VERSION = re.compile(r"^#?\s*rccl-tests: Version\s+(\S+)")
_NCCL_VERSION = re.compile(r"NCCL version\s+(\d+\.\d+\.\d+\S*)")
_ALGO_ENV = re.compile(r"NCCL INFO\s+NCCL_ALGO set by environment to\s+(\S+)")
_PROTO_ENV = re.compile(r"NCCL INFO\s+NCCL_PROTO set by environment to\s+(\S+)")
_NRANKS = re.compile(r"NCCL INFO comm 0x[0-9a-fA-F]+ rank \d+ nranks (\d+)")
_PROGRAM = re.compile(r"(?:^|[\s/:])([a-z][a-z0-9_]*?)_perf(?:_mpi)?(?=[\s:(]|$)")
_FOOTER = re.compile(r"^#?\s*(Out of bounds values|Avg bus bandwidth|Collective test concluded)\s*:\s*(.*?)\s*$")
_FAILURE = re.compile(
    r"(\S+: Test (?:NCCL|CUDA) failure .*|(?:\.\.\s+)?\S+ pid \d+: Test failure .*|Invalid number of GPUs: .*)$"
)
_DEATH = re.compile(r"is aborting the MPI job|\*\*\* Process received signal \*\*\*|exited on signal \d+")
_REDUCING = re.compile(r"Reducing maxBytes to (\d+)")
_OPTION = re.compile(r"(?:^|\s)(-[befig]|--(?:minbytes|maxbytes|stepfactor|stepbytes|ngpus))[ =](\S+)")
_REDOPS = {"sum", "prod", "min", "max", "avg", "none", "mulsum"}
# nccl-tests' columns since root was added (2.x); a paste without the header is read with them.
STANDARD_HEADER = "size count type redop root time algbw busbw #wrong time algbw busbw #wrong".split()


def _size(text: str) -> int | None:
    """nccl-tests' parsesize: a number with K/M/G (powers of 1024)."""
    m = re.fullmatch(r"(\d+)([KkMmGg]?)", text)
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}[m.group(2).lower()]


@dataclass
class Table:
    line: int  # the header's line
    lead: list
    groups: list
    titles: list
    has_ts: bool
    config: dict
    ranks: dict
    program: tuple | None = None  # (collective, how it was named)
    rows: list = field(default_factory=list)  # (line, tokens)
    oob: str | None = None
    avg: str | None = None
    concluded: bool = False
    end: str = ""  # footer, failure, next (another run begins), eof
    failure: tuple | None = None  # (line, text, size of the row it cut or None)
    after: tuple | None = None  # a failure printed after the summary: (line, text)
    foreign: list = field(default_factory=list)
    headerless: bool = False


def _parse_header(tokens: list[str], path: Path, lineno: int, line: str):
    """-> (leading column names, [group column names, ...], has_timestamp)."""
    try:
        first = next(i for i, t in enumerate(tokens) if t in ("time", "cputime"))
    except StopIteration:
        raise refuse(path, lineno, "a table header with a 'time' column", line) from None
    lead, rest = tokens[:first], tokens[first:]
    ts = bool(rest) and rest[-1] == "timestamp"
    if ts:
        rest = rest[:-1]
    starts = [i for i, t in enumerate(rest) if t in ("time", "cputime")] + [len(rest)]
    groups = [rest[a:b] for a, b in zip(starts, starts[1:])]
    for g in groups:
        if "algbw" not in g or "busbw" not in g:
            raise refuse(path, lineno, "time, algbw and busbw columns in each out-of-place/in-place group", line)
    if "size" not in lead or "type" not in lead:
        raise refuse(path, lineno, "size and type columns in the table header", line)
    if len(groups) > 2:
        raise refuse(path, lineno, "at most an out-of-place and an in-place group of columns", line)
    return lead, groups, ts


def _is_header(s: str) -> bool:
    tokens = s.lstrip("#").split()
    return "size" in tokens and "busbw" in tokens and ("time" in tokens or "cputime" in tokens) and "NCCL" not in s


def _headerless_row(tokens: list[str]) -> bool:
    """A row of the standard 13 columns (a paste that starts below the header)."""
    if len(tokens) != len(STANDARD_HEADER) or not (tokens[0].isdigit() and tokens[1].isdigit()):
        return False
    known_type = tokens[2] in C.TYPES or tokens[2] in C.TYPE_BYTES
    return known_type and tokens[3] in _REDOPS and tokens[4].lstrip("-").isdigit()


class Reader:
    def __init__(self, path: Path, text: str):
        self.path = path
        self.raw = text.splitlines()
        self.prefixed = sum(1 for x in self.raw if _TAG.match(x))
        self.lines = [_TAG.sub("", x) for x in self.raw]
        self.run = PeerRun(tool=TOOL, source=path, statistic="")
        self.config: dict = {"iters": None, "warmup": None, "agg": 1, "graph": 0, "validation": None}
        self.ranks_all: dict[int, C.Rank] = {}
        self.ranks: dict[int, C.Rank] = {}
        self.pending: tuple | None = None  # the program named before the next table
        self.tables: list[Table] = []
        self.failure: tuple | None = None  # the first failure outside a table: (line, text)
        self.death: tuple | None = None
        self.algo_env: str | None = None
        self.proto_env: str | None = None
        self.nranks_info: int | None = None
        self.hash_stripped = False

    # --- the lines outside a table ---

    def nccl_line(self, s: str) -> None:
        m = _NCCL_VERSION.search(s)
        if m and "nccl_version" not in self.run.context:
            self.run.context["nccl_version"] = m.group(1)
        m = _ALGO_ENV.search(s)
        if m:
            self.algo_env = m.group(1)
        m = _PROTO_ENV.search(s)
        if m:
            self.proto_env = m.group(1)
        m = _NRANKS.search(s)
        if m:
            self.nranks_info = int(m.group(1))

    def config_line(self, s: str) -> None:
        self.run.context["config"] = s.lstrip("# ").strip()
        self.config = dict(self.config)
        m = _CONFIG.match(s)
        self.config["maxbytes"] = int(m.group(4))
        for key, pat in (
            ("warmup", r"warmup iters:\s*(\d+)"),
            ("iters", r"(?<!warmup )iters:\s*(\d+)"),
            ("agg", r"agg iters:\s*(\d+)"),
            ("validation", r"validation:\s*(\d+)"),
            ("graph", r"graph:\s*(\d+)"),
            ("factor", r"step:\s*(\d+)\(factor\)"),
            ("step", r"step:\s*(\d+)\(bytes\)"),
        ):
            mm = re.search(pat, s)
            if mm:
                self.config[key] = int(mm.group(1))
        self.ranks = {}  # a new run lists its own ranks
        if not s.startswith("#"):
            self.hash_stripped = True

    def program_line(self, s: str, lineno: int) -> None:
        m = _PROGRAM.search(s)
        if not m:
            return
        name = collective_name(m.group(1))
        how = f"named by '{s[:100]}' (line {lineno})"
        if _FOOTER.match(s):  # "# Collective test concluded: X" names the table above it
            if self.tables and self.tables[-1].program is None:
                self.tables[-1].program = (name, how)
            return
        if s.lstrip("# ").startswith("Collective test starting"):
            self.run.context["program"] = s.split(":", 1)[1].strip()
        self.pending = (name, how)
        options = dict(_OPTION.findall(s))  # a typed command line: -e/-g where no nThread line follows
        for flag, key in (("-e", "maxbytes"), ("--maxbytes", "maxbytes"), ("-f", "factor"), ("-i", "step")):
            if flag in options and _size(options[flag]) is not None:
                self.config = dict(self.config, **{key: _size(options[flag])})

    def failure_line(self, s: str, lineno: int) -> bool:
        m = _FAILURE.search(s)
        if m:
            last = self.tables[-1] if self.tables else None
            if last is not None and last.end == "footer" and last.after is None:
                last.after = (lineno, s)
            elif self.failure is None:
                self.failure = (lineno, m.group(1).strip())
            return True
        if _DEATH.search(s) and self.death is None:
            self.death = (lineno, s)
        return False

    def read(self) -> None:
        i = 0
        while i < len(self.lines):
            s, lineno = self.lines[i].strip(), i + 1
            if "NCCL INFO" in s or "NCCL WARN" in s:
                self.nccl_line(s)
                i += 1
                continue
            m = _VERSION.match(s)
            if m:
                self.run.version = m.group(1)
                self.run.context["nccl_headers_version"] = nccl_code_to_version(int(m.group(2)))
                self.run.context["nccl_version"] = nccl_code_to_version(int(m.group(3)))
            m = _RCCL_VERSION.match(s)
            if m:
                self.run.context["rccl_tests_version"] = m.group(1)
                self.run.context["variant"] = "rccl-tests (AMD's fork of nccl-tests)"
            m = _NCCL_VERSION.search(s)
            if m and "nccl_version" not in self.run.context:
                self.run.context["nccl_version"] = m.group(1)
            if _CONFIG.match(s):
                self.config_line(s)
            if s.lstrip("# ").startswith("Blocking Enabled"):
                self.run.context["blocking"] = s.lstrip("# ").strip()
            m = _RANK.match(s)
            if m:
                r = C.Rank(m.group(2), m.group(4), m.group(5))
                self.ranks[int(m.group(1))] = self.ranks_all[int(m.group(1))] = r
            m = _REDUCING.search(s)
            if m:
                self.config = dict(self.config, maxbytes=int(m.group(1)))
            if self.failure_line(s, lineno):
                i += 1
                continue
            self.program_line(s, lineno)
            if _is_header(s):
                tokens = s.lstrip("#").split()
                i = self.table(i + 1, tokens, lineno, self.lines[i])
                continue
            if s and _headerless_row(s.split()) and not self.tables:
                i = self.table(i, STANDARD_HEADER, lineno, self.lines[i], headerless=True)
                continue
            i += 1

    # --- a table ---

    def table(self, i: int, tokens: list[str], lineno: int, line: str, headerless: bool = False) -> int:
        lead, groups, has_ts = _parse_header(tokens, self.path, lineno, line)
        titles = ["out-of-place", "in-place"][: len(groups)]
        t = Table(lineno, lead, groups, titles, has_ts, dict(self.config), dict(self.ranks), self.pending)
        t.headerless = headerless
        self.pending = None
        self.tables.append(t)
        if not headerless and not line.strip().startswith("#"):
            self.hash_stripped = True
        while i < len(self.lines):
            s, lineno = self.lines[i].strip(), i + 1
            if not s or "NCCL INFO" in s or "NCCL WARN" in s:
                if s:
                    self.nccl_line(s)
                i += 1
                continue
            m = _FAILURE.search(s)
            if m:
                before = s[: m.start()].split()
                cut = int(before[0]) if before and before[0].isdigit() else None
                t.failure, t.end = (lineno, m.group(1).strip(), cut), "failure"
                return i + 1
            f = _FOOTER.match(s)
            if f:
                kind, value = f.group(1), f.group(2)
                if kind == "Out of bounds values":
                    t.oob = value
                elif kind == "Avg bus bandwidth":
                    t.avg = value.split()[0] if value else value
                else:
                    t.concluded = True
                if kind != "Out of bounds values":
                    t.end = "footer"
                    if kind == "Collective test concluded":
                        self.program_line(s, lineno)
                    return i + 1
                i += 1
                continue
            if _is_header(s) or _CONFIG.match(s) or _VERSION.match(s) or "Collective test starting" in s:
                t.end = "next"
                return i
            tokens = s.split()
            if tokens[0].isdigit():
                t.rows.append((lineno, tokens))
            elif not s.startswith(("#", "(")) and "out-of-place" not in s:
                t.foreign.append((lineno, s))  # a line someone else printed into the table
            i += 1
        t.end = "footer" if t.oob is not None else "eof"
        return i


def reaches_max(t: Table) -> bool:
    """A table whose footer was left out is complete where its last row is the largest size the run
    was given (nccl-tests' loop: size *= factor, or += step, while size <= maxBytes)."""
    maxb = t.config.get("maxbytes")
    if not t.rows or not maxb:
        return False
    last = int(t.rows[-1][1][0])
    factor, step = t.config.get("factor") or 0, t.config.get("step") or 0
    nxt = last * factor if factor > 1 else last + step if step else None
    return last >= maxb or (nxt is not None and nxt > maxb)
