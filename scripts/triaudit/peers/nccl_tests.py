"""nccl-tests (`all_reduce_perf` and the other `*_perf`): the stdout table and the `-J file.json` output.

The table is read by its header, not by column positions: nccl-tests has printed `root`/no `root`,
`#wrong`/`error`, `time`/`cputime`, per-iteration columns (`i_min i_max i_p99 i_cv%`), `#bitdiff`
and a trailing timestamp, depending on version and flags (src/util.cu writeResultHeader). NCCL INFO
lines inside the table are skipped; a table without its `# Avg bus bandwidth` footer is truncated
and refused. Rows with `#wrong` != 0 (or an old `error` column above nccl-tests' own tolerance)
become error entries, never numbers.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from triaudit.peers import statistics
from triaudit.peers.model import PeerCase, PeerRun, gpu_name_of, refuse

TOOL = "nccl-tests"

# nccl-tests type names -> triaudit's (others keep their own name).
TYPES = {
    "float": "fp32",
    "half": "fp16",
    "bfloat16": "bf16",
    "double": "fp64",
    "f8e4m3": "fp8e4m3",
    "f8e5m2": "fp8e5m2",
    "float32": "fp32",
    "float16": "fp16",
    "float64": "fp64",
}
# Old nccl-tests printed the largest deviation ("error"), failing a row above these (deltaMaxValue).
OLD_ERROR_TOLERANCE = {"fp16": 5e-2, "bf16": 1e-2, "fp32": 1e-5, "fp64": 1e-12}

_RANK = re.compile(
    r"^#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s+(.*?)\s*$"
)
_CONFIG = re.compile(r"^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)")
_VERSION = re.compile(r"^#\s*nccl-tests version\s+(\S+)\s+nccl-headers=(\d+)\s+nccl-library=(\d+)")
_NCCL_VERSION = re.compile(r"NCCL version\s+(\d+\.\d+\.\d+\S*)")
_ALGO_ENV = re.compile(r"NCCL INFO\s+NCCL_ALGO set by environment to\s+(\S+)")
_PROTO_ENV = re.compile(r"NCCL INFO\s+NCCL_PROTO set by environment to\s+(\S+)")


def nccl_code_to_version(code: int) -> str:
    """ncclGetVersion's integer: major*10000 + minor*100 + patch from 2.9, major*1000 + ... before."""
    if code >= 20900:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def collective_name(program: str) -> str:
    """all_reduce_perf -> allreduce (triaudit's corner name for it); others by the same rule."""
    stem = Path(program.strip()).name
    stem = re.sub(r"_perf(_mpi)?$", "", stem)
    return stem.replace("_", "")


def _algo_arg(value: str | None) -> str:
    if not value:
        return "auto"
    return re.sub(r"[^a-z0-9^,_]+", "_", value.strip().lower()) or "auto"


def case_name(collective: str, placement: str, ntype: str, redop: str, root: int | None, algo: str, size: int) -> str:
    typ = TYPES.get(ntype, ntype)
    parts = [collective, placement, typ]
    if redop and redop != "sum":
        parts.append(f"redop:{redop}")
    if root is not None and root >= 0:
        parts.append(f"root:{root}")
    parts += [f"algo:{algo}", f"bytes:{size}"]
    return "/".join(parts)


def _placement(group: str, graph: int) -> str:
    base = "out_of_place" if group == "out-of-place" else "in_place"
    if graph:
        return "graph" if base == "out_of_place" else "graph_in_place"
    return base


def _number(token: str) -> float:
    return float(token)


def _wrong_to_error(kind: str, value: str, typ: str) -> str:
    """The error message a #wrong/error cell makes, or "" when the row is right (or unchecked)."""
    if value.upper() == "N/A":
        return ""
    v = float(value)
    if kind == "#wrong":
        return "" if v == 0 else f"nccl-tests found {v:g} wrong elements (#wrong): not a number"
    tol = OLD_ERROR_TOLERANCE.get(TYPES.get(typ, typ), 0.0)
    return "" if v <= tol else f"nccl-tests' largest deviation {v:g} exceeds its tolerance {tol:g} (error column)"


def _group_counters(names: list[str], values: list[str]) -> tuple[dict, float | None, str]:
    """One out-of-place/in-place group: counters, time per collective (s) and the error, if any."""
    counters: dict[str, float] = {}
    time_s = None
    for name, raw in zip(names, values):
        if name in ("#wrong", "error"):
            continue
        v = _number(raw)
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
    return counters, time_s, ""


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
    return lead, groups, ts


def read_text(path: Path, text: str) -> PeerRun:
    run = PeerRun(tool=TOOL, source=path, statistic="")
    lines = text.splitlines()
    ranks: dict[int, tuple[str, str, str]] = {}
    config = {"iters": None, "warmup": None, "agg": 1, "graph": 0, "validation": None}
    collective = None
    algo_env = proto_env = None
    tables = 0
    seen: dict[str, int] = {}
    zero_rows = 0
    i = 0
    group_titles: list[str] = []
    while i < len(lines):
        line = lines[i]
        lineno = i + 1
        s = line.strip()
        m = _VERSION.match(s)
        if m:
            run.version = m.group(1)
            run.context["nccl_headers_version"] = nccl_code_to_version(int(m.group(2)))
            run.context["nccl_version"] = nccl_code_to_version(int(m.group(3)))
        if s.startswith("# Collective test starting:"):
            collective = collective_name(s.split(":", 1)[1])
            run.context["program"] = s.split(":", 1)[1].strip()
        m = _CONFIG.match(s)
        if m:
            run.context["config"] = s.lstrip("# ").strip()
            for key, pat in (
                ("warmup", r"warmup iters:\s*(\d+)"),
                ("iters", r"(?<!warmup )iters:\s*(\d+)"),
                ("agg", r"agg iters:\s*(\d+)"),
                ("validation", r"validation:\s*(\d+)"),
                ("graph", r"graph:\s*(\d+)"),
            ):
                mm = re.search(pat, s)
                if mm:
                    config[key] = int(mm.group(1))
        if s.startswith("# Blocking Enabled"):
            run.context["blocking"] = s.lstrip("# ").strip()
        m = _RANK.match(s)
        if m:
            ranks[int(m.group(1))] = (m.group(2), m.group(4), m.group(5))
        m = _NCCL_VERSION.search(s)
        if m and "nccl_version" not in run.context:
            run.context["nccl_version"] = m.group(1)
        m = _ALGO_ENV.search(s)
        if m:
            algo_env = m.group(1)
        m = _PROTO_ENV.search(s)
        if m:
            proto_env = m.group(1)
        if s.startswith("#") and ("out-of-place" in s or "in-place" in s):
            group_titles = re.findall(r"out-of-place|in-place", s)
        tokens = s.lstrip("#").split()
        if s.startswith("#") and "size" in tokens and "busbw" in tokens:
            lead, groups, has_ts = _parse_header(tokens, path, lineno, line)
            titles = group_titles if len(group_titles) == len(groups) else ["out-of-place", "in-place"][: len(groups)]
            if len(groups) > 2:
                raise refuse(path, lineno, "at most an out-of-place and an in-place group of columns", line)
            i, zeros = _read_rows(
                run, lines, i + 1, path, lead, groups, titles, has_ts, collective, config, _algo_arg(algo_env), seen
            )
            zero_rows += zeros
            tables += 1
            group_titles = []
            continue
        i += 1
    if tables == 0:
        raise refuse(path, None, "an nccl-tests table (a '#  size  count  type ... busbw' header)")
    run.statistic = statistics.nccl_tests(config["iters"], config["agg"], config["warmup"], config["graph"])
    if config["iters"] is None:
        run.not_read.append("the iteration count (no '# nThread ... iters:' line)")
    _finish(run, ranks, collective, algo_env, proto_env, config, zero_rows, seen)
    return run


def _read_rows(run, lines, i, path, lead, groups, titles, has_ts, collective, config, algo, seen):
    """Rows from line i until the footer; -> (index after the footer, rows left out for 0 elements)."""
    widths = [len(g) for g in groups]
    full = len(lead) + sum(widths) + (2 if has_ts else 0)
    zeros = 0
    derived: list[dict] = []  # rows whose algbw was printed as 0.00
    while i < len(lines):
        line = lines[i]
        lineno = i + 1
        s = line.strip()
        if not s or "NCCL INFO" in s or "NCCL WARN" in s:
            i += 1
            continue
        if s.startswith("#"):
            if "Avg bus bandwidth" in s:
                m = re.search(r":\s*([-+0-9.eEnaifNAIF]+)", s)
                if m:
                    run.context.setdefault("avg_bus_bandwidth_gbps", m.group(1))
                _busbw_of_rounded_rows(derived, run.cases)
                return i + 1, zeros
            if "Out of bounds values" in s:
                run.context["out_of_bounds"] = s.split(":", 1)[1].strip()
            # '#  (B)  (elements) ...' unit line and other comments inside the table
            i += 1
            continue
        tokens = s.split()
        if not tokens[0].isdigit():
            raise refuse(
                path,
                lineno,
                f"a row of the table ({full} columns starting with the size) or its '# Avg bus bandwidth' footer",
                line,
            )
        body = tokens[:-2] if has_ts else tokens
        present = list(zip(titles, groups))
        if len(body) == len(lead) + sum(widths):
            pass
        elif len(groups) == 2 and len(body) == len(lead) + widths[1]:
            present = present[1:]  # no out-of-place part (trace replay prints blanks)
        else:
            raise refuse(
                path, lineno, f"{full} columns ({' '.join(lead)} then {' / '.join(' '.join(g) for g in groups)})", line
            )
        row = dict(zip(lead, body[: len(lead)]))
        try:
            size = int(row["size"])
            count = int(row.get("count", "1"))
            root = int(row["root"]) if "root" in row else None
        except ValueError:
            raise refuse(path, lineno, "integer size, count and root", line) from None
        if count == 0:
            zeros += 1
            i += 1
            continue
        pos = len(lead)
        for title, names in present:
            values = body[pos : pos + len(names)]
            pos += len(names)
            try:
                counters, time_s, _ = _group_counters(names, values)
                _algbw_from_time(counters, size, time_s, run, derived)
                err = ""
                for kind in ("#wrong", "error"):
                    if kind in names:
                        err = _wrong_to_error(kind, values[names.index(kind)], row["type"])
            except ValueError:
                raise refuse(path, lineno, f"numbers in the {title} columns ({' '.join(names)})", line) from None
            name = case_name(
                collective or "allreduce",
                _placement(title, config["graph"]),
                row["type"],
                row.get("redop", ""),
                root,
                algo,
                size,
            )
            if not err and not all(math.isfinite(v) for v in counters.values()):
                err = "nccl-tests printed a non-finite bandwidth or time"
            if not err and time_s is not None and not math.isfinite(time_s):
                err = "nccl-tests printed a non-finite time"
            case = PeerCase(
                name=name,
                counters={} if err else counters,
                time_s=None if err else time_s,
                error=err,
                iterations=config["iters"],
            )
            seen[name] = seen.get(name, 0) + 1
            run.cases.append(case)
        i += 1
    raise refuse(
        path,
        len(lines),
        "the table's '# Avg bus bandwidth' footer (the output ends inside the table: truncated, or the run died)",
        lines[-1] if lines else "",
    )


def _algbw_from_time(counters: dict, size: int, time_s: float | None, run, derived: list[dict]) -> None:
    """An algbw printed as 0.00 (two decimals in GB/s) becomes nccl-tests' own algbw, size / time,
    from the printed time: a zero is no link's bandwidth. Counted in the context."""
    if counters.get("algbw") != 0 or time_s is None or not time_s > 0:
        return
    counters["algbw"] = size / time_s
    derived.append(counters)
    run.context["algbw_from_time_rows"] = str(int(run.context.get("algbw_from_time_rows", "0")) + 1)
    run.context["algbw_from_time"] = (
        "rows whose algbw was written as 0 (below 0.005 GB/s): algbw = size / time there, as nccl-tests computes "
        "it, and busbw = algbw x the table's own busbw / algbw"
    )


def _busbw_of_rounded_rows(derived: list[dict], cases: list) -> None:
    """busbw of the rows whose algbw and busbw were printed as 0.00: algbw times the table's own
    busbw / algbw (a constant of the collective and the rank count in nccl-tests), read off its
    largest row where both are printed."""
    if not derived:
        return
    whole = [c.counters for c in cases if c.counters.get("algbw", 0) > 0 and c.counters.get("busbw", 0) > 0]
    whole = [c for c in whole if not any(c is d for d in derived)]
    if not whole:
        return
    ratio = whole[-1]["busbw"] / whole[-1]["algbw"]
    for counters in derived:
        if counters.get("busbw") == 0:
            counters["busbw"] = counters["algbw"] * ratio


def _finish(run, ranks, collective, algo_env, proto_env, config, zero_rows, seen):
    if ranks:
        run.context["ranks"] = str(len(ranks))
        hosts = sorted({h for h, _, _ in ranks.values()})
        run.context["hosts"] = ", ".join(hosts)
        run.context["bus_ids"] = ", ".join(f"rank {r}: {b}" for r, (_, b, _) in sorted(ranks.items()))
        run.gpu_name = gpu_name_of([n for _, _, n in ranks.values()], run.not_read, "ranks")
        for c in run.cases:
            if not c.error:
                c.counters["ranks"] = float(len(ranks))
    else:
        run.not_read.append("the ranks and their GPUs (no '#  Rank ...' lines)")
        run.gpu_name = None
    if collective is None:
        run.context["collective"] = "all_reduce_perf (assumed: the output does not name its program)"
    if algo_env:
        run.context["nccl_algo"] = f"{algo_env} (NCCL_ALGO set by environment, from NCCL's INFO output)"
    else:
        run.context["nccl_algo"] = "NCCL's own choice (algo:auto): no NCCL_ALGO in the output; assumed unset"
    if proto_env:
        run.context["nccl_proto"] = f"{proto_env} (NCCL_PROTO set by environment)"
    if "nccl_version" not in run.context:
        run.not_read.append("the NCCL version")
    if run.version is None:
        run.not_read.append("the nccl-tests version (older nccl-tests do not print it)")
    run.not_read.append("-a (not printed): the mean over ranks, nccl-tests' default, assumed")
    if config["validation"] == 0:
        run.context["validation"] = "off (-c 0): results were not checked"
    if zero_rows:
        run.context["rows_left_out"] = f"{zero_rows} row(s) of 0 elements (nothing moved)"
    dups = {n: k for n, k in seen.items() if k > 1}
    if dups:
        run.context["repeated_cases"] = f"{len(dups)} case(s) appear more than once: kept as repetitions"


# --- JSON (-J / --output_file file.json, src/util.cu) --------------------------------------------------


def read_json(path: Path, text: str) -> PeerRun:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise refuse(path, exc.lineno, f"nccl-tests JSON ({exc.msg} at column {exc.colno}; truncated?)") from None
    if not isinstance(data, dict) or "results" not in data:
        raise refuse(path, 1, "an nccl-tests JSON object with a 'results' list")
    run = PeerRun(tool=TOOL, source=path, statistic="")
    run.context["json_file_version"] = str(data.get("version", "unknown"))
    if isinstance(data.get("nccl_version"), int):
        run.context["nccl_version"] = nccl_code_to_version(data["nccl_version"])
    if data.get("start_time"):
        run.context["peer_run_started"] = str(data["start_time"])
    args = data.get("args") or []
    collective = None
    if args and isinstance(args[0], str):
        collective = collective_name(args[0])
        run.context["program"] = " ".join(str(a) for a in args)
    env = {}
    for e in data.get("env") or []:
        if isinstance(e, str) and "=" in e:
            k, v = e.split("=", 1)
            env[k] = v
    cfg = data.get("config") or {}
    config = {
        "iters": cfg.get("iterations"),
        "warmup": cfg.get("warmup_iters"),
        "agg": cfg.get("aggregated_iterations") or 1,
        "graph": cfg.get("graph") or 0,
        "validation": cfg.get("validation"),
    }
    ranks = {}
    for d in cfg.get("devices") or []:
        if isinstance(d, dict) and "rank" in d:
            ranks[int(d["rank"])] = (
                str(d.get("hostname", "")),
                str(d.get("device_hex", "")),
                str(d.get("device_info", "")),
            )
    algo = _algo_arg(env.get("NCCL_ALGO"))
    derived: list[dict] = []  # rows whose algbw was written as 0
    seen: dict[str, int] = {}
    results = data["results"]
    if not isinstance(results, list):
        raise refuse(path, 1, "'results' to be a list")
    for i, r in enumerate(results):
        if not isinstance(r, dict) or "size" not in r or "type" not in r:
            raise refuse(path, None, f"results[{i}] to be an object with size and type")
        if int(r.get("count", 1)) == 0:
            continue
        try:
            root = int(str(r.get("root", "-1")).strip())
        except ValueError:
            root = None
        for key, title in (("out_of_place", "out-of-place"), ("in_place", "in-place")):
            part = r.get(key)
            if part is None:
                continue
            if not isinstance(part, dict):
                raise refuse(path, None, f"results[{i}].{key} to be an object")
            name = case_name(
                collective or "allreduce",
                _placement(title, config["graph"]),
                str(r["type"]),
                str(r.get("redop", "")),
                root,
                algo,
                int(r["size"]),
            )
            vals = {f: part.get(f) for f in ("time", "cpu_time", "alg_bw", "bus_bw")}
            nums = {f: (float("nan") if v == "nan" else v) for f, v in vals.items() if v is not None}
            if any(not isinstance(v, (int, float)) for v in nums.values()):
                raise refuse(path, None, f"numbers in results[{i}].{key}")
            err = ""
            nwrong = part.get("nwrong")
            if nwrong not in (None, "nan") and float(nwrong) != 0:
                err = f"nccl-tests found {float(nwrong):g} wrong elements (#wrong): not a number"
            counters = {}
            if "alg_bw" in nums:
                counters["algbw"] = nums["alg_bw"] * 1e9
            if "bus_bw" in nums:
                counters["busbw"] = nums["bus_bw"] * 1e9
            if "cpu_time" in nums:
                counters["cpu_time_s"] = nums["cpu_time"] * 1e-6
            if ranks:
                counters["ranks"] = float(len(ranks))
            time_s = nums["time"] * 1e-6 if "time" in nums else None
            if not err and not all(math.isfinite(v) for v in counters.values()):
                err = "nccl-tests wrote a non-finite bandwidth or time"
            if not err:
                _algbw_from_time(counters, int(r["size"]), time_s, run, derived)
            seen[name] = seen.get(name, 0) + 1
            run.cases.append(
                PeerCase(
                    name=name,
                    counters={} if err else counters,
                    time_s=None if err else time_s,
                    error=err,
                    iterations=r.get("actual_iterations") or config["iters"],
                )
            )
    _busbw_of_rounded_rows(derived, run.cases)
    avg = data.get("average_bus_bandwidth")
    if isinstance(avg, dict) and "bandwidth" in avg:
        run.context["avg_bus_bandwidth_gbps"] = str(avg["bandwidth"])
    for e in data.get("errors") or []:
        if e:
            run.context["nccl_last_error"] = str(e)
    if "end_time" not in data:
        run.not_read.append("the end time (the JSON has none: the run may not have finished)")
    run.statistic = statistics.nccl_tests(config["iters"], config["agg"], config["warmup"], config["graph"])
    _finish(run, ranks, collective, env.get("NCCL_ALGO"), env.get("NCCL_PROTO"), config, 0, seen)
    if env.get("NCCL_ALGO"):
        run.context["nccl_algo"] = f"{env['NCCL_ALGO']} (NCCL_ALGO in the recorded environment)"
    else:
        run.context["nccl_algo"] = "NCCL's own choice (algo:auto): NCCL_ALGO is not in the recorded environment"
    run.not_read = [n for n in run.not_read if "nccl-tests version" not in n]
    run.not_read.append("the nccl-tests version (the JSON records its file format version, not the tool's)")
    return run


def read(path: Path, text: str) -> PeerRun:
    if text.lstrip().startswith("{"):
        return read_json(path, text)
    return read_text(path, text)
