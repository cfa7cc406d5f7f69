"""Any number of result files -> one tidy table.

One row per (result file, case, metric): the card, the corner/op/variant and the name's
arguments as columns (m, n, k, bytes, ...), then the median, min, max, spread and number of
repetitions (reps). Skipped and
errored cases get one row with their status and message and no number.
"""
from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Iterable

import pandas as pd

from .gbench import LoadError, ResultFile, load_result

BASE_COLUMNS = ["card", "run", "file", "corner", "op", "variant", "case", "metric",
                "median", "min", "max", "spread_pct", "reps", "status", "message"]


def card_of(context: dict) -> str:
    if str(context.get("gpu_available", "")).lower() == "false":
        return "no GPU"
    return str(context.get("gpu_name") or "unknown card")


def name_parts(case: str) -> tuple[str, str, str, dict[str, str]]:
    parts = case.split("/")
    corner, op, variant = (parts + ["", "", ""])[:3]
    args = {}
    for p in parts[3:]:
        key, sep, value = p.partition(":")
        if sep:
            args[key] = value
    return corner, op, variant, args


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; directories searched recursively for *.json (manifests excluded)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*.json") if f.name != "manifest.json"
                              and not any(part.startswith(".") for part in f.relative_to(p).parts)))
        elif p.exists():
            out.append(p)
        else:
            raise LoadError(f"{p}: no such file or directory")
    return out


def _rows_for_file(rf: ResultFile) -> list[dict]:
    card = card_of(rf.context)
    run = rf.path.parent.name
    by_case: dict[str, list] = {}
    for r in rf.runs:
        by_case.setdefault(r.case, []).append(r)
    rows = []
    for case, runs in by_case.items():
        corner, op, variant, args = name_parts(case)
        base = {"card": card, "run": run, "file": str(rf.path), "corner": corner, "op": op,
                "variant": variant, "case": case, **args}
        bad = [r for r in runs if r.status != "ok"]
        if bad:
            worst = next((r for r in bad if r.status == "error"), bad[0])
            rows.append({**base, "metric": "", "median": math.nan, "min": math.nan, "max": math.nan,
                         "spread_pct": math.nan, "reps": 0, "status": worst.status, "message": worst.message})
            continue
        iterations = [r for r in runs if r.run_type == "iteration"]
        if iterations:
            samples: dict[str, list[float]] = {"time_s": [r.time_s for r in iterations]}
            for r in iterations:
                for k, v in r.counters.items():
                    samples.setdefault(k, []).append(v)
            for metric, values in samples.items():
                values = [v for v in values if not math.isnan(v)]
                if not values:
                    continue
                med = statistics.median(values)
                lo, hi = min(values), max(values)
                spread = (hi - lo) / abs(med) * 100 if med else math.nan
                rows.append({**base, "metric": metric, "median": med, "min": lo, "max": hi,
                             "spread_pct": spread, "reps": len(values), "status": "ok", "message": ""})
        else:  # aggregates only (--benchmark_report_aggregates_only)
            median = next((r for r in runs if r.aggregate_name == "median"), None)
            if median is None:
                continue
            values = {"time_s": median.time_s, **median.counters}
            for metric, v in values.items():
                rows.append({**base, "metric": metric, "median": v, "min": math.nan, "max": math.nan,
                             "spread_pct": math.nan, "reps": 0, "status": "ok", "message": "aggregates only"})
    return rows


def run_is_complete(result_file: Path) -> bool:
    """False when the run's manifest says it was interrupted; True without a manifest."""
    import json

    manifest = Path(result_file).parent / "manifest.json"
    if not manifest.exists():
        return True
    try:
        return bool(json.loads(manifest.read_text()).get("complete", True))
    except (OSError, ValueError):
        return False


def load_table(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Loads every result file under `paths` into one tidy DataFrame.

    df.attrs["contexts"] maps each file to its JSON context (L2 size, peak bandwidth, ...).
    """
    files = expand_paths(paths)
    rows: list[dict] = []
    contexts: dict[str, dict] = {}
    for f in files:
        rf = load_result(f)
        contexts[str(f)] = rf.context
        complete = run_is_complete(f)
        rows.extend({**r, "complete": complete} for r in _rows_for_file(rf))
    df = pd.DataFrame(rows)
    for c in BASE_COLUMNS:
        if c not in df.columns:
            df[c] = pd.Series(dtype="float64" if c in ("median", "min", "max", "spread_pct") else "object")
    df.attrs["contexts"] = contexts
    return df


def card_contexts(df: pd.DataFrame) -> dict[str, dict]:
    """One context per card (the last file's), for L2 size and peak bandwidth."""
    out: dict[str, dict] = {}
    for f, ctx in df.attrs.get("contexts", {}).items():
        out[card_of(ctx)] = ctx
    return out
