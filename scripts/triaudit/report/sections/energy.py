"""The report's Energy section: what each card does in its first seconds (burst) and what it holds
(sustained), with clock, power, temperature and the window each figure rests on; perf per watt from
the executables' energy counters; throughput against watts per card.

Cases (benchmarks/gemm, benchmarks/stream; README "How every case is measured"):
  burst      gemm/ceiling/<precision>/burst; stream/triad/<type>/cache:cold/bytes:<N> (the ordinary cold
             triad, at the sustained case's size, else the largest)
  sustained  gemm/ceiling/<precision>/sustained; stream/triad_sustained/<type>/cache:cold/bytes:<N>
Energy counters (per case, once the case's windows add up to >= 1 s): joules_per_op, watts_mean,
flops_per_joule / bytes_per_joule / busbw_per_watt; energy_window_s always. Where a case has none,
the reason is the one its label gives (energy_window_too_short (...), unknown (NVML: ...)), read
from the result file; an older file without energy counters says so.
"""

from __future__ import annotations

import math

import pandas as pd

from triaudit import corners as registry
from triaudit.core import numbers as N
from triaudit.core.palette import card_gid
from triaudit.report import frames as F
from triaudit.report.section import VARIANT_STYLES, Section, card_colors, colors_for, panels
from triaudit.results.table import ResultSet, card_contexts, records

DISAGREE = 0.10  # counter and power samples further apart than this are named (the executables' threshold)


def _reason(label: str) -> str:
    """The label's 'energy <why>' part (measure.cpp report_loop), without 'energy '."""
    for part in label.split("; "):
        if part.startswith("energy ") and not part.startswith("energy counter ("):
            return part.removeprefix("energy ")
    return ""


class Labels:
    """Why a case has no energy figure: the label's 'energy ...' part, read from its result file
    (the tidy table keeps no labels); else the context's energy_counter when it is unknown."""

    def __init__(self, contexts: dict[str, dict]):
        self._files: dict[str, dict[str, str]] = {}
        self._contexts = contexts

    def _labels(self, file: str) -> dict[str, str]:
        if file not in self._files:
            from triaudit.results.gbench import LoadError, load_result

            try:
                rf = load_result(file)
                got: dict[str, str] = {}
                for r in rf.runs:  # the repetition that says why, where one does (the first ones usually)
                    if r.run_type == "iteration" and r.label and (r.case not in got or not _reason(got[r.case])):
                        got[r.case] = r.label
                self._files[file] = got
            except (LoadError, OSError):
                self._files[file] = {}
        return self._files[file]

    def why(self, file: str, case: str) -> str:
        # The context answers without reading the file again when the board has no counter or the
        # file predates energy (a hundred cards' files are not parsed twice for that).
        counter = str(self._contexts.get(file, {}).get("energy_counter", ""))
        if counter.startswith("unknown"):
            return counter
        if not counter:
            return "no energy counter in this result (written before triaudit measured energy)"
        return _reason(self._labels(file).get(case, "")) or "no energy figure in this result"


def _num(m: dict, k: str, i: int = 0) -> float:
    v = m.get(k)
    return v[i] if v is not None else math.nan


def _f(v: float) -> str:
    """A counter's reading: whole degrees and watts as the counter gave them, others in the report's style."""
    if v is None or math.isnan(v):
        return ""
    return f"{v:,.0f}" if float(v).is_integer() else N.number(v)


def _table(
    rows: pd.DataFrame,
    labels: Labels,
    unit: str,
    scale: float,
    eff: str,
    eff_unit: str,
    eff_scale: float,
    missing: dict[tuple[str, str, str], str] | None = None,
    only: tuple[str, ...] = (),
):
    """`missing`: (card, name, mode) -> why that card has no such case (skipped, failed); `only`:
    the figures (rows) wanted, by name ("power (W)", ...; the unit and efficiency rows are "rate"
    and "efficiency"), all by default."""
    cards = sorted(rows["card"].unique())
    index, data = [], []
    order = {"burst": 0, "sustained": 1}
    for (name, mode), grp in sorted(rows.groupby(["name", "mode"]), key=lambda x: (x[0][0], order[x[0][1]])):
        per_card = {r["card"]: r for r in records(grp)}
        figures: dict[str, dict] = {
            k: {}
            for k in (unit, "SM clock (MHz)", "power (W)", "temperature (°C)", "window", "energy per op (J)", eff_unit)
        }
        for card, r in per_card.items():
            c = r["counters"]
            figures[unit][card] = F.cell(r, scale) + (" TOP/s" if name == "int8" and unit == "TFLOP/s" else "")
            figures["SM clock (MHz)"][card] = _f(_num(c, "sm_clock_mean_mhz"))
            watts, smean, smax = (
                _num(c, "watts_mean"),
                _num(c, "power_samples_mean_w"),
                _num(c, "power_samples_max_w", 2),
            )
            samples = f"samples mean {_f(smean)}, max {_f(smax)}" if not math.isnan(smean) else ""
            if not math.isnan(watts):
                figures["power (W)"][card] = f"{_f(watts)} (counter)" + (f"; {samples}" if samples else "")
            else:
                figures["power (W)"][card] = samples
            t0, t1 = _num(c, "temperature_start_c", 1), _num(c, "temperature_end_c", 2)
            figures["temperature (°C)"][card] = (
                f"{_f(t0)} → {_f(t1)}" if not (math.isnan(t0) and math.isnan(t1)) else ""
            )
            ew = _num(c, "energy_window_s", 2)
            win = ""
            if mode == "sustained":  # each part only where the result carries its counter
                w, held = _num(c, "window_s"), _num(c, "sustained_elapsed_s", 2)
                parts = ([f"{_f(w)} s window"] if not math.isnan(w) else []) + (
                    [f"load held {_f(held)} s"] if not math.isnan(held) else []
                )
                win = ", ".join(parts) or "window not recorded in this result"
            if not math.isnan(ew) and ew > 0:  # 0: the counter could not be read at all
                win += ("; " if win else "") + f"energy over {ew:.1f} s"
            figures["window"][card] = win
            if "joules_per_op" in c:
                got, of = c["joules_per_op"][3], r["reps"]
                # The energy account accumulates over repetitions: the first ones can fall short of 1 s.
                part = (
                    f" ({got:.0f} of {of:.0f} repetitions; the others: {labels.why(r['file'], r['case'])})"
                    if of == of and 0 < got < of
                    else ""
                )
                figures["energy per op (J)"][card] = f"{N.number(_num(c, 'joules_per_op'))}{part}"
                e = _num(c, eff)
                figures[eff_unit][card] = N.number(e / eff_scale) if not math.isnan(e) else "not recorded"
            else:
                why = labels.why(r["file"], r["case"])
                figures["energy per op (J)"][card] = f"not known: {why}"
                figures[eff_unit][card] = "not known"
        first = True
        for what, cells in figures.items():
            kind = "rate" if what == unit else "efficiency" if what == eff_unit else what
            if only and kind not in only:
                continue
            if any(cells.values()):
                index.append((name, mode, what))
                row = {}
                for card in cards:
                    if card not in per_card:  # the card has no such case: why, once, then a dash
                        why = (missing or {}).get((card, name, mode), "not run")
                        row[card] = why if first else "—"
                    else:
                        row[card] = cells.get(card) or "not recorded"
                data.append(row)
                first = False
    return pd.DataFrame(data, index=pd.MultiIndex.from_tuples(index, names=["case", "mode", "figure"]), columns=cards)


def missing_ceilings(df: pd.DataFrame) -> dict[tuple[str, str, str], str]:
    """(card, precision, mode) -> the status and message of a GEMM ceiling case that did not measure."""
    m = F.missing(df, "gemm")
    if m.empty:
        return {}
    m = m[m["op"] == "ceiling"]
    out = {}
    for r in records(m):
        mode = str(r["case"]).rsplit("/", 1)[-1]
        msg = str(r["message"] or "").removeprefix("skipped: ").removeprefix("error: ")
        out[(str(r["card"]), str(r["variant"]), mode)] = f"{r['status']}: {msg}" if msg else str(r["status"])
    return out


def _context_table(df: pd.DataFrame, cards: list[str], contexts: dict[str, dict]) -> pd.DataFrame:
    ctxs = card_contexts(df, contexts)
    rows: dict[str, dict] = {
        "power limit enforced (W)": {},
        "power limit default (W)": {},
        "temperature at start (°C)": {},
        "energy counter": {},
    }
    for card in cards:
        c = ctxs.get(card, {})
        enforced, default = str(c.get("power_limit_enforced_w", "")), str(c.get("power_limit_default_w", ""))
        capped = ""
        try:
            if float(enforced) < float(default):
                capped = f" (capped below the default {default})"
        except ValueError:
            pass
        rows["power limit enforced (W)"][card] = enforced + capped
        rows["power limit default (W)"][card] = default
        rows["temperature at start (°C)"][card] = str(c.get("temperature_start_c", ""))
        rows["energy counter"][card] = str(c.get("energy_counter", "")) or "not recorded (older result)"
    t = pd.DataFrame(rows).T[cards] if cards else pd.DataFrame()
    t.index.name = "from the context"
    return t


def perf_per_watt_table(df: pd.DataFrame, bs: pd.DataFrame, labels: Labels) -> pd.DataFrame:
    """TFLOP/s per W (GEMM ceilings) and GB/s per W (STREAM triad, copies, collectives) from the
    energy counters: flops_per_joule = FLOP/s per W; bytes_per_joule, busbw_per_watt per 1e9."""
    entries: list[tuple[tuple, str, str]] = []  # ((corner, what, mode), card, cell)

    def add(key, r, counter, scale):
        v = r["counters"].get(counter, (math.nan,))[0]
        watts = r["counters"].get("watts_mean", (math.nan,))[0]
        rate = r.get("median", math.nan)
        if math.isnan(v) and watts > 0 and rate == rate:
            # The case's own rate and mean power (the per-watt counter is the one divided by the other).
            text = f"{N.number(rate / watts / scale)} (rate ÷ watts_mean)"
        elif not math.isnan(v):
            text = N.number(v / scale)
        else:
            text = f"not known: {labels.why(r['file'], r['case'])}"
        entries.append((key, r["card"], text))

    for r in records(bs):
        if r["kind"] == "gemm":
            add(
                (
                    "GEMM ceiling, TFLOP/s per W" + (" (TOP/s for int8)" if r["name"] == "int8" else ""),
                    r["name"],
                    r["mode"],
                ),
                r,
                "flops_per_joule",
                1e12,
            )
        else:
            add(
                (f"STREAM triad ({int(r['bytes']) * 3 / 2**30:g} GiB moved), GB/s per W", r["name"], r["mode"]),
                r,
                "bytes_per_joule",
                1e9,
            )
    sweeps = [("memcpy", "bytes_per_second", "bytes_per_joule", "copies (largest size), GB/s per W")] + [
        (c.name, "busbw", "busbw_per_watt", f"{c.collective} busbw (largest message), GB/s per W")
        for c in registry.collectives()
    ]
    for corner, rate, counter, what in sweeps:
        if corner != "memcpy":  # per algorithm; the GPU-count sweep is not a message-size case
            rows = F.collective_rows(df, corner, rate)
            key = F.COLLECTIVE_KEY
        else:
            rows = F.with_int(F.metric(df, corner, rate), "bytes")
            key = ["op", "variant"]
        if rows.empty or "bytes" not in rows:
            continue
        rows = rows[rows["bytes"] == rows.groupby(["card", *key])["bytes"].transform("max")]
        m = F.energy_measures(df, rows)
        for r in records(rows[["card", "file", "case", "median", *key]]):
            r["counters"] = m.get((r["file"], r["case"]), {})
            name = f"{r['op']} {r['variant']}" + (f" algo:{r['algo']}" if r.get("algo") else "")
            add((what, name, "largest"), r, counter, 1e9)
    if not entries:
        return pd.DataFrame()
    cards = sorted({c for _, c, _ in entries})
    keys = list(dict.fromkeys(k for k, _, _ in entries))
    cell = {(k, c): v for k, c, v in entries}
    why = missing_ceilings(df)
    t = pd.DataFrame(
        [{c: cell.get((k, c)) or why.get((c, k[1], k[2]), "not run") for c in cards} for k in keys],
        index=pd.MultiIndex.from_tuples(keys, names=["figure", "case", "mode"]),
        columns=cards,
    )
    return t


def disagreement_table(bs: pd.DataFrame) -> pd.DataFrame:
    entries = {}
    for r in records(bs):
        c = r["counters"]
        w, smp = _num(c, "watts_mean"), _num(c, "power_samples_mean_w")
        if not (math.isnan(w) or math.isnan(smp)) and w > 0 and abs(smp - w) / w > DISAGREE:
            entries[(r["case"], r["card"])] = f"counter {w:.0f} W, samples {smp:.0f} W ({(smp - w) / w * 100:+.0f}%)"
    if not entries:
        return pd.DataFrame()
    cases = list(dict.fromkeys(k for k, _ in entries))
    cards = sorted({c for _, c in entries})
    t = pd.DataFrame([{c: entries.get((k, c), "") for c in cards} for k in cases], index=cases, columns=cards)
    t.index.name = "case"
    return t


def throughput_watts_figure(bs: pd.DataFrame, df: pd.DataFrame, contexts: dict[str, dict], colors=None):
    """Throughput against the energy counter's mean power per card: colour = card (the report's
    one colour per card), marker = precision or type, burst filled, sustained hollow, an arrow
    between them; the enforced power limit dotted in the card's colour. Every name is in the
    legends below the panels, none written over the points."""
    from matplotlib.lines import Line2D

    pts = bs[[("watts_mean" in c) for c in bs["counters"]]] if not bs.empty else bs
    if pts.empty:
        return None

    kinds = [k for k in ("gemm", "stream") if k in set(pts["kind"])]
    fig, axes = panels(len(kinds), 5.0, 4.2)
    cards = sorted(pts["card"].unique())
    colors = colors_for(pts, colors)
    names = sorted(set(pts["name"]))
    markers = {n: VARIANT_STYLES[i % len(VARIANT_STYLES)][1] for i, n in enumerate(names)}
    ctxs = card_contexts(df, contexts)
    limits = {}
    for ax, kind in zip(axes, kinds):
        sub = pts[pts["kind"] == kind]
        scale, unit = (1e12, "TFLOP/s (TOP/s for int8)") if kind == "gemm" else (1e9, "GB/s")
        for card in cards:
            color, gid = colors[card], card_gid(card)
            mine = sub[sub["card"] == card]
            for name, grp in mine.groupby("name"):
                xy = {r["mode"]: (r["counters"]["watts_mean"][0], r["median"] / scale) for r in records(grp)}
                for mode, (x, y) in xy.items():
                    ax.scatter(
                        [x],
                        [y],
                        s=36,
                        marker=markers[name],
                        color=color,
                        facecolors=color if mode == "burst" else "none",
                        zorder=3,
                        gid=gid,
                    )
                if len(xy) == 2:
                    ax.annotate(
                        "",
                        xy=xy["sustained"],
                        xytext=xy["burst"],
                        arrowprops={"arrowstyle": "->", "color": color, "alpha": 0.6},
                    )
            try:
                limit = float(ctxs.get(card, {}).get("power_limit_enforced_w", "nan"))
            except ValueError:
                limit = math.nan
            if not math.isnan(limit):
                limits[card] = limit
                ax.axvline(limit, color=color, linestyle=(0, (1, 2)), linewidth=1, alpha=0.8, gid=gid)
        ax.set_xlabel("mean power, energy counter (W)")
        ax.set_ylabel(unit)
        ax.set_title("GEMM ceilings" if kind == "gemm" else "STREAM triad, largest size")
        ax.grid(True, alpha=0.3)
    handles = [Line2D([], [], color=colors[c], linewidth=3) for c in cards]
    labels = [c + (f" (limit {limits[c]:.0f} W, dotted)" if c in limits else "") for c in cards]
    handles += [Line2D([], [], color="black", marker=markers[n], linestyle="", markersize=5) for n in names]
    labels += names
    handles += [
        Line2D([], [], color="black", marker="o", linestyle="", markersize=5),
        Line2D([], [], color="black", marker="o", markerfacecolor="none", linestyle="", markersize=5),
    ]
    labels += ["burst (filled)", "sustained (hollow)"]
    ncol = 3
    fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False, fontsize=7)
    rows = -(-len(labels) // ncol)
    fig.suptitle("Throughput against power: burst (filled) → sustained (hollow)", fontsize=10)
    h = fig.get_size_inches()[1]
    fig.set_size_inches(fig.get_size_inches()[0], h + 0.18 * rows)
    fig.set_layout_engine("tight", rect=(0, (0.25 + 0.18 * rows) / (h + 0.18 * rows), 1, 1))
    return fig


def _csv(bs: pd.DataFrame, labels: Labels) -> pd.DataFrame:
    recs = []
    for r in records(bs):
        c = r["counters"]
        rec = {
            "card": r["card"],
            "case": r["case"],
            "kind": r["kind"],
            "name": r["name"],
            "mode": r["mode"],
            "rate": r["median"],
            "rate_metric": r["metric"],
            "spread_pct": r["spread_pct"],
            "reps": r["reps"],
        }
        for k in F.ENERGY_METRICS:
            rec[k] = _num(c, k)
        rec["energy_unknown_reason"] = "" if "joules_per_op" in c else labels.why(r["file"], r["case"])
        recs.append(rec)
    return pd.DataFrame(recs)


def energy_section(rs: ResultSet):
    df = rs.table
    sec = Section("energy", "Energy: burst and sustained, power, perf per watt (TFLOP/s: TOP/s for int8)")
    bs = F.burst_sustained_frame(df, rs.contexts)
    labels = Labels(rs.contexts)
    cards = sorted(df.loc[df["status"] == "ok", "card"].unique()) if not df.empty else []
    if df.empty or (bs.empty and not df["metric"].isin(["watts_mean", "energy_window_s"]).any()):
        return sec
    if cards:
        ctx = _context_table(df, cards, rs.contexts)
        if not ctx.empty and (ctx.replace("not recorded (older result)", "") != "").any().any():
            sec.tables.append(
                (
                    "Power limits and the energy counter (from each card's context: a card capped "
                    "below its default shows here)",
                    ctx,
                )
            )
    g = bs[bs["kind"] == "gemm"] if not bs.empty else bs
    details = ("SM clock (MHz)", "temperature (°C)", "window", "energy per op (J)")
    gemm_args = (g, labels, "TFLOP/s", 1e12, "flops_per_joule", "TFLOP/s per W", 1e12, missing_ceilings(df))
    if not g.empty:
        sec.tables.append(
            (
                "GEMM ceilings, burst vs sustained: throughput (TFLOP/s, TOP/s for int8; ± half range), power "
                "(energy counter; power samples), TFLOP/s per W (burst: right after the warm-up, the best "
                "shape; sustained: 8192³ back to back, the median over the window)",
                _table(*gemm_args, only=("rate", "power (W)", "efficiency")),
            )
        )
        sec.more.append(
            (
                "GEMM ceilings: mean SM clock, temperature (lowest start → highest end over the repetitions), "
                "the window, energy per operation",
                _table(*gemm_args, only=details),
            )
        )
    s = bs[bs["kind"] == "stream"] if not bs.empty else bs
    if not s.empty:
        sizes = sorted({int(b) * 3 for b in s["bytes"]})
        moved = " / ".join(f"{b / 2**30:g} GiB" for b in sizes)
        stream_args = (s, labels, "GB/s", 1e9, "bytes_per_joule", "GB/s per W", 1e9)
        sec.tables.append(
            (
                f"STREAM triad, L2 flushed, {moved} moved per triad: burst (the cold sweep's case) vs "
                "sustained (back to back over the window): GB/s, power, GB/s per W",
                _table(*stream_args, only=("rate", "power (W)", "efficiency")),
            )
        )
        sec.more.append(
            (
                f"STREAM triad ({moved}): mean SM clock, temperature, the window, energy per operation",
                _table(*stream_args, only=details),
            )
        )
    ppw = perf_per_watt_table(df, bs, labels)
    if not ppw.empty:
        sec.tables.append(
            (
                "Perf per watt from the energy counters (TFLOP/s per W = flops_per_joule ÷ 1e12; "
                "GB/s per W = bytes_per_joule or busbw_per_watt ÷ 1e9); 'not known' gives the reason",
                ppw,
            )
        )
    if not bs.empty:
        off = disagreement_table(bs)
        if not off.empty:
            sec.tables.append(
                (
                    f"Energy counter and power samples disagree by more than {DISAGREE:.0%} (the "
                    "counter integrates every millisecond; samples are NVML's ~1 s averages, taken "
                    "beside the clocks)",
                    off,
                )
            )
        drawn, note = F.plotted(bs)
        fig = throughput_watts_figure(drawn, df, rs.contexts, card_colors(df))
        if fig is not None:
            left = sorted(set(drawn["card"]) - {r["card"] for r in records(drawn) if "watts_mean" in r["counters"]})
            sec.figures.append(
                (
                    "throughput_vs_watts",
                    "Throughput against mean power per card (energy counter), "
                    "burst → sustained; dotted: the enforced power limit"
                    + note
                    + (f" (no energy figure, not drawn: {', '.join(left)})" if left else ""),
                    fig,
                )
            )
        sec.csv = _csv(bs, labels)
    return sec
