"""nccl-tests (`all_reduce_perf` and the other `*_perf`, rccl-tests too): the stdout tables, and the
`-J file.json` output (nccl_json.py).

A table is read by its header, not by column positions: nccl-tests has printed `root`/no `root`,
`#wrong`/`error`, `time`/`cputime`, per-iteration columns (`i_min i_max i_p99 i_cv%`), `#bitdiff`
and a trailing timestamp, depending on version and flags (src/util.cu writeResultHeader). A file may
hold several tables (a script running each `*_perf` in turn): each is named from its own program
line (`# Collective test starting:`, a `Running: ... all_gather_perf` or command line) or, where
there is none, from its header's shape (nccl_shape.py), and judged on its own.

Outputs as users paste them: `mpirun --tag-output` prefixes, pages that stripped every leading
`#`, NCCL INFO lines and foreign lines inside a table (skipped; foreign ones said), a table whose
footer was left out (complete where its last row reaches maxBytes, else refused as truncated), a
tail without the column header (13-field rows of the standard columns). Rows with `#wrong` != 0
(or an old `error` column above nccl-tests' own tolerance) become error entries, never numbers; so
does a table nccl-tests marked FAILED. A run that failed before any row (`Test NCCL failure`, ...)
is refused naming the failure; one that failed after some keeps them and names it. In-place figures
on one rank are left out: NCCL moves nothing there.
"""

from __future__ import annotations

import math
from pathlib import Path

from triaudit.peers import nccl_common as C
from triaudit.peers import nccl_json, statistics
from triaudit.peers import nccl_table as T
from triaudit.peers.model import PeerCase, PeerRun, refuse
from triaudit.peers.nccl_common import collective_name, nccl_code_to_version  # noqa: F401 (the API)
from triaudit.peers.nccl_shape import Facts, name_from_shape


def _parse_row(t: T.Table, lineno: int, tokens: list[str], path: Path):
    """-> (leading values, [(title, names, values), ...]) of one row."""
    widths = [len(g) for g in t.groups]
    full = len(t.lead) + sum(widths) + (2 if t.has_ts else 0)
    body = tokens[:-2] if t.has_ts else tokens
    present = list(zip(t.titles, t.groups))
    lead = list(t.lead)
    if "redop" in lead and len(body) == len(lead) - 1 + sum(widths):
        k = lead.index("redop")
        if k < len(body) and not body[k].isalpha():
            body = body[:k] + [""] + body[k:]  # old alltoall left its redop column blank
    line = " ".join(tokens)
    if len(body) == len(lead) + sum(widths):
        pass
    elif len(t.groups) == 2 and len(body) == len(lead) + widths[1]:
        present = present[1:]  # no out-of-place part (trace replay prints blanks)
    else:
        raise refuse(
            path, lineno, f"{full} columns ({' '.join(lead)} then {' / '.join(' '.join(g) for g in t.groups)})", line
        )
    row = dict(zip(lead, body[: len(lead)]))
    try:
        int(row["size"]), int(row.get("count", "1"))
        if "root" in row:
            int(row["root"])
    except ValueError:
        raise refuse(path, lineno, "integer size, count and root", line) from None
    out, pos = [], len(lead)
    for title, names in present:
        out.append((title, names, body[pos : pos + len(names)]))
        pos += len(names)
    return row, out


def _group_counters(names: list[str], values: list[str]) -> tuple[dict, float | None]:
    """One out-of-place/in-place group: counters and time per collective (s)."""
    counters: dict[str, float] = {}
    time_s = None
    for name, raw in zip(names, values):
        if name in ("#wrong", "error"):
            continue
        v = float(raw)
        if name == "time":
            time_s = v * 1e-6
        elif name == "cputime":
            counters["cpu_time_s"] = v * 1e-6
        elif name in ("algbw", "busbw"):
            counters[name] = v * 1e9
        elif name == "#bitdiff":
            counters["bitdiff"] = v
        elif name in ("i_min", "i_max", "i_p99"):
            counters[f"iter_{name[2:]}_s"] = v * 1e-6
        elif name == "i_cv%":
            counters["iter_cv_pct"] = v
    return counters, time_s


class _Cases:
    """One table's rows as cases."""

    def __init__(self, reader: T.Reader, t: T.Table):
        self.r, self.t, self.path = reader, t, reader.path
        self.rows = [(ln, *_parse_row(t, ln, tok, self.path)) for ln, tok in t.rows]
        self.nranks = C.rank_count(t.ranks) or reader.nranks_info
        self.collective, self.how = t.program or name_from_shape(self._facts())
        self.cases: list[PeerCase] = []
        self.in_place_algbw: list[float] = []
        self.zero_rows = 0

    def text(self, lineno: int) -> str:
        return self.r.lines[lineno - 1]

    def _facts(self) -> Facts:
        rows = [(row, groups) for _, row, groups in self.rows if int(row.get("count", "1")) > 0] or [
            (row, groups) for _, row, groups in self.rows
        ]
        row, _ = rows[0]
        ratio = None
        for _, groups in reversed(rows):
            names, values = groups[0][1], groups[0][2]
            bw = dict(zip(names, values))
            try:
                a, b = float(bw["algbw"]), float(bw["busbw"])
            except (KeyError, ValueError):
                continue
            if a > 0.5:
                ratio = b / a
                break
        t = self.t
        old = "error" in t.groups[0] or "redop" not in t.lead or "root" not in t.lead
        return Facts(
            "redop" in t.lead,
            "root" in t.lead,
            old,
            row.get("redop", "none" if "redop" not in t.lead else ""),
            int(row["root"]) if "root" in row else None,
            int(row["size"]),
            int(row.get("count", "0")),
            row["type"],
            ratio,
            self.nranks,
        )

    def build(self) -> None:
        config = self.t.config
        algo = C.algo_arg(self.r.algo_env)
        derived: list[dict] = []
        for lineno, row, groups in self.rows:
            size, count = int(row["size"]), int(row.get("count", "1"))
            root = int(row["root"]) if "root" in row else None
            if count == 0:
                self.zero_rows += 1
                continue
            for title, names, values in groups:
                if title == "in-place" and self.nranks == 1:
                    if "algbw" in names:
                        self.in_place_algbw.append(float(values[names.index("algbw")]) * 1e9)
                    continue
                try:
                    counters, time_s = _group_counters(names, values)
                    C.algbw_from_time(counters, size, time_s, self.r.run, derived)
                    err = ""
                    for kind in ("#wrong", "error"):
                        if kind in names:
                            err = C.wrong_to_error(kind, values[names.index(kind)], row["type"])
                except ValueError:
                    raise refuse(
                        self.path, lineno, f"numbers in the {title} columns ({' '.join(names)})", self.text(lineno)
                    ) from None
                if not err and not all(math.isfinite(v) for v in counters.values()):
                    err = "nccl-tests printed a non-finite bandwidth or time"
                if not err and time_s is not None and not math.isfinite(time_s):
                    err = "nccl-tests printed a non-finite time"
                if self.nranks and not err:
                    counters["ranks"] = float(self.nranks)
                name = C.case_name(
                    self.collective,
                    C.placement(title, config["graph"]),
                    row["type"],
                    row.get("redop", ""),
                    root,
                    algo,
                    size,
                )
                self.cases.append(
                    PeerCase(
                        name=name,
                        counters={} if err else counters,
                        time_s=None if err else time_s,
                        error=err,
                        iterations=config["iters"],
                    )
                )
        C.busbw_of_rounded_rows(derived, self.cases)
        self._verdicts()

    def _verdicts(self) -> None:
        """What nccl-tests itself said about the table, where no row shows it."""
        t, run_entry = self.t, f"nccl_tests_run/{self.collective}"
        bad = any(c.error for c in self.cases)
        if t.failure:
            line, text, _ = t.failure
            last = self.rows[-1][1]["size"] if self.rows else None
            self.cases.append(
                PeerCase(
                    name=run_entry,
                    error=f"nccl-tests failed (line {line}): {text}: the sizes after {last} B were not measured",
                )
            )
        elif t.oob and "FAILED" in t.oob and not bad:
            self.cases.append(
                PeerCase(
                    name=run_entry,
                    error=f"nccl-tests reported 'Out of bounds values : {t.oob}' for this table, but no row "
                    "shows a wrong count: its results are not verified",
                )
            )
        elif t.after and not bad:
            self.cases.append(
                PeerCase(name=run_entry, error=f"nccl-tests failed after the table (line {t.after[0]}): {t.after[1]}")
            )


def read_text(path: Path, text: str) -> PeerRun:
    r = T.Reader(path, text)
    r.read()
    run = r.run
    with_rows = [t for t in r.tables if t.rows]
    if not with_rows:
        _refuse_without_rows(r)
    for t in r.tables:
        if t.end in ("eof", "next") and not T.reaches_max(t):
            last = t.rows[-1][0] if t.rows else t.line
            raise refuse(
                path,
                last,
                "the table's '# Avg bus bandwidth' footer (the output ends inside the table: truncated, or the run died)",
                r.lines[last - 1],
            )
    built = [_Cases(r, t) for t in with_rows]
    for b in built:
        b.build()
        run.cases += b.cases
    _context(r, built)
    return run


def _refuse_without_rows(r: T.Reader) -> None:
    failed = next((t.failure for t in r.tables if t.failure), None)
    if failed:
        line, text, cut = failed
        extra = f"; the row of {cut} B was cut by it" if cut else ""
        raise refuse(
            r.path, line, f"an nccl-tests table with rows; the run failed before printing one: '{text}'{extra}"
        )
    for what in (r.failure, r.death):
        if what:
            raise refuse(r.path, what[0], f"an nccl-tests table; the run failed before printing one: '{what[1]}'")
    if r.tables:
        t = r.tables[0]
        raise refuse(r.path, t.line, "rows under the table header (the output ends: truncated?)")
    raise refuse(r.path, None, "an nccl-tests table (a '#  size  count  type ... busbw' header)")


def _context(r: T.Reader, built: list[_Cases]) -> None:
    run, ctx = r.run, r.run.context
    config = built[-1].t.config
    run.statistic = statistics.nccl_tests(config["iters"], config["agg"], config["warmup"], config["graph"])
    if config["iters"] is None:
        run.not_read.append("the iteration count (no '# nThread ... iters:' line)")
    if len(built) == 1:
        b = built[0]
        ctx["collective"] = f"{b.collective}: {b.how}"
        if b.t.avg is not None:
            ctx["avg_bus_bandwidth_gbps"] = b.t.avg
        if b.t.oob is not None:
            ctx["out_of_bounds"] = b.t.oob
    else:
        ctx["collective"] = "; ".join(f"{b.collective} (line {b.t.line}): {b.how}" for b in built)
        ctx["tables"] = "; ".join(
            f"{b.collective} (line {b.t.line}): Out of bounds values : {b.t.oob or '(not printed)'}, "
            f"Avg bus bandwidth {b.t.avg or '(not printed)'}"
            for b in built
        )
    missing = [b.t for b in built if not b.t.oob and not b.t.avg and not b.t.concluded and not b.t.failure]
    if missing:
        ctx["footer_missing"] = "; ".join(
            f"the table at line {t.line} has no footer (left out where it was published); it reaches maxBytes "
            f"({t.config['maxbytes']}), so no row is missing"
            for t in missing
        )
    for b in built:
        if b.t.headerless:
            ctx["header_missing"] = (
                f"the column header is not in the output (it starts mid-table at line {b.t.line}): every row "
                f"has {len(T.STANDARD_HEADER)} fields, read as nccl-tests' columns {' '.join(T.STANDARD_HEADER)}"
            )
        if b.t.after:
            ctx["failure_after_table"] = (
                f"line {b.t.after[0]}: '{b.t.after[1]}' after the table's summary (nccl-tests exits with an "
                "error when a check fails)"
            )
    foreign = [f"line {ln}: '{s[:80]}'" for b in built for ln, s in b.t.foreign]
    if foreign:
        ctx["foreign_lines"] = "; ".join(foreign[:5]) + (f"; and {len(foreign) - 5} more" if len(foreign) > 5 else "")
    if r.prefixed:
        ctx["line_prefixes"] = (
            f"mpirun --tag-output prefixes ([1,0]<stdout>: and the like) removed from {r.prefixed} lines"
        )
    if r.hash_stripped:
        ctx["hash_stripped"] = (
            "the leading '#' of nccl-tests' comment lines is missing (the page it was published on removed it): "
            "read without it"
        )
    C.single_rank_in_place(run, [a for b in built for a in b.in_place_algbw])
    zeros = sum(b.zero_rows for b in built)
    if zeros:
        ctx["rows_left_out"] = f"{zeros} row(s) of 0 elements (nothing moved)"
    seen: dict[str, int] = {}
    for c in run.cases:
        seen[c.name] = seen.get(c.name, 0) + 1
    dups = [n for n, k in seen.items() if k > 1]
    if dups:
        ctx["repeated_cases"] = f"{len(dups)} case(s) appear more than once: kept as repetitions"
    C.ranks_to_context(run, r.ranks_all)
    if not r.ranks_all and r.nranks_info:
        ctx["ranks"] = f"{r.nranks_info} (from NCCL's INFO lines)"
    C.versions_to_context(run, r.algo_env, r.proto_env, config["validation"])


def read(path: Path, text: str) -> PeerRun:
    if text.lstrip().startswith("{"):
        return nccl_json.read_json(path, text)
    return read_text(path, text)
