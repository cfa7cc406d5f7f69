"""Report section "Summary": the triangle at a glance, first on the page and also summary.md.
Each card's headline figure per corner (headline.py), which corner binds named workloads
(workloads.py), a sentence per pair of cards (pairs.py) and the triangle picture (triangle.py)."""

from __future__ import annotations

import pandas as pd

from triaudit.report.section import Section
from triaudit.report.sections.summary import pairs, triangle, workloads
from triaudit.report.sections.summary.headline import headlines
from triaudit.results.case_info import SYNTHETIC_BANNER, synthetic_in
from triaudit.results.table import ResultSet

HEADLINE_CAPTION = (
    "Headline figures per card: median over repetitions ± half the min–max range, (% of the datasheet; "
    "for host copies, of the PCIe link)"
)


def summary_section(rs: ResultSet, cost: pd.DataFrame | None = None, currency: str = "USD") -> Section:
    """`cost`: the cost section's records (report --prices), for cost per unit."""
    sec = Section("summary", "Summary: the triangle at a glance")
    if synthetic_in(rs.table):
        sec.banner = SYNTHETIC_BANNER
    h = headlines(rs, cost, currency)
    if not h.cards:
        return sec
    sec.tables.append((HEADLINE_CAPTION, h.table()))
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
