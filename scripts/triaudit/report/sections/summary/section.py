"""Report section "Summary": the triangle at a glance, first on the page and also summary.md.
Each card's headline figure per corner (headline.py), which corner binds named workloads
(workloads.py), a sentence per pair of cards (pairs.py) and the triangle picture (triangle.py)."""

from __future__ import annotations

import pandas as pd

from triaudit.report.section import Section
from triaudit.report.sections.summary import pairs, triangle, workloads
from triaudit.report.sections.summary.headline import Headlines, headlines
from triaudit.results.case_info import SYNTHETIC_BANNER, synthetic_in
from triaudit.results.table import ResultSet

# What a report without prices says where the per-dollar answer would be.
PER_DOLLAR_HINT = (
    "**Per dollar**: not shown, no prices given. `triaudit report --prices prices.toml` adds what an hour "
    "of each card buys (per PFLOP/s-hour, per TB/s-hour, per million decode tokens); the format is "
    "`scripts/prices.template.toml` (triaudit ships no prices: they are yours)."
)

PER_DOLLAR_SHOWN = 4  # cards named per figure beside the table, the cheapest; the table holds all

HEADLINE_CAPTION = (
    "Headline figures per card: median over repetitions ± half the min–max range, (% of the datasheet; "
    "for host copies, of the PCIe link)"
)


def per_dollar(h: Headlines, prices_name: str = "") -> list[str]:
    """The buyer's answer beside the headline table: per unit of money, the cheapest card first, in
    the cost rows' own cells (the cost section's figures: decode at the batch each card serves)."""
    rows = [r for r in h.rows if r.corner == "cost" and r.values]
    if not rows:
        return [PER_DOLLAR_HINT]
    said = []
    for r in rows:
        order = sorted(r.values, key=lambda c: r.values[c].median)
        what = r.label.split(" ", 1)[1]  # the label without its currency
        ranked = "; ".join(f"{c.removeprefix('NVIDIA ')} {r.cell(c)}" for c in order[:PER_DOLLAR_SHOWN])
        more = f"; {len(order) - PER_DOLLAR_SHOWN} more in the table" if len(order) > PER_DOLLAR_SHOWN else ""
        said.append(f"{what}: {ranked}{more}.")
    src = f" (your prices, `{prices_name}`)" if prices_name else " (your prices)"
    return [f"**Per dollar**{src}, cheapest first:"] + said + ["Every price and how it is made: the Cost section."]


def summary_section(
    rs: ResultSet, cost: pd.DataFrame | None = None, currency: str = "USD", prices_name: str = ""
) -> Section:
    """`cost`: the cost section's records (report --prices), for cost per unit; `prices_name`: the
    prices file's name, said with them."""
    sec = Section("summary", "Summary: the triangle at a glance")
    sec.folds = False  # the first screen
    if synthetic_in(rs.table):
        sec.banner = SYNTHETIC_BANNER
    h = headlines(rs, cost, currency)
    if not h.cards:
        return sec
    sec.tables.append((HEADLINE_CAPTION, h.table()))
    sec.aside = per_dollar(h, prices_name)
    answers = workloads.binding(h)
    t = pd.DataFrame([[answers[w.name][c] for c in h.cards] for w in workloads.WORKLOADS], columns=h.cards)
    t.index = pd.Index([w.name for w in workloads.WORKLOADS], name="workload")
    sec.tables.append(("Which corner binds, from the measured figures through triaudit plan's model", t))
    sec.paragraphs += ["The workloads of the table above:"] + [
        f"{w.name}: {w.parameters}." for w in workloads.WORKLOADS
    ]
    if len(h.cards) > 1:
        sec.paragraphs += ["Card against card (ratios of the headline medians):"] + pairs.sentences(h)
    fig, notes = triangle.triangle_figure(h)
    if fig is not None:
        caption = "The triangle: compute, bandwidth and movement of each card"
        sec.figures.append(("summary_triangle", caption + (f" ({'; '.join(notes)})" if notes else ""), fig))
    return sec
