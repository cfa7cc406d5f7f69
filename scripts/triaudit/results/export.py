"""`triaudit export RUN --format bmf|github-action-benchmark`: a run's figures for the dashboards CI
users already run.

- bmf: Bencher Metric Format (https://bencher.dev/docs/reference/bencher-metric-format):
  {benchmark name: {measure: {"value", "lower_value", "upper_value"}}}, base units (FLOP/s, bytes/s,
  seconds), the range over repetitions as lower/upper. Every metric object also carries
  `triaudit_schema_version` and `triaudit_provenance` (measured, synthetic or imported: the BMF
  schema allows further properties; Bencher ignores them).
- github-action-benchmark: the `customBiggerIsBetter` and `customSmallerIsBetter` inputs of
  benchmark-action/github-action-benchmark, a JSON array of {"name", "unit", "value", "range",
  "extra"}; throughput counters into bigger_is_better.json, times into smaller_is_better.json,
  in display units (GB/s, TFLOP/s, µs); `extra` names the card, the run, the schema version and
  where the figures come from (provenance).

One entry per case and throughput counter (counters.py: flops/ops, busbw and algbw, bytes_per_second,
...; time for cases that have nothing else). Cases that errored or were skipped are not exported,
and the command says how many. The formats have no field for the card, so one card at a time.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from triaudit.core.errors import TriauditError
from triaudit.core.files import atomic_write, holds_a_results_tree, inside_a_results_tree
from triaudit.results import runs as R
from triaudit.results.case_info import MEASURED, SYNTHETIC, SYNTHETIC_BANNER, synthetic_in
from triaudit.results.counters import DISPLAY, JUDGED
from triaudit.results.gbench import SCHEMA_VERSION
from triaudit.results.table import load_results, plain

FORMATS = ("bmf", "github-action-benchmark")
_HIGHER = dict(JUDGED)


class ExportError(TriauditError):
    pass


def _entries(df) -> tuple[list[dict], list[str]]:
    """(one dict per case and counter: case, counter, higher, median, min, max, reps; cases not exported)."""
    ok = plain(df[df["status"] == "ok"])
    not_ok = sorted(set(df.loc[df["status"] != "ok", "case"]))
    out = []
    for case, g in ok.groupby("case", sort=True):
        metrics = {r.metric: r for r in g.itertuples(index=False)}
        chosen = [
            m for m, _ in JUDGED if m in metrics and m != "time_s" and not (m == "busbw" and metrics[m].median == 0)
        ]
        if not chosen and "time_s" in metrics:
            chosen = ["time_s"]
        for m in chosen:
            r = metrics[m]
            out.append(
                {
                    "case": case,
                    "counter": m,
                    "higher": _HIGHER[m],
                    "median": float(r.median),
                    "min": float(r.min),
                    "max": float(r.max),
                    "reps": int(r.reps),
                }
            )
    return out, not_ok


def _finite(v: float) -> bool:
    return isinstance(v, float) and math.isfinite(v)


def bmf(entries: list[dict], provenance: str = MEASURED) -> dict:
    doc: dict = {}
    for e in entries:
        metric = {"value": e["median"]}
        if _finite(e["min"]) and _finite(e["max"]):
            metric["lower_value"], metric["upper_value"] = e["min"], e["max"]
        metric["triaudit_schema_version"] = SCHEMA_VERSION
        metric["triaudit_provenance"] = provenance
        doc.setdefault(e["case"], {})[e["counter"].replace("_", "-")] = metric
    return doc


def github_action_benchmark(
    entries: list[dict], card: str, run: str, provenance: str = MEASURED
) -> tuple[list[dict], list[dict]]:
    bigger: list[dict] = []
    smaller: list[dict] = []
    for e in entries:
        unit, scale = DISPLAY.get(e["counter"], (e["counter"], 1.0))
        item = {"name": f"{e['case']} ({e['counter']})", "unit": unit, "value": e["median"] / scale}
        if _finite(e["min"]) and _finite(e["max"]):
            item["range"] = f"± {(e['max'] - e['min']) / 2 / scale:.4g}"
        item["extra"] = (
            f"card: {card}\nrun: {run}\nrepetitions: {e['reps']}\ntriaudit_schema_version: {SCHEMA_VERSION}\n"
            f"provenance: {provenance}"
        )
        (bigger if e["higher"] else smaller).append(item)
    return bigger, smaller


def export(paths: list[Path], fmt: str, out: Path) -> tuple[list[Path], list[str]]:
    """Writes the export files into `out`; returns them and lines to tell the user."""
    if fmt not in FORMATS:
        raise ExportError(f"--format {fmt!r}: choose {' or '.join(FORMATS)}")
    if out.exists() and not out.is_dir():
        raise ExportError(f"--out {out}: exists and is not a folder")
    loaded = load_results(paths)
    df = loaded.table
    said = list(loaded.notes)
    if df.empty:
        raise ExportError("no result files in " + ", ".join(map(str, paths)))
    complete = df[df["complete"].astype(bool)]
    if complete.empty:
        raise ExportError("every run given was interrupted (manifest: complete = false): nothing to export")
    df, shown, left_out = R.select(complete, loaded.runs, loaded.contexts)
    said += left_out
    columns = sorted(df["card"].unique())
    if len(columns) != 1:
        raise ExportError(
            "the results hold " + ", ".join(columns) + ": the formats have no field for the card, so "
            "export one card (and one GPU) at a time: give its run folder"
        )
    card = columns[0]
    run = "; ".join(shown.get(card, [])) or "unknown run"
    entries, not_ok = _entries(df)
    if not entries:
        raise ExportError(f"{card}: no measured case to export")
    if not_ok:
        said.append(f"{len(not_ok)} case(s) not exported (errored or skipped), e.g. {not_ok[0]}")
    inputs = {p.resolve() for p in map(Path, paths) if p.is_file()} | {Path(f).resolve() for f in loaded.contexts}
    files: dict[Path, object] = {}
    prov = SYNTHETIC if synthetic_in(df) else (str(df["provenance"].iloc[0]) if "provenance" in df else MEASURED)
    if prov == SYNTHETIC:
        said.append(SYNTHETIC_BANNER + " Each exported figure says so (triaudit_provenance).")
    if fmt == "bmf":
        files[out / "bmf.json"] = bmf(entries, prov)
    else:
        bigger, smaller = github_action_benchmark(entries, card, run, prov)
        if bigger:
            files[out / "bigger_is_better.json"] = bigger
        if smaller:
            files[out / "smaller_is_better.json"] = smaller
    for path in files:
        if path.resolve() in inputs:
            raise ExportError(f"refusing to write {path}: it is one of the inputs")
    run_folder = inside_a_results_tree(out)
    if run_folder is not None:
        raise ExportError(
            f"--out {out}: inside the run folder {run_folder}; report, compare and history would read "
            "the export as a result there: choose a folder outside the results"
        )
    below = holds_a_results_tree(out)
    if below is not None:
        raise ExportError(
            f"--out {out}: holds the run folder {below}; a report of {out} would read the export as a "
            "result: choose a folder outside the results"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
        for path, doc in files.items():  # each file whole or not at all
            atomic_write(path, json.dumps(doc, indent=1, allow_nan=False) + "\n")
    except OSError as e:
        raise ExportError(f"--out {out}: cannot be written: {e.strerror or e}") from e
    said.append(f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'} from {card}, run {run}")
    return list(files), said
