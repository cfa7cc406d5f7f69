"""BabelStream: its text table (Function  MBytes/sec  Min (sec)  Max  Average, in every unit it
prints), the triad-only summary, and its `--csv` output.

The bandwidth column is BabelStream's statistic (statistics.babelstream): bytes moved / the minimum
host-timed run, first run dropped; BabelStream counts bytes as STREAM and triaudit do (copy, mul,
dot 2 arrays, add and triad 3, nstream 4), so `bytes_per_second` compares directly. The text prints
the array size rounded to 0.1 MB: the size argument is exact only from `--csv`, from "Number of
elements", or when a single power of two of elements fits the rounding (BabelStream's default sizes
are powers of two), and the context says which. Lines reporting a failed validation make the
affected kernels error entries.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from triaudit.peers import statistics
from triaudit.peers.model import PeerCase, PeerRun, refuse

TOOL = "babelstream"

OPS = {
    "Copy": ("copy", 2),
    "Mul": ("scale", 2),
    "Add": ("add", 3),
    "Triad": ("triad", 3),
    "Dot": ("dot", 2),
    "Nstream": ("nstream", 4),
}
TYPES = {"float": "fp32", "double": "fp64", 4: "fp32", 8: "fp64"}
UNITS = {
    "mbytes": 1e6,
    "mb": 1e6,
    "mibytes": 2.0**20,
    "mib": 2.0**20,
    "gbytes": 1e9,
    "gb": 1e9,
    "gibytes": 2.0**30,
    "gib": 2.0**30,
    "tb": 1e12,
    "tib": 2.0**40,
}

_ARRAY = re.compile(r"^Array size:\s*([0-9.]+)\s*(MB|MiB|GB|GiB|TB|TiB)")
_RUNNING = re.compile(r"^Running\b.*?(\d+)\s+times")


def _unit_factor(text: str) -> float | None:
    t = text.strip().lower().replace("/sec", "").replace("/s", "").replace("_per_sec", "")
    t = t.removeprefix("max_")
    return UNITS.get(t)


def _validation_errors(lines: list[str]) -> dict[str, str]:
    """kernel label (or "*" for all) -> message, from BabelStream's validation lines."""
    out: dict[str, str] = {}
    for s in (x.strip() for x in lines):
        if s.startswith("Validation failed on sum") or s.startswith("FAILED validation of sum"):
            out["Dot"] = s
        elif s.startswith("Validation failed on") or s.startswith("FAILED validation of"):
            out.setdefault("*", s)
    return out


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


def read_text(path: Path, text: str) -> PeerRun:
    run = PeerRun(tool=TOOL, source=path, statistic="")
    lines = text.splitlines()
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
        elif (
            s.startswith("Using CUDA device") or s.startswith("Using HIP device") or s.startswith("Using OpenCL device")
        ):
            run.gpu_name = s.split("device", 1)[1].strip()
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
    errors = _validation_errors(lines)
    if triad_only:
        _triad_only(run, lines, path, typ, size_arg, errors)
    else:
        if header_at is None:
            raise refuse(
                path,
                len(lines),
                "BabelStream's results header ('Function  MBytes/sec  Min (sec)  Max  "
                "Average'): the output ends without it (truncated?)",
            )
        header = lines[header_at].split()
        factor = _unit_factor(header[1]) if len(header) > 1 else None
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
            _add(
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
    _common(run)
    return run


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


def _add(run, label, typ, size_arg, bps, tmin, tmax, tavg, array_bytes, errors, num_times, exact_time):
    op, arrays = OPS[label]
    err = errors.get(label) or errors.get("*", "")
    if err:
        err = f"BabelStream's validation failed: {err}"
    elif not (math.isfinite(bps) and bps > 0):
        err = f"BabelStream printed a bandwidth of {bps:g} for {label}: not a number"
    elif array_bytes and tmin > 0 and (exact_time or tmin >= 1e-4):
        # The printed bandwidth must be the STREAM bytes over the minimum time (a development version
        # of BabelStream swapped the Add and Mul weights): refuse a figure that is not.
        implied = bps * tmin / array_bytes
        if abs(implied - arrays) > (0.02 if exact_time else 0.25) * arrays:
            err = (
                f"BabelStream's {label} bandwidth implies {implied:.2f} arrays moved per element, not "
                f"{arrays}: its byte weights are wrong in this version; not a number"
            )
    name = f"stream/{op}/{typ}/cache:hot/{size_arg}".rstrip("/")
    counters = {} if err else {"bytes_per_second": bps, "time_min_s": tmin, "time_max_s": tmax, "time_mean_s": tavg}
    run.cases.append(
        PeerCase(
            name=name,
            counters=counters,
            time_s=None if err else tmin,
            error=err,
            iterations=num_times,
            label="time is the fastest run; bandwidth from it",
        )
    )


def _common(run: PeerRun) -> None:
    if run.gpu_name is None:
        run.not_read.append("the GPU name (no 'Using ... device' line)")
    if run.version is None:
        run.not_read.append("the BabelStream version (no 'Version:' line; --csv prints none)")
    run.context["cache"] = (
        "hot: BabelStream does not flush the L2 between kernels (compare with triaudit's "
        "cold only where the arrays are several times the L2)"
    )
    if run.context.get("memory", "DEFAULT") != "DEFAULT":
        run.context["memory_note"] = f"Memory: {run.context['memory']}, not device memory: not comparable"


def read_csv(path: Path, text: str) -> PeerRun:
    run = PeerRun(tool=TOOL, source=path, statistic="")
    lines = text.splitlines()
    header = None
    rows = 0
    num_times = None
    triad_only = False
    errors = _validation_errors(lines)
    for k, line in enumerate(lines):
        s = line.strip()
        if not s:
            continue
        if s.startswith("Using ") and " device " in s:
            run.gpu_name = s.split("device", 1)[1].strip()
            continue
        if s.startswith("Driver:"):
            run.context["driver"] = s.split(":", 1)[1].strip()
            continue
        if s.startswith("Memory:"):
            run.context["memory"] = s.split(":", 1)[1].strip()
            continue
        cells = [c.strip() for c in s.split(",")]
        if cells[0] in ("function", "phase"):
            header = cells
            continue
        if header is None or len(cells) < 2:
            continue
        if cells[0] in ("Init", "Read"):
            continue
        if cells[0] not in OPS:
            raise refuse(path, k + 1, f"a CSV row of a kernel ({', '.join(OPS)}) under '{','.join(header)}'", line)
        if len(cells) != len(header):
            raise refuse(path, k + 1, f"{len(header)} comma-separated values ({','.join(header)}; truncated?)", line)
        row = dict(zip(header, cells))
        bw_col = next((h for h in header if h.endswith("_per_sec")), None)
        factor = _unit_factor(bw_col) if bw_col else None
        if factor is None:
            raise refuse(path, k + 1, "a *_per_sec bandwidth column with a known unit", ",".join(header))
        try:
            n = int(row["n_elements"])
            size_of = int(row["sizeof"])
            num_times = int(row["num_times"])
            bps = float(row[bw_col]) * factor
        except (KeyError, ValueError):
            raise refuse(
                path, k + 1, "integers n_elements, sizeof, num_times and a number for the bandwidth", line
            ) from None
        typ = TYPES.get(size_of, f"{size_of}byte")
        array_bytes = n * size_of
        size_arg = f"bytes:{array_bytes}"
        if "min_runtime" in row:
            try:
                tmin, tmax, tavg = (float(row[c]) for c in ("min_runtime", "max_runtime", "avg_runtime"))
            except ValueError:
                raise refuse(path, k + 1, "numbers in min_runtime, max_runtime, avg_runtime", line) from None
            _add(run, cells[0], typ, size_arg, bps, tmin, tmax, tavg, array_bytes, errors, num_times, exact_time=True)
        else:  # --only Triad in 4.x/5.0: gbytes_per_sec over one loop of num_times triads
            triad_only = True
            err = errors.get("*", "")
            run.cases.append(
                PeerCase(
                    name=f"stream/triad/{typ}/cache:hot/{size_arg}",
                    counters={} if err else {"bytes_per_second": bps},
                    error=err,
                    iterations=num_times,
                )
            )
        rows += 1
    if rows == 0:
        raise refuse(path, len(lines), "BabelStream --csv rows after a 'function,num_times,n_elements,...' header")
    run.context["array_bytes_from"] = "n_elements x sizeof (CSV)"
    run.statistic = statistics.babelstream(num_times, "Classic", triad_only)
    run.not_read.append("the run order (--csv does not print it): the statistic assumes the default Classic order")
    _common(run)
    return run


def read(path: Path, text: str) -> PeerRun:
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(("function,", "phase,")):
            return read_csv(path, text)
        if s.startswith("Function") or s == "BabelStream":
            break
    return read_text(path, text)
