"""Report section "Peers side by side": imported peer runs (`triaudit import`) beside triaudit's own
figures for the same card and case, with the ratio, each side's statistic and, beyond 3 %, the
likeliest reason (peers/side_by_side.py)."""

from __future__ import annotations

from triaudit.peers.side_by_side import side_by_side
from triaudit.report.section import Section
from triaudit.results.table import ResultSet

COLUMNS = [
    "peer",
    "peer figure",
    "peer statistic",
    "triaudit figure",
    "triaudit statistic",
    "triaudit ÷ peer",
    "check",
    "matched as",
]


def peer_section(rs: ResultSet):

    sec = Section("peers", "Peers side by side")
    t, notes = side_by_side(rs.table, rs.contexts)
    if not t.empty:
        flagged = int(t["flag"].sum())
        sec.tables.append(
            (
                f"Measured on the same card by triaudit and by the tool users already trust "
                f"({len(t) - flagged} of {len(t)} within 3 %; a difference is a question, the reason "
                f"given is the likeliest one)",
                t.set_index(["card", "case"])[COLUMNS],
            )
        )
        sec.csv = t.drop(columns=["flag"])
    sec.notes = notes
    return sec
