"""BabelStream's `--csv` output: `function,num_times,n_elements,sizeof,max_mbytes_per_sec,...`, the
exact array size per row (n_elements x sizeof), BabelStream's own min/max/avg runtimes."""

from __future__ import annotations

from pathlib import Path

from triaudit.peers import statistics
from triaudit.peers.babelstream_common import DEVICE, OPS, TOOL, TYPES, add_case, common, unit_factor, validation_errors
from triaudit.peers.model import PeerCase, PeerRun, refuse


def read_csv(path: Path, text: str) -> PeerRun:
    run = PeerRun(tool=TOOL, source=path, statistic="")
    lines = text.splitlines()
    header = None
    rows = 0
    num_times = None
    triad_only = False
    errors = validation_errors(lines)
    for k, line in enumerate(lines):
        s = line.strip()
        if not s:
            continue
        if DEVICE.match(s):
            run.gpu_name = DEVICE.match(s).group(2)
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
        factor = unit_factor(bw_col) if bw_col else None
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
            add_case(
                run, cells[0], typ, size_arg, bps, tmin, tmax, tavg, array_bytes, errors, num_times, exact_time=True
            )
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
    common(run)
    return run
