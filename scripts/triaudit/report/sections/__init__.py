"""The report's sections, in the order the page shows them: each a function of the result table
giving a Section (report/section.py). The corners' own sections first, in the registry's order
(corners/: each corner names its section builder, SECTION_BUILDERS), with the measured roofline
beside the GEMM figures, the soak last of them; then the measurements beside peers and published
figures, the fleet, energy, health, a plain Google Benchmark file's own cases, and cost when prices
are given. The
summary comes first on the page."""

from __future__ import annotations

from collections.abc import Callable

from triaudit import corners as registry
from triaudit.report import frames as F
from triaudit.report.section import Section, card_colors
from triaudit.report.sections import (
    collective,
    cost,
    energy,
    fleet,
    gemm,
    health,
    launch,
    memcpy,
    other,
    p2p,
    peers,
    published,
    soak,
    stream,
)
from triaudit.report.sections.summary import section as summary
from triaudit.results.table import ResultSet

# A corner's section builder by the name the corner gives it: (result set, corner) -> its sections.
SECTION_BUILDERS: dict[str, Callable[[ResultSet, registry.Corner], list[Section]]] = {
    "stream": lambda rs, c: [stream.stream_section(rs)],
    "gemm": lambda rs, c: [gemm.gemm_section(rs)],
    "memcpy": lambda rs, c: [memcpy.memcpy_section(rs)],
    "launch": lambda rs, c: [launch.launch_section(rs)],
    "p2p": p2p.sections,
    "collective": collective.sections,
    "soak": lambda rs, c: [soak.soak_section(rs)],  # triaudit soak: each GPU over the hours, its events
}


def all_sections(rs: ResultSet, prices=None, on_figure: Callable[[str, object], None] | None = None) -> list[Section]:
    """Every section of the report of `rs`; `prices` (sections/cost.py Prices) adds the cost section.
    `on_figure(stem, figure)` is called for each figure as soon as its section has made it (the
    page hands it to the process that draws it while the next sections are built)."""
    secs: list[Section] = []

    def add(*built: Section) -> None:
        for sec in built:
            secs.append(sec)
            for stem, _, fig in sec.figures if on_figure is not None else ():
                on_figure(stem, fig)

    for corner in registry.CORNERS:
        add(*SECTION_BUILDERS[corner.section](rs, corner))
        if corner.name == "gemm":
            drawn, note = F.plotted(rs.table)
            fig = gemm.roofline_figure(drawn, card_colors(rs.table))
            if fig is not None:
                next(s for s in secs if s.key == "gemm").figures.insert(
                    0, ("roofline", "Measured roofline per card" + note, fig)
                )
                if on_figure is not None:
                    on_figure("roofline", fig)
    add(
        published.published_section(rs),
        fleet.fleet_section(rs),  # whole-node runs: every GPU against its siblings
        peers.peer_section(rs),  # imported peer tools beside triaudit (triaudit import)
    )
    add(energy.energy_section(rs))  # burst vs sustained, power, perf per watt
    add(health.health_section(rs))  # hardware error counters over the run
    add(other.other_section(rs))  # a plain Google Benchmark file's own cases
    if prices is not None and not isinstance(prices, cost.Prices):
        prices = cost.load_prices(prices)
    priced = cost.cost_section(rs, prices) if prices is not None else None  # report --prices
    if priced is not None:
        add(priced)
    # The summary comes first on the page: each card's triangle, from the same rows as the rest.
    currency = prices.currency if prices is not None else "USD"
    named = prices.path.name if prices is not None else ""
    add(summary.summary_section(rs, priced.csv if priced is not None else None, currency, named))
    secs.insert(0, secs.pop())
    return secs
