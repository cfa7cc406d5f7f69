"""BabelStream: its text table (Function  MBytes/sec  Min (sec)  Max  Average, in every unit it
prints), the triad-only summary, and its `--csv` output (babelstream_csv.py).

The bandwidth column is BabelStream's statistic (statistics.babelstream): bytes moved / the minimum
host-timed run, first run dropped; BabelStream counts bytes as STREAM and triaudit do (copy, mul,
dot 2 arrays, add and triad 3, nstream 4), so `bytes_per_second` compares directly. The text prints
the array size rounded to 0.1 MB: the size argument is exact only from `--csv`, from "Number of
elements", or when a single power of two of elements fits the rounding (BabelStream's default sizes
are powers of two), and the context says which. Lines reporting a failed validation make the
affected kernels error entries.

Every programming model is read: the device from its `Using <model> device <name>` line (Thrust's
`device:` with a colon), or none where the model prints none (OpenMP on a CPU, TBB, std-*). A file
holding several runs (one `BabelStream` title each) keeps them all: runs of one model are
repetitions, runs of different models get a `model:` argument. A run under a profiler (Nsight
Compute's `==PROF==` lines, nvprof's `==<pid>==`) is no measurement: a profiled kernel replays
once per metric pass (in the real log the profiled Add and Triad print some 2000x less than
Copy), the others run serialised, so every kernel is an error entry naming the profiler and the
figure printed. A run that died before its table is refused naming the error line.
"""

from __future__ import annotations

import re
from pathlib import Path

from triaudit.peers import babelstream_csv, statistics
from triaudit.peers.babelstream_common import DEVICE, OPS, TOOL, TYPES, add_case, common, unit_factor, validation_errors
from triaudit.peers.model import PeerCase, PeerRun, refuse

_ARRAY = re.compile(r"^Array size:\s*([0-9.]+)\s*(MB|MiB|GB|GiB|TB|TiB)")
_RUNNING = re.compile(r"^Running\b.*?(\d+)\s+times")
_PROFILER = re.compile(r"^==PROF==|^==\d+== NVPROF")  # Nsight Compute; nvprof opens with "NVPROF is profiling"
_PROFILED = re.compile(r'^==PROF== Profiling "([^"]+)"')
_ERROR = re.compile(r"^(Error|ERROR|error)\b.*|^terminate called .*|^Exception: .*")


def _array_bytes_from_text(run: PeerRun, mb: float, unit: str, elements: int | None, size_of: int) -> int | None:
    if elements is not None:
        run.context["array_bytes_from"] = "Number of elements x sizeof"
        return elements * size_of
    factor = {"MB": 1e6, "MiB": 2**20, "GB": 1e9, "GiB": 2**30, "TB": 1e12, "TiB": 2**40}[unit]
    lo, hi = (mb - 0.05) * factor, (mb + 0.05) * factor
    fits = [e * size_of for e in (2**k for k in range(1, 40)) if lo <= e * size_of < hi]
    if len(fits) == 1:
        run.context["array_bytes_from"] = (
            f"inferred: the only power-of-two element count within the printed "
            f"{mb} {unit} (BabelStream prints 0.1 {unit}; its default sizes are "
            f"powers of two); --csv output gives it exactly"
        )
        return fits[0]
    run.not_read.append(
        f"the exact array size: {mb} {unit} is printed to 0.1 {unit} and no single power of two "
        "fits it (size given as mbytes:, not bytes:)"
    )
    return None


def _read_one(path: Path, lines: list[str]) -> PeerRun:
    """One run: `lines` are the file's, the other runs' blanked, so line numbers stay the file's."""
    run = PeerRun(tool=TOOL, source=path, statistic="")
    printed: dict[str, str] = {}  # kernel label -> its bandwidth as printed
    profiler: dict = {}
    num_times = None
    order = "Classic"
    triad_only = False
    precision = None
    elements = None
    array: tuple[float, str] | None = None
    header_at = None
    for k, line in enumerate(lines):
        s = line.strip()
        if s.startswith("Version:"):
            run.version = s.split(":", 1)[1].strip()
        elif s.startswith("Implementation:"):
            run.context["implementation"] = s.split(":", 1)[1].strip()
        elif _RUNNING.match(s):
            num_times = int(_RUNNING.match(s).group(1))
            if re.search(r"\bin\s+Isolated\s+order", s):
                order = "Isolated"
            if s.startswith("Running triad"):
                triad_only = True
        elif s.startswith("Number of elements:"):
            elements = int(s.split(":", 1)[1].strip())
        elif s.startswith("Precision:"):
            precision = s.split(":", 1)[1].strip()
        elif _ARRAY.match(s):
            m = _ARRAY.match(s)
            array = (float(m.group(1)), m.group(2))
        elif DEVICE.match(s):
            m = DEVICE.match(s)
            run.gpu_name = m.group(2)
            run.context["device_from"] = f"Using {m.group(1)} device" if m.group(1) else "Using device"
        elif _PROFILER.match(s):
            _profiler_line(profiler, s, k + 1)
        elif s.startswith("Driver:"):
            run.context["driver"] = s.split(":", 1)[1].strip()
        elif s.startswith("Memory:"):
            run.context["memory"] = s.split(":", 1)[1].strip()
        elif s.startswith("Function") and "Min" in s and header_at is None:
            header_at = k
    if precision not in ("float", "double"):
        raise refuse(path, None, "a 'Precision: float|double' line (is this BabelStream's output?)")
    size_of = 4 if precision == "float" else 8
    typ = TYPES[precision]
    array_bytes = _array_bytes_from_text(run, array[0], array[1], elements, size_of) if array else None
    if array is None and elements is None:
        run.not_read.append("the array size")
    if array_bytes is None and elements is not None:
        array_bytes = elements * size_of
    size_arg = f"bytes:{array_bytes}" if array_bytes else (f"mbytes:{array[0]}" if array else "")
    errors = validation_errors(lines)
    if triad_only:
        _triad_only(run, lines, path, typ, size_arg, errors)
    else:
        died = next((k for k, x in enumerate(lines) if _ERROR.match(x.strip())), None)
        if header_at is None and died is not None:
            raise refuse(
                path, died + 1, f"BabelStream's results table; the run failed before it: '{lines[died].strip()[:120]}'"
            )
        if header_at is None:
            raise refuse(
                path,
                len(lines),
                "BabelStream's results header ('Function  MBytes/sec  Min (sec)  Max  "
                "Average'): the output ends without it (truncated?)",
            )
        header = lines[header_at].split()
        factor = unit_factor(header[1]) if len(header) > 1 else None
        if factor is None:
            raise refuse(
                path,
                header_at + 1,
                "a bandwidth unit (MBytes/sec, MB/s, GB/s, MiBytes/sec, ...) in the second column",
                lines[header_at],
            )
        rows = 0
        for k in range(header_at + 1, len(lines)):
            s = lines[k].strip()
            if not s:
                continue
            tokens = s.split()
            if tokens[0] not in OPS:
                if rows:
                    break
                raise refuse(path, k + 1, "a kernel row (Copy, Mul, Add, Triad, Dot, Nstream)", lines[k])
            if len(tokens) != 5:
                raise refuse(path, k + 1, "5 columns: kernel, bandwidth, min, max, average (truncated?)", lines[k])
            try:
                bw, tmin, tmax, tavg = (float(t) for t in tokens[1:])
            except ValueError:
                raise refuse(path, k + 1, "numbers in the bandwidth and time columns", lines[k]) from None
            rows += 1
            printed[tokens[0]] = f"{tokens[1]} {header[1]}"
            add_case(
                run,
                tokens[0],
                typ,
                size_arg,
                bw * factor,
                tmin,
                tmax,
                tavg,
                array_bytes,
                errors,
                num_times,
                exact_time=False,
            )
        if rows == 0:
            raise refuse(path, header_at + 2, "kernel rows after the header (the output ends: truncated?)")
    run.statistic = statistics.babelstream(num_times, order, triad_only)
    if num_times is None:
        run.not_read.append("the number of runs (no 'Running ... N times' line)")
    if profiler:
        _under_profiler(run, profiler, printed)
    common(run)
    return run


def _profiler_line(profiler: dict, s: str, lineno: int) -> None:
    profiler.setdefault("name", "Nsight Compute" if s.startswith("==PROF==") else "nvprof")
    profiler.setdefault("line", lineno)
    m = _PROFILED.match(s)
    if m:
        kernels = profiler.setdefault("kernels", {})
        kernels[m.group(1)] = kernels.get(m.group(1), 0) + 1


def _under_profiler(run: PeerRun, profiler: dict, printed: dict[str, str]) -> None:
    """A profiled kernel is replayed once per metric pass and the others run serialised: no figure of
    such a run is a measurement, each kernel an error entry naming the profiler and what it printed."""
    label_of = {f"stream/{op}/": label for label, (op, _) in OPS.items()}
    kernels = profiler.get("kernels", {})
    where = f"{profiler['name']}, {'==PROF==' if profiler['name'] == 'Nsight Compute' else '==<pid>=='} at line {profiler['line']}"
    for c in run.cases:
        label = next((lb for pre, lb in label_of.items() if c.name.startswith(pre)), "")
        figure = printed.get(label, "")
        hit = next(((k, n) for k, n in kernels.items() if k.lower().startswith(label.lower())), None)
        if hit:
            why = f"it profiled {hit[0]} {hit[1]} times, replaying it per metric pass, so the printed {figure} is the profiler's"
        else:
            why = f"the printed {figure} is not taken as a measurement (a profiler serialises every launch)"
        c.error = f"run under a profiler ({where}): {why}" + (f"; {c.error}" if c.error else "")
        c.counters, c.time_s = {}, None
    run.context["profiler"] = f"{profiler['name']} ({where})" + (
        ": profiled " + ", ".join(f"{k} x{n}" for k, n in kernels.items()) if kernels else ""
    )


def read_text(path: Path, text: str) -> PeerRun:
    """Every run in the file: one per `BabelStream` title line (an output pasted several times)."""
    lines = text.splitlines()
    starts = [k for k, x in enumerate(lines) if x.strip() == "BabelStream"][1:]
    bounds = list(zip([0] + starts, starts + [len(lines)]))
    runs = [(a + 1, _read_one(path, [""] * a + lines[a:b] + [""] * (len(lines) - b))) for a, b in bounds]
    if len(runs) == 1:
        return runs[0][1]
    return _merge(runs)


def _merge(runs: list[tuple[int, PeerRun]]) -> PeerRun:
    """Runs of one model are repetitions of its cases; runs of different models get `model:<name>`."""
    first = runs[0][1]
    impls = [r.context.get("implementation", "?") for _, r in runs]
    if len(set(impls)) > 1:
        for (_, r), impl in zip(runs, impls):
            slug = re.sub(r"[^a-z0-9]+", "_", impl.lower()).strip("_")
            for c in r.cases:
                c.name += f"/model:{slug}"
        first.context["implementation"] = "; ".join(f"{impl} (line {line})" for (line, _), impl in zip(runs, impls))
    else:
        first.context["runs"] = f"{len(runs)} runs of {impls[0]} in one file: kept as repetitions"
    for _, r in runs[1:]:
        first.cases += r.cases
        first.not_read += [n for n in r.not_read if n not in first.not_read]
        for k, v in r.context.items():
            first.context.setdefault(k, v)
    names = {r.gpu_name for _, r in runs}
    if len(names) > 1:
        first.gpu_name = None
        first.not_read.append(f"one device name: the runs name {', '.join(sorted(str(n) for n in names))}")
    stats = list(dict.fromkeys(r.statistic for _, r in runs))
    first.statistic = "; ".join(stats)
    return first


def _triad_only(run, lines, path, typ, size_arg, errors):
    runtime = bw = None
    for s in (x.strip() for x in lines):
        if s.startswith("Runtime (seconds):"):
            runtime = float(s.split(":", 1)[1])
        m = re.match(r"^Bandwidth \((GB/s|GiB/s)\):\s*([0-9.eE+-]+)", s)
        if m:
            bw = float(m.group(2)) * (1e9 if m.group(1) == "GB/s" else 2.0**30)
    if bw is None:
        raise refuse(path, len(lines), "the triad-only summary ('Bandwidth (GB/s):  ...'; truncated?)")
    err = errors.get("*", "")
    run.cases.append(
        PeerCase(
            name=f"stream/triad/{typ}/cache:hot/{size_arg}".rstrip("/"),
            counters={} if err else {"bytes_per_second": bw},
            error=err,
            label=f"runtime of all runs {runtime} s" if runtime is not None else "",
        )
    )


def read(path: Path, text: str) -> PeerRun:
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(("function,", "phase,")):
            return babelstream_csv.read_csv(path, text)
        if s.startswith("Function") or s == "BabelStream":
            break
    return read_text(path, text)
