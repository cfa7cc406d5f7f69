"""Each card's headline figure per corner, from the same rows the corner sections show: dense BF16
and FP8 GEMM (the ceiling cases, burst and sustained), the HBM triad (largest array, L2 flushed),
pinned copies to and from the host, the slowest and fastest GPU pair per link type, allreduce busbw
at its largest message, the launch cost eager and graphed, the ridge point measured and on the
datasheet, energy per unit where the energy counter ran, and cost per unit where prices are given.

A figure a card lacks carries why (its case's status and message, else "not run"): the summary
never leaves a blank where a number belongs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from triaudit.core import numbers as N
from triaudit.core.specs import match_card
from triaudit.plan import prices as C
from triaudit.report import frames as F
from triaudit.report.sections.energy import burst_sustained_frame
from triaudit.report.sections.p2p import largest_size, p2p_frame
from triaudit.report.sections.stream import stream_frame
from triaudit.results.table import ResultSet, records

COMPUTE = (("bf16", "BF16"), ("fp8e4m3", "FP8 (E4M3)"))


@dataclass
class Value:
    median: float  # base units (FLOP/s, bytes/s, s, FLOP/byte, J, money)
    spread_pct: float | None = None  # the min-max range over repetitions, % of the median
    fraction: float | None = None  # of the datasheet (or of the link, for host copies)
    case: str = ""
    watts: float | None = None  # the case's mean power (energy counter)
    extra: str = ""  # what the figure needs beside it: "8 GPUs", "GPU0→GPU1"
    gpus: int = 1  # GPUs the figure spans (an allreduce's ranks)


@dataclass
class Row:
    key: str  # what other parts ask for: "bf16/burst", "triad", "h2d", "ridge", ...
    corner: str  # compute, bandwidth, movement, roofline, energy, cost
    label: str  # with its unit
    scale: float  # the unit the cells are written in, in base units
    values: dict[str, Value] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)  # card -> why it has no value
    money: str = ""  # a currency: cells are prices

    def cell(self, card: str) -> str:
        v = self.values.get(card)
        if v is None:
            return self.why.get(card, F.NOT_RUN)
        if self.money:
            return C.money(v.median, self.money)
        text = N.figure(v.median, self.scale, v.spread_pct, v.fraction)
        return f"{text} ({v.extra})" if v.extra else text


@dataclass
class Headlines:
    cards: list[str]
    rows: list[Row]

    def value(self, key: str, card: str) -> Value | None:
        row = next((r for r in self.rows if r.key == key), None)
        return None if row is None else row.values.get(card)

    def why(self, key: str, card: str) -> str:
        row = next((r for r in self.rows if r.key == key), None)
        return F.NOT_RUN if row is None else row.why.get(card, F.NOT_RUN)

    def table(self) -> pd.DataFrame:
        """Cards as columns, (corner, figure) as rows."""
        idx = pd.MultiIndex.from_tuples([(r.corner, r.label) for r in self.rows], names=["corner", "figure"])
        return pd.DataFrame([[r.cell(c) for c in self.cards] for r in self.rows], index=idx, columns=self.cards)


def _spread(r) -> float | None:
    sp = r.get("spread_pct", math.nan)
    return None if sp is None or (isinstance(sp, float) and math.isnan(sp)) else float(sp)


def _pick(rows: pd.DataFrame, largest: str | None = None, how: str = "max") -> list[dict]:
    """Per card, the row with the highest (`how`="min": lowest) median, among its rows at the
    largest `largest` where given: one groupby over every card, not a filter per card."""
    if rows.empty:
        return []
    if largest is not None:
        rows = rows[rows[largest] == rows.groupby("card", observed=True)[largest].transform("max")]
    best = rows.groupby("card", observed=True)["median"]
    idx = (best.idxmax() if how == "max" else best.idxmin()).dropna()
    return records(rows.loc[idx])


def _reasons(missing: pd.DataFrame) -> dict[str, str]:
    """card -> what its first case that did not measure says (skipped: ..., error: ...)."""
    if missing.empty:
        return {}
    first = missing.drop_duplicates("card")
    return {
        str(c): F.status_text(str(st), str(m)) for c, st, m in zip(first["card"], first["status"], first["message"])
    }


def _fill_why(row: Row, cards: list[str], missing: pd.DataFrame) -> Row:
    said = _reasons(missing)
    for c in cards:
        if c not in row.values:
            row.why[c] = said.get(c, F.NOT_RUN)
    return row


def _compute_rows(df: pd.DataFrame, bs: pd.DataFrame, cards: list[str]) -> list[Row]:
    g = bs[bs["kind"] == "gemm"] if not bs.empty else bs
    gm = F.missing(df, "gemm")
    out = []
    for prec, name in COMPUTE:
        for mode in ("burst", "sustained"):
            row = Row(f"{prec}/{mode}", "compute", f"{name} dense GEMM, {mode} (TFLOP/s)", 1e12)
            sel = g[(g["name"] == prec) & (g["mode"] == mode)] if not g.empty else g
            for r in records(sel):
                w = r["counters"].get("watts_mean") if isinstance(r.get("counters"), dict) else None
                row.values[r["card"]] = Value(
                    float(r["median"]),
                    _spread(r),
                    F.spec_fraction(float(r["median"]), r["card"], "compute", prec),
                    r["case"],
                    float(w[0]) if w else None,
                )
            miss = gm[(gm["op"] == "ceiling") & (gm["variant"] == prec) & gm["case"].str.endswith("/" + mode)]
            out.append(_fill_why(row, cards, miss if not gm.empty else gm))
    return out


def _triad_row(df: pd.DataFrame, bs: pd.DataFrame, cards: list[str]) -> Row:
    row = Row("triad", "bandwidth", "HBM: STREAM triad, largest array, L2 flushed (TB/s)", 1e12)
    s = stream_frame(df)
    if not s.empty:
        cold = s[(s["op"] == "triad") & (s["cache"] == "cold")]
        big = cold[cold["bytes"] == cold.groupby("card", observed=True)["bytes"].transform("max")]
        # fp32 where measured (the STREAM default), else the type the card has
        big = big.assign(other_type=big["type"].astype(str) != "fp32", neg=-big["median"])
        for r in records(big.sort_values(["card", "other_type", "neg"]).drop_duplicates("card")):
            card = str(r["card"])
            row.values[card] = Value(
                float(r["median"]), _spread(r), F.spec_fraction(float(r["median"]), card, "bandwidth"), r["case"]
            )
    if not bs.empty:  # the triad's power, where its energy counter ran
        for r in records(bs[(bs["kind"] == "stream") & (bs["mode"] == "burst")]):
            v = row.values.get(r["card"])
            w = r["counters"].get("watts_mean")
            if v is not None and w and v.watts is None:
                v.watts = float(w[0])
    miss = F.missing(df, "stream")
    if not miss.empty:
        miss = miss[(miss["op"] == "triad") & (miss["cache"] == "cold")]
    return _fill_why(row, cards, miss)


def _copy_rows(df: pd.DataFrame, cards: list[str]) -> list[Row]:
    bw = F.with_int(F.metric(df, "memcpy", "bytes_per_second"), "bytes")
    miss = F.missing(df, "memcpy")
    out = []
    for op, label in (("h2d", "host → device"), ("d2h", "device → host")):
        row = Row(op, "movement", f"pinned copy {label}, largest (GB/s, % of the PCIe link)", 1e9)
        sel = bw[(bw["op"] == op) & (bw["variant"] == "pinned")] if not bw.empty else bw
        for r in _pick(sel, largest="bytes"):
            card = str(r["card"])
            row.values[card] = Value(
                float(r["median"]), _spread(r), F.spec_fraction(float(r["median"]), card, "pcie"), r["case"]
            )
        m = miss[(miss["op"] == op) & (miss["variant"] == "pinned")] if not miss.empty else miss
        out.append(_fill_why(row, cards, m))
    return out


def _p2p_rows(rs: ResultSet, cards: list[str]) -> list[Row]:
    frame = p2p_frame(rs.table, rs.contexts)
    if frame.empty:
        return []
    big = largest_size(frame)
    test = "ce uni" if (big["test"] == "ce uni").any() else sorted(big["test"].unique())[0]
    big = big[big["test"] == test]
    out = []
    for link in sorted(big["link"].unique()):
        for which, how in (("slowest", "min"), ("fastest", "max")):
            row = Row(f"p2p/{link}/{which}", "movement", f"GPU↔GPU over {link}, {which} pair ({test}, GB/s)", 1e9)
            for r in _pick(big[big["link"] == link], how=how):
                row.values[str(r["card"])] = Value(
                    float(r["median"]), _spread(r), None, r["case"], extra=f"GPU{r['src']}→GPU{r['dst']}"
                )
            measured = set(big["card"].astype(str))
            for c in cards:
                if c not in row.values:
                    row.why[c] = f"no {link} link" if c in measured else F.NOT_RUN
            out.append(row)
    return out


def _allreduce_row(df: pd.DataFrame, cards: list[str]) -> Row:
    row = Row("allreduce", "movement", "NCCL allreduce busbw, largest message (GB/s)", 1e9)
    bus = F.allreduce_rows(df, "busbw")
    if not bus.empty:
        ranks = F.metric(df, "allreduce", "ranks")[["file", "case", "median"]].rename(columns={"median": "ranks"})
        bus = bus.merge(ranks, on=["file", "case"], how="left")
        many = bus[bus["ranks"].fillna(1) > 1]
        for r in _pick(many, largest="bytes"):
            row.values[str(r["card"])] = Value(
                float(r["median"]),
                _spread(r),
                None,
                r["case"],
                extra=f"{int(r['ranks'])} GPUs, {N.size(r['bytes'])}",
                gpus=int(r["ranks"]),
            )
        one_gpu = set(bus["card"].astype(str))
        for c in cards:
            if c not in row.values and c in one_gpu:
                row.why[c] = "one GPU: no bus between GPUs to measure"
    return _fill_why(row, cards, F.missing(df, "allreduce"))


def _launch_rows(df: pd.DataFrame, cards: list[str]) -> list[Row]:
    per = F.with_int(F.metric(df, "launch", "per_kernel_s"), "kernels")
    out = []
    miss = F.missing(df, "launch")
    for variant, label in (("eager", "eager"), ("graph", "CUDA Graph")):
        row = Row(f"launch/{variant}", "movement", f"kernel launch, {label} (µs per kernel, chain fit)", 1e-6)
        sel = per[per["variant"] == variant] if not per.empty else per
        fits = _pick(sel[sel["op"] == "chain_fit"], how="min") if not sel.empty else []
        # older runs, without the fit: the longest chain's per-kernel time
        chains = _pick(sel[sel["op"] == "chain"], largest="kernels", how="min") if not sel.empty else []
        for r in chains + fits:  # a card's fit, where it has one, replaces its chain
            row.values[str(r["card"])] = Value(float(r["median"]), _spread(r), None, r["case"])
        out.append(_fill_why(row, cards, miss[miss["variant"] == variant] if not miss.empty else miss))
    return out


def _ridge_rows(rows: list[Row], cards: list[str]) -> list[Row]:
    flops = next(r for r in rows if r.key == "bf16/burst")
    triad = next(r for r in rows if r.key == "triad")
    measured = Row("ridge", "roofline", "ridge point, measured: BF16 burst ÷ HBM triad (FLOP/byte)", 1.0)
    sheet = Row("ridge/datasheet", "roofline", "ridge point, datasheet: BF16 peak ÷ HBM peak (FLOP/byte)", 1.0)
    for c in cards:
        f, b = flops.values.get(c), triad.values.get(c)
        if f and b:
            measured.values[c] = Value(f.median / b.median)
        else:
            measured.why[c] = "needs " + " and ".join(
                n for n, v in (("the BF16 ceiling", f), ("the HBM triad", b)) if v is None
            )
        spec = match_card(c)
        peak = spec.peak_flops("bf16") if spec else None
        if spec and peak and spec.mem_bw:
            sheet.values[c] = Value(peak / spec.mem_bw)
        else:
            sheet.why[c] = "no datasheet for this card"
    return [measured, sheet]


def _energy_rows(rows: list[Row], cards: list[str]) -> list[Row]:
    out = []
    for key, label in (
        ("bf16/burst", "BF16 burst GEMM, energy per FLOP (pJ)"),
        ("triad", "HBM triad, energy per byte moved (pJ)"),
    ):
        src = next(r for r in rows if r.key == key)
        row = Row(f"energy/{key}", "energy", label, 1e-12)
        for c in cards:
            v = src.values.get(c)
            if v is not None and v.watts:
                row.values[c] = Value(v.watts / v.median, extra=f"{v.watts:,.0f} W")
            else:
                row.why[c] = "no energy counter on this run" if v is not None else src.why.get(c, F.NOT_RUN)
        if row.values:
            out.append(row)
    return out


def _cost_rows(cost: pd.DataFrame | None, currency: str, cards: list[str]) -> list[Row]:
    """From the cost section's records (sections/cost.py): what an hour of the card buys."""
    if cost is None or cost.empty:
        return []
    out = []
    for key, figure, name, mode, label in (
        ("cost/pflops", "PFLOP/s-hour", "bf16", "burst", "per PFLOP/s-hour of BF16 GEMM (burst)"),
        ("cost/tbps", "TB/s-hour", "fp32", "burst", "per TB/s-hour of HBM triad"),
        ("cost/decode", "million decode tokens", None, "batch 1", "per million decode tokens, batch 1"),
    ):
        sel = cost[(cost["figure"] == figure) & (cost["mode"] == mode)]
        if name is not None:
            sel = sel[sel["name"] == name]
        if sel.empty:
            continue
        what = label if name is not None else f"{label} ({sel['name'].iloc[0]})"
        row = Row(key, "cost", f"{currency} {what}", 1.0, money=currency)
        for r in records(sel):
            row.values.setdefault(str(r["card"]), Value(float(r["value"])))
        for c in cards:
            if c not in row.values:
                row.why[c] = "no price for this card"
        out.append(row)
    return out


def headlines(rs: ResultSet, cost: pd.DataFrame | None = None, currency: str = "USD") -> Headlines:
    """The headline rows of every card in `rs`; `cost`: the cost section's records (with --prices)."""
    df = rs.table
    cards = sorted(str(c) for c in df["card"].dropna().unique() if str(c) != "no GPU") if not df.empty else []
    bs = burst_sustained_frame(df)  # the ceilings and the triad pair, with their power
    rows = _compute_rows(df, bs, cards) + [_triad_row(df, bs, cards)]
    rows += _copy_rows(df, cards) + _p2p_rows(rs, cards) + [_allreduce_row(df, cards)] + _launch_rows(df, cards)
    rows += _ridge_rows(rows, cards) + _energy_rows(rows, cards) + _cost_rows(cost, currency, cards)
    # A card none of whose corners has a headline figure (a soak alone, a plain Google Benchmark
    # file) has no column: a column of "not run" would say nothing.
    measured = [c for c in cards if any(c in r.values for r in rows if r.corner not in ("roofline", "cost"))]
    if measured != cards:
        for r in rows:
            for c in set(cards) - set(measured):
                r.values.pop(c, None)
                r.why.pop(c, None)
        rows = [r for r in rows if r.values or r.corner not in ("roofline", "energy", "cost")]
    return Headlines(measured, rows)
