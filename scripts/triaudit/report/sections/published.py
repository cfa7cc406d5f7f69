"""Report section "Against published measurements": this run beside other tools' published figures."""

from __future__ import annotations

from triaudit.report.section import Section
from triaudit.results.table import ResultSet


def published_section(rs: ResultSet) -> Section:
    df = rs.table
    from triaudit.report.published import comparison_table

    sec = Section("published", "Against published measurements")
    t = comparison_table(df)
    if not t.empty:
        sec.tables.append(
            (
                "This run beside other tools' published figures for the same card, each side's statistic "
                "named (a ratio far from 1 is a question to answer, not a verdict)",
                t,
            )
        )
        sec.csv = t.reset_index()
    return sec
