"""`triaudit compare BASELINE NEW` and `triaudit history RUN...`: regressions between runs.

Cases are matched by name; each is judged on its throughput counter (flops/ops, busbw,
bytes_per_second, ...; time for launch cases) from the individual repetitions with stats.decide.
Runs of different GPU models, drivers or maximum clocks are refused unless allowed, saying why.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import stats
from .gbench import load_result
from .frames import PRIMARY_METRICS
from .table import expand_paths, run_is_complete


class CompareError(ValueError):
    pass


@dataclass
class RunSamples:
    label: str
    context: dict
    samples: dict  # case -> (metric, higher_is_better, [values])
    complete: bool


def load_samples(path: Path) -> RunSamples:
    files = expand_paths([path])
    if not files:
        raise CompareError(f"{path}: no result files")
    samples: dict = {}
    context: dict = {}
    complete = True
    for f in files:
        rf = load_result(f)
        complete = complete and run_is_complete(f)
        if rf.context.get("gpu_available") == "true":
            context = context or rf.context
        by_case: dict = {}
        for r in rf.runs:
            if r.run_type == "iteration" and r.status == "ok":
                by_case.setdefault(r.case, []).append(r)
        for case, runs in by_case.items():
            counters = {**runs[0].counters, "time_s": runs[0].time_s}
            for name, higher in PRIMARY_METRICS:
                if name in counters and not (name == "busbw" and counters[name] == 0):
                    values = [(r.time_s if name == "time_s" else r.counters.get(name, math.nan)) for r in runs]
                    samples[case] = (name, higher, [v for v in values if not math.isnan(v)])
                    break
    return RunSamples(str(path), context, samples, complete)


def comparability(a: RunSamples, b: RunSamples) -> list[str]:
    problems = []
    for key, what in (("gpu_name", "GPU model"), ("driver_version", "driver"), ("sm_clock_max_mhz", "maximum SM clock"),
                      ("memory_clock_mhz", "memory clock")):
        va, vb = a.context.get(key), b.context.get(key)
        if va != vb:
            problems.append(f"{what} differs: {va!r} vs {vb!r}")
    return problems


def compare(baseline: Path, new: Path, alpha=0.05, min_effect=0.02, min_repetitions=4, allow_different=False,
            allow_incomplete=False) -> pd.DataFrame:
    a, b = load_samples(baseline), load_samples(new)
    for r in (a, b):
        if not r.complete and not allow_incomplete:
            raise CompareError(f"{r.label} is an interrupted run (manifest: complete = false); --allow-incomplete to compare anyway")
    problems = comparability(a, b)
    if problems and not allow_different:
        raise CompareError("refusing to compare: " + "; ".join(problems) + " (--allow-different to compare anyway)")
    rows = []
    for case in sorted(set(a.samples) | set(b.samples)):
        if case not in a.samples or case not in b.samples:
            rows.append({"case": case, "metric": "", "verdict": "missing",
                         "reason": "only in " + ("the new run" if case in b.samples else "the baseline")})
            continue
        metric, higher, va = a.samples[case]
        metric_b, _, vb = b.samples[case]
        if metric != metric_b:
            rows.append({"case": case, "metric": metric, "verdict": "uncertain", "reason": f"metric changed ({metric} vs {metric_b})"})
            continue
        v = stats.decide(va, vb, higher, alpha, min_effect, min_repetitions)
        rows.append({"case": case, "metric": metric, "baseline": pd.Series(va).median(), "new": pd.Series(vb).median(),
                     "change_pct": v.change * 100, "p_value": v.p_value, "verdict": v.verdict, "reason": v.reason,
                     "n_baseline": len(va), "n_new": len(vb)})
    return pd.DataFrame(rows)


def summary_markdown(result: pd.DataFrame, baseline: str, new: str, problems: list[str] | None = None) -> str:
    counts = result["verdict"].value_counts().to_dict() if not result.empty else {}
    lines = [f"## triaudit compare: `{new}` against `{baseline}`", ""]
    if problems:
        lines += [f"Compared despite: {'; '.join(problems)}", ""]
    lines.append(", ".join(f"{counts.get(k, 0)} {k}" for k in ("slower", "faster", "same", "uncertain", "missing")))
    lines.append("")
    for verdict in ("slower", "faster", "uncertain"):
        sub = result[result["verdict"] == verdict] if not result.empty else result
        if sub.empty:
            continue
        lines += [f"### {verdict}", "", "| case | metric | baseline | new | change | why |", "|---|---|---|---|---|---|"]
        for _, r in sub.iterrows():
            lines.append(f"| `{r['case']}` | {r['metric']} | {r.get('baseline', float('nan')):.4g} | {r.get('new', float('nan')):.4g} | "
                         f"{r.get('change_pct', float('nan')):+.1f}% | {r['reason']} |")
        lines.append("")
    return "\n".join(lines)


def history(runs: list[Path], out: Path, case_filter: str = "", alpha=0.05, min_effect=0.02, min_repetitions=4,
            max_cases: int = 12) -> tuple[list[Path], pd.DataFrame]:
    """Trend plots: per case, the median and range of each run in order, regressions (against
    the previous run) marked."""
    import re

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    loaded = sorted((load_samples(r) for r in runs), key=lambda r: Path(r.label).name)
    if len(loaded) < 2:
        raise CompareError("history needs at least two runs")
    names = [Path(r.label).name for r in loaded]
    cases = sorted(set.intersection(*(set(r.samples) for r in loaded)))
    if case_filter:
        cases = [c for c in cases if re.search(case_filter, c)]
    if not cases:
        raise CompareError("no case common to every run" + (f" matching {case_filter!r}" if case_filter else ""))
    rows = []
    for case in cases:
        for i, r in enumerate(loaded):
            metric, higher, vals = r.samples[case]
            verdict = ""
            if i > 0:
                verdict = stats.decide(loaded[i - 1].samples[case][2], vals, higher, alpha, min_effect, min_repetitions).verdict
            rows.append({"case": case, "run": names[i], "metric": metric, "median": pd.Series(vals).median(),
                         "min": min(vals), "max": max(vals), "verdict": verdict})
    table = pd.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    shown = cases[:max_cases]
    cols = min(3, len(shown))
    nrows = math.ceil(len(shown) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(6 * cols, 3.6 * nrows), squeeze=False)
    for ax, case in zip(axes.flat, shown):
        t = table[table["case"] == case]
        x = range(len(t))
        ax.errorbar(list(x), t["median"], yerr=[t["median"] - t["min"], t["max"] - t["median"]], marker="o", capsize=3)
        bad = [i for i, v in enumerate(t["verdict"]) if v == "slower"]
        ax.scatter([x[i] for i in bad], t["median"].iloc[bad], s=120, facecolors="none", edgecolors="red",
                   label="regression" if bad else None, zorder=3)
        ax.set_xticks(list(x), t["run"], rotation=30, ha="right", fontsize=7)
        ax.set_title(case, fontsize=8)
        ax.set_ylabel(t["metric"].iloc[0])
        ax.grid(True, alpha=0.3)
        if bad:
            ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(shown):]:
        ax.axis("off")
    fig.suptitle("triaudit history (median and range per run; red: slower than the run before)")
    fig.tight_layout()
    path = out / "history.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    table.to_csv(out / "history.csv", index=False)
    return [path, out / "history.csv"], table
