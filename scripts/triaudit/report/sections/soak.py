"""Report section "Soak" (`triaudit soak`): one panel per GPU over the soak's hours — each
workload's rate, the power and the SM clock relative to their median, every event marked where
it happened — a table per GPU (windows, medians, the hottest window, throttled windows, its
verdict) and the table of events (SDC with the differing tile, uncorrected errors, XIDs, drift,
a load that stopped). Read from the soak's result files: their windows are repetitions, their
context carries the events (soak_events) and the verdict. Empty when no soak is among the runs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from triaudit.report.section import Section, pyplot
from triaudit.results.gbench import LoadError, load_result
from triaudit.results.table import ResultSet, plain

PANELS_PER_FIGURE = 8  # a node's GPUs in one figure; a larger soak gets one figure per eight
RATES = {"flops": (1e12, "TFLOP/s"), "bytes_per_second": (1e9, "GB/s")}
EVENT_COLOURS = {"sdc": "tab:red", "uncorrected error": "tab:purple", "xid": "tab:purple", "drift": "tab:orange"}


def _workload(case: str) -> str:
    parts = case.split("/")
    return parts[2] if len(parts) > 2 and parts[1] in ("stream", "copy") else (parts[1] if len(parts) > 1 else case)


def _power(c: dict) -> float:
    for k in ("watts_mean", "power_samples_mean_w"):
        if c.get(k, 0) > 0:
            return c[k]
    return math.nan


def series(path: Path, ctx: dict) -> pd.DataFrame:
    """One row per window and workload: hour since the soak began, the rate and the window's
    power, SM clock, temperature and throttle flag."""
    start = float(ctx.get("soak_start_unix_s") or "nan")
    rows = []
    for r in load_result(path).runs:
        if r.status != "ok" or r.run_type != "iteration":
            continue
        c = r.counters
        rate_key = next((k for k in RATES if k in c), None)
        if rate_key is None or "window_end_unix_s" not in c:
            continue
        rows.append(
            {
                "window": r.repetition_index,
                "hour": (c["window_end_unix_s"] - start) / 3600.0,
                "workload": _workload(r.case),
                "case": r.case,
                "rate": c[rate_key] / RATES[rate_key][0],
                "unit": RATES[rate_key][1],
                "power_w": _power(c),
                "sm_clock_mhz": c.get("sm_clock_mean_mhz", math.nan),
                "temperature_c": c.get("temperature_end_c", math.nan),
                "throttled": c.get("throttled", math.nan),
            }
        )
    return pd.DataFrame(rows)


def _events(ctx: dict) -> list[dict]:
    try:
        got = json.loads(str(ctx.get("soak_events") or "[]"))
    except ValueError:
        return [{"kind": "unreadable", "detail": "the file's soak_events is not JSON", "hour": math.nan}]
    return got if isinstance(got, list) else []


# Each line is relative to the soak's start as the drift check takes it (soak/drift.py): the
# median of the first BASELINE windows after the first (which holds the clocks' ramp).
SKIP, BASELINE = 1, 5


def _relative(hours: pd.Series, values: pd.Series) -> tuple[pd.Series, float]:
    """`values` in % of their baseline (in hour order), and the baseline."""
    v = values[hours.sort_values().index]
    base = v.iloc[SKIP : SKIP + BASELINE] if len(v) > SKIP else v
    med = base.median()
    return (values / med * 100 if med and med == med else values * math.nan), med


def panels(gpus: list[tuple[str, pd.DataFrame, list[dict]]], bound_pct: float | None):
    """One panel per GPU: rates, power and clock relative to the soak's start, over the hours;
    the drift bound shaded, each event a vertical line."""
    plt = pyplot()
    fig, axes = plt.subplots(len(gpus), 1, figsize=(11, 2.3 * len(gpus) + 0.6), sharex=True, squeeze=False)
    for ax, (label, s, events) in zip(axes[:, 0], gpus):
        lo, hi = 100.0, 100.0
        for load, g in s.groupby("workload", sort=False):
            g = g.sort_values("hour")
            rel, base = _relative(g["hour"], g["rate"])
            ax.plot(g["hour"], rel, lw=1, label=f"{load} (start {base:.4g} {g['unit'].iloc[0]})")
            lo, hi = min(lo, rel.min()), max(hi, rel.max())
        per_window = s.drop_duplicates("window").sort_values("hour")
        for col, what, unit, style in (("power_w", "power", "W", "k--"), ("sm_clock_mhz", "SM clock", "MHz", "k:")):
            if per_window[col].notna().any():
                rel, base = _relative(per_window["hour"], per_window[col])
                ax.plot(per_window["hour"], rel, style, lw=0.8, label=f"{what} (start {base:.4g} {unit})")
        if bound_pct:
            ax.axhspan(
                100 - bound_pct, 100, color="tab:green", alpha=0.08, lw=0, label=f"drift bound ({bound_pct:g} %)"
            )
            lo, hi = min(lo, 100 - 2 * bound_pct), max(hi, 100 + bound_pct)  # the bound in view, noise to scale
        for e in events:
            if e.get("hour") == e.get("hour"):
                colour = EVENT_COLOURS.get(str(e.get("kind")), "tab:gray")
                ax.axvline(e["hour"], color=colour, lw=1.2, alpha=0.8)
                ax.annotate(
                    str(e.get("kind", "")),
                    (e["hour"], 1.0),
                    xycoords=("data", "axes fraction"),
                    fontsize=7,
                    color=colour,
                    ha="left",
                    va="top",
                )
        ax.set_ylim(lo - 0.5, hi + 0.5)
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.set_title(label, fontsize=9)
        ax.set_ylabel("% of the start", fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    axes[-1, 0].set_xlabel("hours since the soak began")
    fig.set_layout_engine("tight")  # laid out as it is drawn
    return fig


def _gpu_row(s: pd.DataFrame, ctx: dict, events: list[dict]) -> dict:
    per_window = s.drop_duplicates("window") if not s.empty else s
    row = {
        "windows": f"{ctx.get('soak_windows_done', '?')} of {ctx.get('soak_windows', '?')}",
        "hours": f"{float(s['hour'].max()):.2f}" if not s.empty else "",
        "restarts": str(max(0, int(ctx.get("soak_segments", "1") or 1) - 1)),
    }
    for load, g in s.groupby("workload", sort=False) if not s.empty else []:
        row[f"{load} ({g['unit'].iloc[0]}, median, min)"] = f"{g['rate'].median():.4g}, {g['rate'].min():.4g}"
    if not s.empty:
        row["power (W, median)"] = (
            f"{per_window['power_w'].median():.0f}" if per_window["power_w"].notna().any() else "unknown"
        )
        row["temperature (°C, max)"] = (
            f"{per_window['temperature_c'].max():.0f}" if per_window["temperature_c"].notna().any() else "unknown"
        )
        row["throttled windows"] = str(int((per_window["throttled"] > 0).sum()))
    row["events"] = str(len(events))
    row["verdict"] = "clean" if not events else ", ".join(sorted({str(e.get("kind")) for e in events}))
    return row


def soak_section(rs: ResultSet) -> Section:
    sec = Section("soak", "Soak: every GPU under every load, outputs checked bit for bit")
    df = rs.table
    if df.empty:
        return sec
    rows = plain(df[df["corner"] == "soak"])
    if rows.empty:
        return sec
    labels = rows.drop_duplicates("file").set_index("file")["card"].to_dict()
    gpus, table, events, frames = [], {}, [], []

    def order(f: str) -> tuple:
        index = str(rs.contexts.get(f, {}).get("gpu_index", ""))
        return (labels[f].split(" · GPU ")[0], int(index) if index.isdigit() else -1, f)

    for f in sorted(labels, key=order):
        ctx = rs.contexts.get(f, {})
        if "soak_verdict" not in ctx:
            continue
        try:
            s = series(Path(f), ctx)
        except LoadError as e:
            sec.notes.append(str(e))
            continue
        ev = _events(ctx)
        label = labels[f] + (
            f" · GPU {ctx['gpu_index']}"
            if ctx.get("gpu_index") not in (None, "") and " · GPU " not in labels[f]
            else ""
        )
        gpus.append((label, s, ev))
        table[label] = _gpu_row(s, ctx, ev)
        events += [{"GPU": label, **e} for e in ev]
        frames.append(s.assign(gpu=label))
    if not gpus:
        return sec
    bound = next(
        (
            rs.contexts[f].get("soak_drift_bound_pct")
            for f in labels
            if rs.contexts.get(f, {}).get("soak_drift_bound_pct")
        ),
        None,
    )
    summary = pd.DataFrame(table)
    summary.index.name = "per GPU"
    sec.tables.append(
        (
            "Per GPU over the soak: every GEMM, triad and copy output hashed on the device over all its bits against "
            "its first output (checked against the FP64 reference), the GPU's golden output across restarts and every "
            "GPU of its model; drift: a rate more than "
            + (f"{bound} %" if bound else "its bound")
            + " below the start (medians of five windows) while the power stays",
            summary,
        )
    )
    if events:
        listed = pd.DataFrame(
            {
                "GPU": [e["GPU"] for e in events],
                "time (UTC)": [e.get("time_utc", "") for e in events],
                "hour": [f"{e.get('hour', math.nan):.2f}" for e in events],
                "kind": [e.get("kind", "") for e in events],
                "case": [e.get("case", "") for e in events],
                "tile": [", ".join(_tile(t) for t in e.get("tiles", [])) for e in events],
                "what": [e.get("detail", "") for e in events],
            }
        ).sort_values(["time (UTC)", "GPU"])
        sec.tables.append(("Events (each fails the soak)", listed.set_index(["GPU", "time (UTC)"])))
    else:
        none = pd.DataFrame(
            {"what": ["no output differed bit for bit, no uncorrected error or XID, no drift beyond its bound"]},
            index=pd.Index(["none"], name="events"),
        )
        sec.tables.append(("Events (each fails the soak)", none))
    for k in range(0, len(gpus), PANELS_PER_FIGURE):
        chunk = gpus[k : k + PANELS_PER_FIGURE]
        stem = "soak_timeline" + (f"_{k // PANELS_PER_FIGURE + 1}" if len(gpus) > PANELS_PER_FIGURE else "")
        caption = "Each GPU over the soak: rates, power and SM clock relative to the start; events marked"
        sec.figures.append((stem, caption, panels(chunk, float(bound) if bound else None)))
    sec.csv = pd.concat(frames, ignore_index=True)[
        [
            "gpu",
            "window",
            "hour",
            "workload",
            "case",
            "rate",
            "unit",
            "power_w",
            "sm_clock_mhz",
            "temperature_c",
            "throttled",
        ]
    ]
    return sec


def _tile(t: dict) -> str:
    return f"{t['tile']} (rows {t['row0']}-{t['row0'] + t['rows'] - 1}, cols {t['col0']}-{t['col0'] + t['cols'] - 1})"
