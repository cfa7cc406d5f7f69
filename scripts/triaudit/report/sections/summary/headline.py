"""Each card's headline figure per corner, as the corners declare them (corners/<name>.py) and the
one figure selector picks them (results/figures.py; `plan --run`, the gate and `triaudit figures`
quote the same): per precision the GEMM ceilings, burst and sustained, the HBM triad, pinned
copies to and from the host, the slowest and fastest GPU pair per link type, each collective's
busbw at its largest message, the launch cost eager and graphed; then the ridge point measured
and on the datasheet, energy per unit where the energy counter ran, and cost per unit where
prices are given.

A figure a card lacks carries why (its case's status and message, else "not run"): the summary
never leaves a blank where a number belongs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from triaudit import corners as registry
from triaudit.core import numbers as N
from triaudit.core import palette
from triaudit.core.specs import match_card
from triaudit.plan import prices as C
from triaudit.report import frames as F
from triaudit.results.figures import headline_figures, missing_reasons, with_role
from triaudit.results.table import ResultSet, records

ACCOUNTS = ("compute", "bandwidth", "movement")


@dataclass
class Value:
    median: float  # base units (FLOP/s, bytes/s, s, FLOP/byte, J, money)
    spread_pct: float | None = None  # the min-max range over repetitions, % of the median
    fraction: float | None = None  # of the datasheet (or of the link, for host copies)
    case: str = ""
    watts: float | None = None  # the case's mean power (energy counter)
    extra: str = ""  # what the figure needs beside it: "8 GPUs", "GPU0→GPU1"
    gpus: int = 1  # GPUs the figure spans (a collective's ranks)


@dataclass
class Row:
    key: str  # what other parts ask for: "bf16/burst", "triad", "h2d", "ridge", ...
    corner: str  # compute, bandwidth, movement, roofline, energy, cost
    label: str  # with its unit
    scale: float  # the unit the cells are written in, in base units
    values: dict[str, Value] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)  # card -> why it has no value
    money: str = ""  # a currency: cells are prices
    flags: dict[str, str] = field(default_factory=dict)  # card -> why its figure is implausible

    def cell(self, card: str) -> str:
        v = self.values.get(card)
        if v is None:
            return self.why.get(card, F.NOT_RUN)
        if self.money:  # the row's prices with the same decimals
            text = C.money(v.median, self.money, N.money_decimals([x.median for x in self.values.values()]))
            return f"{text} ({v.extra})" if v.extra else text
        text = N.figure(v.median, self.scale, v.spread_pct, v.fraction, self.flags.get(card, ""))
        return f"{text} ({v.extra})" if v.extra else text


@dataclass
class Headlines:
    cards: list[str]
    rows: list[Row]
    figures: pd.DataFrame | None = None  # the selector's rows (results/figures.py), every headline
    colors: dict[str, str] = field(default_factory=dict)  # the report's colour of each card (core/palette.py)

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


def _value(r: dict) -> Value:
    sp = r.get("spread_pct")
    spread = None if sp is None or (isinstance(sp, float) and math.isnan(sp)) else float(sp)
    frac = r.get("fraction")
    w = r.get("watts")
    extra, gpus = "", 1
    ranks = r.get("ranks")
    if ranks is not None and ranks == ranks and ranks > 1:
        gpus = int(ranks)
        extra = f"{gpus} GPUs, {N.size(r['bytes'])}" if r.get("bytes") == r.get("bytes") else f"{gpus} GPUs"
    elif r.get("link"):
        extra = f"GPU{int(r['src'])}→GPU{int(r['dst'])}"
    return Value(
        float(r["median"]),
        spread,
        None if frac is None or frac != frac else float(frac),
        str(r["case"]),
        None if w is None or w != w else float(w),
        extra,
        gpus,
    )


def _corner_rows(rs: ResultSet, figs: pd.DataFrame, cards: list[str]) -> list[Row]:
    """One row per shown headline (per link type for a per-link one), in the accounts' order."""
    out: list[Row] = []
    df = rs.table
    for corner, h in registry.headlines():
        if not h.shown:
            continue
        mine = figs[figs["corner"] == corner.name]
        if h.per_link:
            got = mine[mine["key"].str.endswith("/" + h.per_link)] if not mine.empty else mine
            measured = set(mine["card"].astype(str))
            for link in sorted(set(got["link"].astype(str))):
                key = h.key.format(link=link)
                row = Row(key, corner.account, h.label.format(link=link), h.scale)
                for r in records(got[got["key"] == key]):
                    row.values[str(r["card"])] = _value(r)
                for c in cards:
                    if c not in row.values:
                        row.why[c] = f"no {link} link" if c in measured else F.NOT_RUN
                _flag_link(row, link)
                out.append(row)
            continue
        row = Row(h.key, corner.account, h.label, h.scale)
        for r in records(mine[mine["key"] == h.key]):
            row.values[str(r["card"])] = _value(r)
        if h.min_ranks:  # a card that ran the collective on one GPU only has no bus to show
            ran = set(df.loc[(df["corner"] == corner.name).to_numpy(), "card"].astype(str)) if not df.empty else set()
            for c in cards:
                if c not in row.values and c in ran:
                    row.why[c] = "one GPU: no bus between GPUs to measure"
        said = missing_reasons(df, h)
        for c in cards:
            if c not in row.values and c not in row.why:
                row.why[c] = F.status_text(*said[c]) if c in said else F.NOT_RUN
        limit = LIMITS.get(h.datasheet)
        for c, v in row.values.items():
            if limit and v.fraction is not None and v.fraction > 1 + TOLERANCE:
                row.flags[c] = f"above {limit}"
        if row.values or any(w != F.NOT_RUN for w in row.why.values()):  # a row of "not run" only says nothing
            out.append(row)
    _flag_sustained_above_burst(out)
    return sorted(out, key=lambda r: ACCOUNTS.index(r.corner))


# A figure above a hard limit is implausible: no copy beats its link, no triad its memory (a
# compute figure above the datasheet can be real: boost clocks above the datasheet's).
LIMITS = {"bandwidth": "the memory's datasheet bandwidth", "pcie": "the PCIe link's theoretical rate"}
TOLERANCE = 0.005  # rounding of the datasheet figures


def _link_limit(card: str, link: str) -> tuple[float, str] | None:
    """Bytes/s one direction of a GPU pair's link can carry (datasheet), and its name."""
    spec = match_card(card)
    if spec is None:
        return None
    if link.upper().startswith("NV") and spec.nvlink_gbps:
        return spec.nvlink_gbps / 2 * 1e9, "NVLink's datasheet rate per direction"
    if link.upper() in ("PIX", "PXB", "PHB", "NODE", "SYS"):
        return spec.pcie_gbps_per_direction * 1e9, "the PCIe link's theoretical rate"
    return None


def _flag_link(row: Row, link: str) -> None:
    for c, v in row.values.items():
        lim = _link_limit(c, link)
        if lim and v.median > lim[0] * (1 + TOLERANCE):
            row.flags[c] = f"above {lim[1]}"


def _flag_sustained_above_burst(rows: list[Row]) -> None:
    """A sustained figure above its burst beyond both spreads: one of them is wrong (a burst
    measured short, a clock that rose) and is said so, not quoted as it stands."""
    by_key = {r.key: r for r in rows}
    for r in rows:
        if not r.key.endswith("/sustained"):
            continue
        burst = by_key.get(r.key.removesuffix("/sustained") + "/burst")
        if burst is None:
            continue
        for c, v in r.values.items():
            b = burst.values.get(c)
            if b is None:
                continue
            margin = ((v.spread_pct or 0) + (b.spread_pct or 0)) / 200 + TOLERANCE
            if v.median > b.median * (1 + margin):
                r.flags[c] = "sustained above burst"


def _ridge_rows(rows: list[Row], cards: list[str]) -> list[Row]:
    """The measured ridge point: the headlines of roles ridge_flops and ridge_bytes (BF16 burst ÷
    HBM triad); the datasheet's beside it."""
    flops_key = with_role("ridge_flops")[0].key
    bytes_key = with_role("ridge_bytes")[0].key
    flops = next((r for r in rows if r.key == flops_key), Row(flops_key, "compute", "", 1.0))
    triad = next((r for r in rows if r.key == bytes_key), Row(bytes_key, "bandwidth", "", 1.0))
    measured = Row("ridge", "roofline", "ridge point, measured: BF16 burst ÷ memory triad (FLOP/byte)", 1.0)
    sheet = Row("ridge/datasheet", "roofline", "ridge point, datasheet: BF16 peak ÷ memory peak (FLOP/byte)", 1.0)
    for c in cards:
        f, b = flops.values.get(c), triad.values.get(c)
        if f and b:
            measured.values[c] = Value(f.median / b.median)
        else:
            measured.why[c] = "needs " + " and ".join(
                n for n, v in (("the BF16 ceiling", f), ("the memory triad", b)) if v is None
            )
        spec = match_card(c)
        peak = spec.peak_flops("bf16") if spec else None
        if spec and peak and spec.mem_bw:
            sheet.values[c] = Value(peak / spec.mem_bw)
        else:
            sheet.why[c] = "no datasheet for this card"
    return [measured, sheet]


def _energy_rows(rows: list[Row], cards: list[str]) -> list[Row]:
    """Energy per unit of the headlines the corners name (their `energy` figures)."""
    out = []
    for corner in registry.CORNERS:
        for e in corner.energy:
            src = next((r for r in rows if r.key == e.headline), None)
            if src is None:
                continue
            row = Row(f"energy/{e.headline}", "energy", e.label, e.scale)
            for c in cards:
                v = src.values.get(c)
                if v is not None and v.watts:
                    row.values[c] = Value(v.watts / v.median, extra=f"{v.watts:,.0f} W")
                else:
                    row.why[c] = "no energy counter on this run" if v is not None else src.why.get(c, F.NOT_RUN)
            if row.values:
                out.append(row)
    return sorted(out, key=lambda r: 0 if "FLOP" in r.label else 1)  # per FLOP, then per byte


def _cost_rows(cost: pd.DataFrame | None, currency: str, cards: list[str]) -> list[Row]:
    """From the cost section's records (sections/cost.py), the same figures it shows: what an hour
    of the card buys; decode at the batch each card serves (the cost section's own, not batch 1)."""
    if cost is None or cost.empty:
        return []
    out = []
    for key, figure, name, mode, label in (
        ("cost/pflops", "PFLOP/s-hour", "bf16", "burst", "per PFLOP/s-hour of BF16 GEMM (burst)"),
        ("cost/tbps", "TB/s-hour", "fp32", "burst", "per TB/s-hour of memory bandwidth (STREAM triad)"),
        ("cost/decode", "million decode tokens", None, SERVED, "per million decode tokens"),
    ):
        sel = cost[cost["figure"] == figure]
        sel = sel[sel["mode"] == mode] if mode != SERVED else sel[sel["mode"] != "batch 1"]
        if name is not None:
            sel = sel[sel["name"] == name]
        if sel.empty:
            continue
        what = label if name is not None else f"{label}, {decode_workload(sel)}"
        row = Row(key, "cost", f"{currency} {what}", 1.0, money=currency)
        for r in records(sel):
            extra = str(r["mode"]) if mode == SERVED else ""
            row.values.setdefault(str(r["card"]), Value(float(r["value"]), extra=extra))
        for c in cards:
            if c not in row.values:
                row.why[c] = "no price for this card"
        out.append(row)
    return out


SERVED = "the batch served"  # decode's cost at the batch that serves the most users (cost.py's own)


def decode_workload(cost: pd.DataFrame) -> str:
    """The decode workload the cost section priced, as its records name it."""
    r = cost.iloc[0]
    what = str(r.get("workload") or r["name"])
    return f"{what} at the batch each card serves"


def headlines(rs: ResultSet, cost: pd.DataFrame | None = None, currency: str = "USD") -> Headlines:
    """The headline rows of every card in `rs`; `cost`: the cost section's records (with --prices)."""
    df = rs.table
    cards = sorted(str(c) for c in df["card"].dropna().unique() if str(c) != "no GPU") if not df.empty else []
    figs = headline_figures(df, rs.contexts)
    rows = _corner_rows(rs, figs, cards)
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
    return Headlines(measured, rows, figs, palette.card_colors(df["card"].dropna().unique()) if not df.empty else {})
