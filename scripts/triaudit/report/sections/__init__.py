"""The report's sections, in the order the page shows them: each a function of the result table
giving a Section (report/section.py). Bandwidth, compute and movement first (the triangle's
corners), then the measurements beside peers and published figures, the fleet, the GPU-to-GPU
matrices, energy, and cost when prices are given."""

from __future__ import annotations

import pandas as pd

from triaudit.report import frames as F
from triaudit.report.section import Section
from triaudit.report.sections import allreduce, cost, energy, fleet, gemm, launch, memcpy, p2p, peers, published, stream


def all_sections(df: pd.DataFrame, prices=None) -> list[Section]:
    """Every section of the report of `df`; `prices` (sections/cost.py Prices) adds the cost section."""
    secs = [
        stream.stream_section(df),
        gemm.gemm_section(df),
        memcpy.memcpy_section(df),
        launch.launch_section(df),
        allreduce.allreduce_section(df),
        published.published_section(df),
        fleet.fleet_section(df),  # whole-node runs: every GPU against its siblings
        peers.peer_section(df),  # imported peer tools beside triaudit (triaudit import)
    ]
    secs += p2p.sections(df)  # GPU x GPU copy matrices, allreduce scaling over GPU counts
    secs.append(energy.energy_section(df))  # burst vs sustained, power, perf per watt
    secs += [cost.cost_section(df, prices)] if prices is not None else []  # report --prices
    drawn, note = F.plotted(df)
    fig = gemm.roofline_figure(drawn)
    if fig is not None:
        secs[1].figures.insert(0, ("roofline", "Measured roofline per card" + note, fig))
    return secs
