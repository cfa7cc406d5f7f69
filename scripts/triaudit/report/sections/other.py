"""Report section "Other benchmarks": the cases of Google Benchmark files that are not triaudit's
(a user's own benchmarks, another suite's), shown as they were measured — the time per iteration
and the throughput counter where one is reported — instead of a report that says nothing was
measured while its table holds them."""

from __future__ import annotations

import pandas as pd

from triaudit import corners as registry
from triaudit.core import numbers as N
from triaudit.report.section import Section
from triaudit.results.counters import DISPLAY, judged_counter
from triaudit.results.table import ResultSet, plain, records

# The corners triaudit's own sections show (and the peers' imported runs).
OWN = {c.name for c in registry.CORNERS} | {"peer"}


def other_section(rs: ResultSet) -> Section:
    sec = Section("other", "Other benchmarks (not triaudit's cases)")
    df = rs.table
    if df.empty:
        return sec
    rows = plain(df[~df["corner"].isin(OWN)])
    if rows.empty:
        return sec
    ok = rows[rows["status"] == "ok"]
    cells: dict[tuple[str, str], str] = {}
    for (card, case), g in ok.groupby(["card", "case"]):
        counters = dict(zip(g["metric"], g["median"]))
        chosen = judged_counter(counters)
        name = chosen[0] if chosen else "time_s"
        r = g[g["metric"] == name].iloc[0]
        unit, scale = DISPLAY.get(name, ("", 1.0))
        cells[(case, card)] = f"{N.figure(r['median'], scale, r['spread_pct'])} {unit}".strip() + (
            f" ({name})" if name != "time_s" else ""
        )
    for r in records(rows[rows["status"] != "ok"]):
        cells.setdefault((r["case"], r["card"]), f"{r['status']}: {r['message']}")
    cases = sorted({c for c, _ in cells})
    cards = sorted({k for _, k in cells})
    t = pd.DataFrame([{k: cells.get((c, k), "not run") for k in cards} for c in cases], index=cases, columns=cards)
    t.index.name = "case"
    sec.tables.append(("Median per case over repetitions (time per iteration, or the throughput counter)", t))
    return sec
