"""mamf-finder.py (stas00/ml-engineering): its log (header, per-shape progress lines where the log
kept them) and its final summary, in each version it has printed:

- v1 (2024, no "benchmark version" line): "The best outcome was 821.0TFLOPS @ MxNxK (MxNxK) (tried N
  shapes)"; M x N x K there multiplies an M x N by an N x K matrix, so N is the shared dimension.
- v2: "Tried N shapes => the best outcomes were:" then mean/median/max lines; K is the shared dimension.
- v3/v4: the same opening, then "MAMF (max achievable, boost burst): ..." and "MSMF (max sustainable,
  saturated): ...", each "<int> TFLOPS @ MxNxK (MxNxK)  <W>W <MHz>MHz" or "n/a".

The headline maxima map to triaudit's `gemm/ceiling/<precision>/burst` (v1's best, v2's max, MAMF)
and `/sustained` (MSMF); v2's best mean and best median keep their own names. Per-shape lines become
`gemm/torch/<precision>/layout:.../m:/n:/k:` with k the shared dimension. A log without its summary
line was cut before mamf-finder finished and is refused.

As logs are pasted: a run stopped with Ctrl-C prints its best so far (`^C` before the summary: the
context and the ceiling cases say the best is of the shapes tried), and a captured console keeps
only its last carriage-return-overwritten progress line, whose tail may be left from an earlier,
longer one (`TFLOPSPS`): that shape is read from the last write and its label says so. The
statistic of the per-shape cases is the same for all of them: the context keeps it once, under
their name prefix, not once per shape (a long log made that one string larger than the log).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from triaudit.peers import statistics
from triaudit.peers.model import PeerCase, PeerRun, refuse

TOOL = "mamf-finder"

DTYPES = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "float32": "fp32",
    "float8_e4m3fn": "fp8e4m3",
    "float8_e4m3fnuz": "fp8e4m3fnuz",
    "mxfp8": "mxfp8",
    "mxfp4": "mxfp4",
    "nvfp4": "nvfp4",
}

_V1_BEST = re.compile(
    r"The best outcome was\s*([0-9.]+)\s*TFLOPS\s*@\s*(\d+)x(\d+)x(\d+)\s*\(MxNxK\)\s*"
    r"\(tried\s+(\d+)\s+shapes\)"
)
_TRIED = re.compile(r"^Tried\s+(\d+)\s+shapes\s*=>\s*the best outcomes were:")
_V2_LINE = re.compile(r"^(mean|median|max):\s+([0-9.]+)\s*TFLOPS\s*@\s*(\d+)x(\d+)x(\d+)")
_V3_LINE = re.compile(r"^(MAMF|MSMF)\s*\([^)]*\):\s*(.*)$")
_HEADLINE = re.compile(r"^([0-9.]+)\s*TFLOPS\s*@\s*(\d+)x(\d+)x(\d+)\s*\(MxNxK\)\s*(.*)$")
_V1_PROGRESS = re.compile(r"^\s*(\d+)\s*\|\s*([0-9.]+)\s*TFLOPS\s*@\s*(\d+)x(\d+)x(\d+)\s*\|")
_INTERRUPT = re.compile(r"^(\^C)+\s*$")
_REMNANT = re.compile(r"TFLOPS(\S+)\s*$")  # what an earlier, longer progress line left after TFLOPS
_V2_PROGRESS = re.compile(
    r"^\s*(\d+)\s*\|\s*([0-9.]+)\(mean\)\s+([0-9.]+)\(median\)\s+([0-9.]+)\(max\)\s*@\s*"
    r"(\d+)x(\d+)x(\d+)"
)


def _shape_name(p: str, version: int, m: int, n: int, k: int) -> str:
    # v1: A (M x N) @ B (N x K): N is shared; C is M x K. v2+: A (M x K) @ B (N x K).T.
    if version == 1:
        return f"gemm/torch/{p}/layout:nn/m:{m}/n:{k}/k:{n}"
    return f"gemm/torch/{p}/layout:tn/m:{m}/n:{n}/k:{k}"


def read(path: Path, text: str) -> PeerRun:
    text = re.sub(r"\x1b\[K", "\n", text).replace("\r", "\n")  # v1 logs keep the console's \r updates
    lines = text.splitlines()
    run = PeerRun(tool=TOOL, source=path, statistic="")
    dtype = None
    version = None
    iterations = 100
    summary_at = None
    interrupted = None
    for k, line in enumerate(lines):
        s = line.strip()
        if s.startswith("Benchmark started on"):
            run.context["peer_run_started"] = s[len("Benchmark started on") :].strip()
        elif s == "** Command line:" and k + 1 < len(lines):
            cmd = lines[k + 1].strip()
            run.context["command"] = cmd
            m = re.search(r"--num_iterations[ =](\d+)", cmd)
            if m:
                iterations = int(m.group(1))
        elif s.startswith("** Dtype:"):
            dtype = s.split(":", 1)[1].strip().removeprefix("torch.")
        elif "name='" in s and ("DeviceProperties" in s or s.startswith("_")):
            run.gpu_name = re.search(r"name='([^']*)'", s).group(1)
        elif s.startswith("torch="):
            run.context["torch_version"] = s.split("=", 1)[1].strip()
        elif re.match(r"^(hip|cuda|hpu|xpu)=", s):
            run.context["compute_versions"] = s
        elif s.startswith("benchmark version:"):
            version = int(s.split(":", 1)[1].strip())
        elif _V1_BEST.search(s) or _TRIED.match(s):
            summary_at = k
        elif s.startswith("Elapsed time:"):
            run.context["elapsed"] = s.split(":", 1)[1].strip()
        elif _INTERRUPT.match(s) and summary_at is None:
            interrupted = k + 1
        elif s.startswith("geomean:"):
            run.context["geomean"] = s.split(":", 1)[1].strip()
    if dtype is None:
        # Built only when there is a summary: its line number is where (None: not a mamf-finder log).
        where = (
            f": the log has its summary (line {summary_at + 1}) but not the header, and the case names need the dtype"
            if summary_at is not None
            else " (is this a mamf-finder log?)"
        )
        raise refuse(path, None, "mamf-finder's header line '** Dtype: ...'" + where)
    if dtype not in DTYPES:
        raise refuse(path, None, f"a known dtype ({', '.join(DTYPES)})", dtype)
    if summary_at is None:
        raise refuse(
            path,
            len(lines),
            "mamf-finder's final summary ('The best outcome was ...' or 'Tried N shapes "
            "=> the best outcomes were:'): the log ends before it (interrupted?)",
            lines[-1] if lines else "",
        )
    p = DTYPES[dtype]
    if version is None:
        version = 1 if _V1_BEST.search(lines[summary_at]) else 2
        run.context["benchmark_version"] = f"{version} (no 'benchmark version' line: from the summary's form)"
    else:
        run.context["benchmark_version"] = str(version)
    run.version = f"benchmark version {version}"
    _progress(run, lines[:summary_at], p, version, iterations)
    _summary(run, lines, summary_at, path, p, version, iterations)
    run.statistic = "max over shapes; per case: " + "; ".join(sorted({c.statistic for c in run.cases if c.statistic}))
    if run.gpu_name is None:
        run.not_read.append("the GPU name (no device properties line)")
    shapes = [c for c in run.cases if c.name.startswith("gemm/torch/")]
    tried = next((int(c.counters["shapes_tried"]) for c in run.cases if "shapes_tried" in c.counters), None)
    if not shapes:
        run.not_read.append("per-shape results (the log kept no progress lines)")
    elif tried and len(shapes) < tried:
        run.context["per_shape_lines"] = (
            f"{len(shapes)} of the {tried} shapes tried (the others' lines are not in the log)"
        )
    if interrupted:
        _interrupted(run, interrupted, tried)
    run.context["statistic_by_case"] = json.dumps(_statistic_by_case(run))
    return run


def _statistic_by_case(run: PeerRun) -> dict:
    """Each ceiling case's statistic, and the per-shape cases' once under their prefix (a key ending
    in "/": side_by_side takes the longest prefix of a case that has no key of its own)."""
    out: dict[str, str] = {}
    for c in run.cases:
        if c.statistic:
            key = f"peer/{TOOL}/" + ("gemm/torch/" if c.name.startswith("gemm/torch/") else c.name)
            out.setdefault(key, c.statistic)
    return out


def _interrupted(run: PeerRun, line: int, tried: int | None) -> None:
    """mamf-finder's SIGINT handler prints the best so far: a maximum over the shapes tried only."""
    n = f"the {tried} shapes" if tried else "the shapes"
    run.context["interrupted"] = (
        f"the run was interrupted (^C at line {line}): its summary is the best of {n} tried before, "
        "not of the whole range"
    )
    for c in run.cases:
        if c.name.startswith("gemm/ceiling/"):
            c.label = f"{c.label}; interrupted after {tried or '?'} shapes: the best of those" if c.label else ""


def _progress(run, lines, p, version, iterations):
    seen = set()
    for s in lines:
        m2 = _V2_PROGRESS.match(s)
        m1 = None if m2 else _V1_PROGRESS.match(s)
        if m2 and version >= 2:
            mean, median, mx = (float(m2.group(i)) * 1e12 for i in (2, 3, 4))
            shape = tuple(int(m2.group(i)) for i in (5, 6, 7))
            counters = {"flops": median, "flops_mean": mean, "flops_max": mx}
            stat = statistics.mamf(2, "median", iterations).replace("max over shapes of the ", "")
        elif m1 and version == 1:
            shape = tuple(int(m1.group(i)) for i in (3, 4, 5))
            counters = {"flops": float(m1.group(2)) * 1e12}
            stat = f"fastest of {iterations} iterations (CUDA events per GEMM)"
        else:
            continue
        name = _shape_name(p, version, *shape)
        if name in seen:
            continue
        seen.add(name)
        label = f"mamf-finder shape {'x'.join(map(str, shape))} (MxNxK as it prints)"
        remnant = _REMNANT.search(s)
        if remnant:
            label += (
                f"; the console's last \\r-overwritten progress line: its tail '{remnant.group(1)}' is left from an "
                "earlier, longer line, the figures are the last write's"
            )
        run.cases.append(PeerCase(name=name, counters=counters, statistic=stat, label=label))


def _summary(run, lines, at, path, p, version, iterations):
    s = lines[at].strip()
    m = _V1_BEST.search(s)
    if m:
        shape = "x".join(m.group(i) for i in (2, 3, 4))
        run.cases.append(
            PeerCase(
                name=f"gemm/ceiling/{p}/burst",
                counters={"flops": float(m.group(1)) * 1e12, "shapes_tried": float(m.group(5))},
                statistic=statistics.mamf(1, "max", iterations),
                label=f"best shape {shape} (MxNxK as mamf-finder v1 prints it: N is shared)",
            )
        )
        return
    shapes = float(_TRIED.match(s).group(1))
    found = 0
    for k in range(at + 1, min(at + 8, len(lines))):
        t = lines[k].strip()
        m2 = _V2_LINE.match(t)
        m3 = _V3_LINE.match(t)
        if m2:
            col = m2.group(1)
            shape = "x".join(m2.group(i) for i in (3, 4, 5))
            name = {"max": "burst", "median": "best_median", "mean": "best_mean"}[col]
            run.cases.append(
                PeerCase(
                    name=f"gemm/ceiling/{p}/{name}",
                    counters={"flops": float(m2.group(2)) * 1e12, "shapes_tried": shapes},
                    statistic=statistics.mamf(2, col, iterations),
                    label=f"best shape by the {col}: {shape} (MxNxK)",
                )
            )
            found += 1
        elif m3:
            which, rest = m3.group(1), m3.group(2).strip()
            name = f"gemm/ceiling/{p}/{'burst' if which == 'MAMF' else 'sustained'}"
            stat = statistics.mamf(max(version, 3), which.lower(), iterations)
            found += 1
            if rest == "n/a":
                run.not_read.append(f"the {which} headline (mamf-finder printed n/a)")
                continue
            h = _HEADLINE.match(rest)
            if not h:
                raise refuse(path, k + 1, f"'<TFLOPS> TFLOPS @ MxNxK (MxNxK)' or 'n/a' after '{which} (...):'", t)
            counters = {"flops": float(h.group(1)) * 1e12, "shapes_tried": shapes}
            extra = h.group(5)
            w = re.search(r"([0-9.]+)W\b", extra)
            mhz = re.search(r"([0-9.]+)MHz\b", extra)
            if w:
                counters["watts_mean"] = float(w.group(1))
            if mhz:
                counters["sm_clock_mhz"] = float(mhz.group(1))
            shape = "x".join(h.group(i) for i in (2, 3, 4))
            run.cases.append(
                PeerCase(
                    name=name,
                    counters=counters,
                    statistic=stat,
                    label=f"{which} at {shape} (MxNxK), {extra.strip()}".rstrip(", "),
                )
            )
    if found == 0:
        raise refuse(
            path,
            at + 2,
            "mean/median/max or MAMF/MSMF lines after 'Tried N shapes => the best outcomes were:' (truncated?)",
            lines[at + 1] if at + 1 < len(lines) else "",
        )
