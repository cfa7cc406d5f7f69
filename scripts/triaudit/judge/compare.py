"""`triaudit compare BASELINE NEW` and `triaudit history RUN...`: regressions between runs.

Cases are matched by name and judged on their throughput counter (counters.py: flops/ops, busbw,
bytes_per_second, ...; time for launch cases) from the individual repetitions with stats.decide.
A GEMM case's identity includes the cuBLASLt algorithm it chose (`algo_id`): when the two runs
chose different algorithms the case is listed as "algorithm changed" and fails the gate, because
the comparison would not be like for like (`--allow-algo-change` judges it anyway).

The gate (exit codes): 0 no regression; 1 a regression: significantly slower by at least the
minimum effect, a case ok in the baseline that errors, is skipped or is missing in the new run, a
case that cannot be compared like for like (algorithm or judged counter changed), or a slowdown
beyond `max_untested_change` that too few repetitions could not test; 2 bad input; 3 nothing could
be judged (no common case). Runs of different GPU models, drivers or clocks are refused unless
allowed, saying why.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from triaudit.core import numbers as N
from triaudit.core.errors import EXIT_FOUND as EXIT_REGRESSION
from triaudit.core.errors import EXIT_NOTHING_JUDGED, EXIT_OK, TriauditError
from triaudit.core.files import atomic_write
from triaudit.core.specs import canonical_gpu_name
from triaudit.judge import history_plot, stats
from triaudit.results.case_info import IMPORTED, MEASURED, SYNTHETIC, SYNTHETIC_BANNER, gpu_measured, provenance
from triaudit.results.runs import gpu_identity
from triaudit.results.samples import CaseSample, case_sample  # noqa: F401 (CaseSample: compare's name for it)

# Verdicts that fail the gate, and the order sections are printed in.
FAILING = ["slower", "newly failing", "missing", "algorithm changed", "not comparable", "untested change"]
SIGN_NOTE = (
    "change = new vs baseline, relative, of the counter judged: for throughput counters (flops, ops, "
    "bytes_per_second, busbw, ...) + is faster; for times (time_s, per_kernel_s) − is faster."
)


class CompareError(TriauditError):
    pass


class NothingToJudge(CompareError):
    """The inputs are fine but share nothing to judge (exit 3)."""

    exit_code = EXIT_NOTHING_JUDGED


@dataclass
class RunSamples:
    label: str
    context: dict
    cases: dict  # case -> CaseSample
    complete: bool
    notes: list = field(default_factory=list)  # what the loader skipped or wants said
    provenance: str = MEASURED  # synthetic when any of its files is (case_info.provenance)

    @property
    def samples(self) -> dict:
        """case -> (metric, higher_is_better, values) of the cases measured (history uses this)."""
        return {c: (s.metric, s.higher, s.values) for c, s in self.cases.items() if s.status == "ok" and s.values}


def load_samples(path: Path) -> RunSamples:
    """The repetitions of every case of one run folder (or file), as compare and history judge
    them: from the results store where it holds the run (store/), else from its JSON files."""
    from triaudit.store.source import samples_of

    return assemble_samples(path, *samples_of([path])[0])


def assemble_samples(path: Path, files: list[Path], skipped: list[str], per_file) -> RunSamples:
    """One run's RunSamples from its files' samples (results/samples.py FileSamples, in scan
    order): a case in two files is a conflict, never two numbers; one GPU at a time."""
    if not files:
        raise CompareError(f"{path}: no result files" + (f" ({'; '.join(skipped)})" if skipped else ""))
    folders = sorted({f.parent for f in files})
    if len(folders) > 1:
        raise CompareError(
            f"{path}: holds {len(folders)} runs ({', '.join(d.name for d in folders[:4])}"
            f"{', ...' if len(folders) > 4 else ''}): compare one run folder against another"
        )
    cases: dict[str, CaseSample] = {}
    owner: dict[str, str] = {}
    context: dict = {}
    complete = True
    gpus: set[str] = set()
    notes: list[str] = list(skipped)
    provenances: set[str] = set()
    for fs in per_file:
        f = fs.path
        notes += fs.notes
        provenances.add(provenance(fs.context))
        complete = complete and fs.run.complete
        gpu = gpu_identity(fs.context, fs.run, f.name)
        if gpu and not str(fs.context.get("executable", "")).startswith("peer:"):
            gpus.add(gpu)
        if gpu_measured(fs.context):
            context = context or fs.context
        for case, sample in fs.cases:
            if case in owner:  # one case in two files of one run: never two numbers for one case
                cases[case] = CaseSample("error", f"conflict: {case} is in both {Path(owner[case]).name} and {f.name}")
                continue
            owner[case] = str(f)
            cases[case] = sample
    if len(gpus) > 1:
        raise CompareError(
            f"{path}: holds results of {len(gpus)} GPUs (a whole-node run): compare one GPU's files "
            "at a time, or use `triaudit outliers` across GPUs"
        )
    said = SYNTHETIC if SYNTHETIC in provenances else (IMPORTED if provenances == {IMPORTED} else MEASURED)
    return RunSamples(str(path), context, cases, complete, notes, said)


def comparability(a: RunSamples, b: RunSamples) -> list[str]:
    problems = []
    for key, what in (
        ("gpu_name", "GPU model"),
        ("driver_version", "driver"),
        ("sm_clock_max_mhz", "maximum SM clock"),
        ("memory_clock_mhz", "memory clock"),
    ):
        va, vb = a.context.get(key), b.context.get(key)
        if key == "gpu_name" and va and vb:
            va, vb = canonical_gpu_name(str(va)), canonical_gpu_name(str(vb))
        if va != vb:
            problems.append(f"{what} differs: {va!r} vs {vb!r}")
    return problems


def _raw_change(va: list, vb: list) -> float:
    """(new - baseline) / baseline of the medians, NaN when it cannot be said."""
    if not va or not vb:
        return math.nan
    mb, mn = statistics.median(va), statistics.median(vb)
    return (mn - mb) / abs(mb) if mb else math.nan


def judge(
    a: RunSamples,
    b: RunSamples,
    alpha=0.05,
    min_effect=0.02,
    min_repetitions=4,
    max_untested_change=0.10,
    allow_algo_change=False,
) -> pd.DataFrame:
    rows = []
    for case in sorted(set(a.cases) | set(b.cases)):
        A, B = a.cases.get(case), b.cases.get(case)
        row = {
            "case": case,
            "metric": "",
            "baseline": math.nan,
            "new": math.nan,
            "change_pct": math.nan,
            "p_value": math.nan,
            "n_baseline": 0,
            "n_new": 0,
        }
        if A is None:
            rows.append({**row, "verdict": "new", "reason": "only in the new run"})
            continue
        if B is None:
            verdict = "missing" if A.status == "ok" else "not judged"
            rows.append(
                {
                    **row,
                    "verdict": verdict,
                    "reason": "not in the new run" + ("" if A.status == "ok" else f" (the baseline had it {A.status})"),
                }
            )
            continue
        if A.status != "ok" or B.status != "ok":
            if A.status == "ok":
                verdict, reason = "newly failing", f"{B.status} in the new run: {B.message}"
            elif B.status == "ok":
                verdict, reason = "fixed", f"{A.status} in the baseline: {A.message}"
            else:
                verdict, reason = "failing in both", f"new run: {B.status}: {B.message}"
            rows.append({**row, "verdict": verdict, "reason": reason})
            continue
        row.update(
            metric=A.metric,
            baseline=statistics.median(A.values) if A.values else math.nan,
            new=statistics.median(B.values) if B.values else math.nan,
            n_baseline=len(A.values),
            n_new=len(B.values),
        )
        if A.metric != B.metric:
            rows.append(
                {**row, "verdict": "not comparable", "reason": f"judged counter changed ({A.metric} vs {B.metric})"}
            )
            continue
        raw = _raw_change(A.values, B.values)
        row["change_pct"] = raw * 100
        if A.algo != B.algo and not allow_algo_change:
            rows.append(
                {
                    **row,
                    "verdict": "algorithm changed",
                    "reason": f"cuBLASLt algo_id {_algo(A.algo)} → {_algo(B.algo)}: not like for like "
                    "(--allow-algo-change judges it anyway)",
                }
            )
            continue
        v = stats.decide(A.values, B.values, A.higher, alpha, min_effect, min_repetitions)
        verdict, reason = v.verdict, v.reason
        if A.aggregates_only or B.aggregates_only:
            verdict, reason = "untested", "only aggregates (no repetitions): " + reason.split(": ", 1)[-1]
        if verdict == "untested" and v.change == v.change and v.change < -max_untested_change:
            verdict = "untested change"
            reason += f"; slower by more than --max-untested-change {max_untested_change * 100:g}%"
        if A.algo != B.algo:
            reason += f" (algo_id {_algo(A.algo)} → {_algo(B.algo)})"
        rows.append({**row, "p_value": v.p_value, "verdict": verdict, "reason": reason})
    return pd.DataFrame(
        rows,
        columns=[
            "case",
            "metric",
            "baseline",
            "new",
            "change_pct",
            "p_value",
            "verdict",
            "reason",
            "n_baseline",
            "n_new",
        ],
    )


def _algo(ids: tuple) -> str:
    return "/".join(f"{i:g}" for i in ids) if ids else "none"


def compare(
    baseline: Path,
    new: Path,
    alpha=0.05,
    min_effect=0.02,
    min_repetitions=4,
    allow_different=False,
    allow_incomplete=False,
    max_untested_change=0.10,
    allow_algo_change=False,
) -> Comparison:
    a, b = load_samples(baseline), load_samples(new)
    for r in (a, b):
        if not r.complete and not allow_incomplete:
            raise CompareError(
                f"{r.label} is an interrupted run (manifest: complete = false); --allow-incomplete to compare anyway"
            )
    problems = comparability(a, b)
    if problems and not allow_different:
        raise CompareError("refusing to compare: " + "; ".join(problems) + " (--allow-different to compare anyway)")
    result = judge(a, b, alpha, min_effect, min_repetitions, max_untested_change, allow_algo_change)
    synthetic = [s.label for s in (a, b) if s.provenance == SYNTHETIC]
    said = [f"**{SYNTHETIC_BANNER}** (synthetic: {', '.join(synthetic)})"] if synthetic else []
    return Comparison(result, said + a.notes + b.notes, problems)


@dataclass
class Comparison:
    """compare()'s answer: a row per case with its verdict, what the readers said about the files,
    and what --allow-different let through."""

    table: pd.DataFrame
    notes: list = field(default_factory=list)
    problems: list = field(default_factory=list)


def exit_code(result: pd.DataFrame) -> int:
    verdicts = set(result["verdict"]) if not result.empty else set()
    if verdicts <= {"new", "missing", "not judged"}:  # no case name in common: nothing to compare
        return EXIT_NOTHING_JUDGED
    if verdicts & set(FAILING):
        return EXIT_REGRESSION
    if not verdicts & {"faster", "slower", "same", "uncertain", "untested"}:
        return EXIT_NOTHING_JUDGED
    return EXIT_OK


def _pct(v) -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v + 0.0:+.1f}%"


def _num(v, metric: str = "") -> str:
    """A baseline or new median with its unit (core/numbers.py: 828 TFLOP/s, not 8.281e+14)."""
    return N.with_unit(v, metric)


def summary_markdown(comparison: Comparison, baseline: str, new: str) -> str:
    result, problems = comparison.table, comparison.problems
    counts = result["verdict"].value_counts().to_dict() if not result.empty else {}
    code = exit_code(result)
    lines = [f"## triaudit compare: `{new}` against `{baseline}`", ""]
    if problems:
        lines += [f"Compared despite: {'; '.join(problems)}", ""]
    for note in comparison.notes:
        lines += [note, ""]
    lines.append(
        ", ".join(
            f"{counts.get(k, 0)} {k}"
            for k in (
                "slower",
                "faster",
                "same",
                "uncertain",
                "untested",
                "missing",
                "newly failing",
                "algorithm changed",
                "untested change",
                "not comparable",
            )
        )
    )
    lines.append("")
    verdict = {
        EXIT_OK: "**pass**: no regression",
        EXIT_REGRESSION: "**fail**: " + ", ".join(f"{counts[k]} {k}" for k in FAILING if counts.get(k)),
        EXIT_NOTHING_JUDGED: "**nothing judged**: the runs have no case in common, or none measured in both",
    }[code]
    lines += [f"Gate: {verdict} (exit {code}).", "", SIGN_NOTE, ""]
    for verdict_name in FAILING + ["faster", "uncertain", "untested", "failing in both", "fixed", "new", "not judged"]:
        sub = result[result["verdict"] == verdict_name] if not result.empty else result
        if sub.empty:
            continue
        lines += [
            f"### {verdict_name}",
            "",
            "| case | metric | baseline | new | change (new vs baseline: throughput + is "
            "faster, time − is faster) | why |",
            "|---|---|---|---|---|---|",
        ]
        for r in sub.itertuples(index=False):
            lines.append(
                f"| `{r.case}` | {r.metric} | {_num(r.baseline, r.metric)} | {_num(r.new, r.metric)} | {_pct(r.change_pct)} | "
                f"{str(r.reason).replace('|', '/')} |"
            )
        lines.append("")
    return "\n".join(lines)


def history(
    runs: list[Path],
    out: Path,
    case_filter: str = "",
    alpha=0.05,
    min_effect=0.02,
    min_repetitions=4,
    max_cases: int = 6,
) -> tuple[list[Path], pd.DataFrame]:
    """Each case's median per run as change from the first run, each run judged against the run
    before (stats.decide); history.png (judge/history_plot.py: every case, then a panel per group
    of cases, the regressed first, at most `max_cases` panels) and history.csv."""
    try:
        pattern = re.compile(case_filter) if case_filter else None
    except re.error as e:
        raise CompareError(f"--cases {case_filter!r}: not a valid regular expression ({e})") from None
    if out.exists() and not out.is_dir():
        raise CompareError(f"--out {out}: exists and is not a folder")
    from triaudit.store.source import samples_of

    # Every run at once: from the results store where it holds them (one query), else each run's JSON.
    loaded = sorted(
        (assemble_samples(path, *got) for path, got in zip(runs, samples_of(runs))), key=lambda r: Path(r.label).name
    )
    if len(loaded) < 2:
        raise CompareError("history needs at least two runs")
    cards: dict[str, list[str]] = {}
    for r in loaded:
        cards.setdefault(canonical_gpu_name(str(r.context.get("gpu_name", ""))) or "no GPU", []).append(
            Path(r.label).name
        )
    if len(cards) > 1:
        raise CompareError(
            "history follows one card; these runs hold "
            + "; ".join(f"{card}: {', '.join(names)}" for card, names in sorted(cards.items()))
            + " (run it per card, e.g. triaudit history results/<card>/*)"
        )

    names = [Path(r.label).name for r in loaded]
    samples = [r.samples for r in loaded]  # once per run: the property builds its dict each call
    cases = sorted(set.intersection(*(set(s) for s in samples)))
    if pattern:
        cases = [c for c in cases if pattern.search(c)]
    if not cases:
        raise NothingToJudge("no case common to every run" + (f" matching {case_filter!r}" if case_filter else ""))
    rows, higher = [], {}
    for case in cases:
        before = None
        for i, s in enumerate(samples):
            metric, up, vals = s[case]
            verdict = ""
            if before is not None:
                verdict = stats.decide(before, vals, up, alpha, min_effect, min_repetitions, p_for_same=False).verdict
            before = vals
            higher[case] = up
            rows.append((case, names[i], metric, statistics.median(vals), min(vals), max(vals), verdict))
    table = pd.DataFrame(rows, columns=["case", "run", "metric", "median", "min", "max", "verdict"])
    provenance_of = {n: r.provenance for n, r in zip(names, loaded)}
    table["provenance"] = table["run"].map(provenance_of)
    table = history_plot.with_change(table, higher)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CompareError(f"--out {out}: cannot be made: {e.strerror or e}") from e
    card = canonical_gpu_name(str(loaded[-1].context.get("gpu_name", ""))) or "no GPU"
    png = history_plot.draw(table, names, card, min_effect, (table["provenance"] == SYNTHETIC).any(), max_cases)
    path = out / "history.png"
    # Each file whole or not at all: an interrupt leaves the previous history.png as it was.
    atomic_write(path, png)
    columns = ["case", "run", "metric", "median", "min", "max", "verdict", "provenance", "base", "faster_pct"]
    atomic_write(out / "history.csv", table[columns].to_csv(index=False))
    return [path, out / "history.csv"], table
