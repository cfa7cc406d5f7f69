"""Report section "Against published measurements": this run beside other tools' published figures;
and, in a report with nothing measured, those published figures as the cross-card table a first
reader can hold their own run against (other people's measurements, each with its source, never
ours: the columns and the caption say so)."""

from __future__ import annotations

import pandas as pd

from triaudit.core.specs import card_by_key
from triaudit.peers import statistics as S
from triaudit.report.section import Section
from triaudit.results.table import ResultSet

# The cards of the cross-card table, as docs/cards.md lists their published measurements.
REFERENCE_CARDS = ("a100-sxm-80", "h100-sxm", "h200", "rtx-4090")

HOW_TO_MEASURE = [
    "To measure your own: on a machine with an NVIDIA GPU and the CUDA toolkit, `bash scripts/main.sh` "
    "builds the suite, runs it into `results/` and makes this report again with your card as a column "
    "(or `.venv/bin/triaudit run --profile quick`, then `.venv/bin/triaudit report results --out report`).",
    "To set another tool's output beside it: `.venv/bin/triaudit import nccl-tests all_reduce.txt --results "
    "results` (also nvbandwidth, BabelStream and mamf-finder outputs; docs/peers.md).",
]


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


def _value(p) -> str:
    """The published figure with the source's own digits (never more than it gave); an expectation
    from a link's rate says so."""
    text = f"{p.low:,g}" if p.low == p.high else f"{p.low:,g}–{p.high:,g}"
    return text + (" (expected, not measured)" if p.statistic == S.EXPECTATION else "")


def reference_table() -> pd.DataFrame:
    """Figures as rows, the four cards as columns ("<card> (published)"), each cell a published
    value with the letter of its source; the sources (tool, statistic, doubt) under the table."""
    from triaudit.report.published import FIGURES, PUBLISHED

    columns = [f"{card_by_key(k).name} (published)" for k in REFERENCE_CARDS]
    rows: dict[str, dict[str, str]] = {}
    sources: list[str] = []
    for key, column in zip(REFERENCE_CARDS, columns):
        for p in PUBLISHED.get(key, []):
            label, unit, _ = FIGURES[p.figure]
            src = f"{p.source}; statistic: {p.statistic}" + (f"; {p.doubt}" if p.doubt else "")
            if src not in sources:
                sources.append(src)
            ref = sources.index(src) + 1
            rows.setdefault(f"{label} ({unit})", {})[column] = f"{_value(p)} [{ref}]"
    t = pd.DataFrame(
        [[cells.get(c, "no published figure") for c in columns] for cells in rows.values()],
        index=pd.Index(list(rows), name="figure"),
        columns=columns,
    )
    t.attrs["notes"] = [f"[{i}] {s}" for i, s in enumerate(sources, 1)]
    return t


def reference_section() -> Section:
    """The published figures of four cards, for a report with nothing measured yet."""
    sec = Section("published-reference", "Published measurements of four cards (other people's, not ours)")
    sec.folds = False
    sec.tables.append(
        (
            "What others published for these cards (docs/cards.md): NOT measured by triaudit, each from the "
            "source numbered under the table; a run of yours on one of them is held against them in the "
            "report's 'Against published measurements' section",
            reference_table(),
        )
    )
    sec.paragraphs += HOW_TO_MEASURE
    return sec
