"""A case's repetitions, as `compare` and `history` judge them (a Mann-Whitney test wants the
values, not the table's median and range): one CaseSample per case of a result file. The results
store (store/) keeps them when a run is added; judge/compare.py assembles a run's from either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from triaudit.results.counters import judged_counter
from triaudit.results.gbench import load_result
from triaudit.results.plausible import case_problem
from triaudit.results.runs import RunInfo, read_run


@dataclass
class CaseSample:
    status: str  # ok, error or skipped
    message: str = ""
    metric: str = ""
    higher: bool = True
    values: list = field(default_factory=list)  # repetitions (aggregates-only files: the median alone)
    aggregates_only: bool = False
    algo: tuple = ()  # distinct algo_id values of a GEMM case
    label: str = ""


def case_sample(runs: list, file: str = "", context: dict | None = None) -> CaseSample:
    """The case's repetitions as compare and history judge them; a figure no card can produce
    (results/plausible.py) makes it an error, never a number."""
    bad = [r for r in runs if r.status != "ok"]
    if bad:
        worst = next((r for r in bad if r.status == "error"), bad[0])
        return CaseSample(worst.status, worst.message)
    reps = [r for r in runs if r.run_type == "iteration"]
    aggregates_only = not reps
    if aggregates_only:
        reps = [r for r in runs if r.aggregate_name == "median"]
        if not reps:
            kinds = sorted({r.aggregate_name or "unnamed" for r in runs})
            return CaseSample("skipped", f"only aggregates ({', '.join(kinds)}) and no median")
    counters = {**reps[0].counters, "time_s": reps[0].time_s}
    judged = judged_counter({k: v for k, v in counters.items() if v == v})
    if judged is None:
        return CaseSample("error", "no counter to judge (no time and no throughput counter)")
    metric, higher = judged
    figures = {k: [r.counters.get(k, math.nan) for r in reps] for k in reps[0].counters}
    figures["time_s"] = [r.time_s for r in reps]
    problem = case_problem(file, reps[0].case, figures, context or {})
    if problem:
        return CaseSample("error", problem)
    values = [(r.time_s if metric == "time_s" else r.counters.get(metric, math.nan)) for r in reps]
    algo = tuple(sorted({r.counters["algo_id"] for r in reps if "algo_id" in r.counters}))
    return CaseSample("ok", "", metric, higher, [v for v in values if v == v], aggregates_only, algo, reps[0].label)


@dataclass
class FileSamples:
    """One result file's cases as CaseSamples (in the file's order), with what a run's samples need
    of the file: its context, its notes and its run."""

    path: Path
    context: dict
    notes: list[str]
    run: RunInfo
    cases: list[tuple[str, CaseSample]]


def file_samples(path: Path, run: RunInfo | None = None) -> FileSamples:
    """A result file's samples, read from its JSON (gbench.LoadError names a bad file)."""
    rf = load_result(path)
    run = run or read_run(path.parent, [rf.context])
    by_case: dict[str, list] = {}
    for r in rf.runs:
        by_case.setdefault(r.case, []).append(r)
    cases = [(case, case_sample(runs, str(path), rf.context)) for case, runs in by_case.items()]
    return FileSamples(path, rf.context, list(rf.notes), run, cases)
