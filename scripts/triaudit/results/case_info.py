"""What a case says of itself (result schema 2, the entry field gbench.CASE_FIELD), and what a result
file says of where its figures come from (provenance), with the reading of files that predate them:
one rule each, for the table, the report, the selector and every command.

A schema-2 entry: {"triaudit": {"axes": {"op": "triad", "variant": "fp32", "cache": "cold", "bytes": 1073741824},
"judged": "bytes_per_second", "scope": "gpu", "headline": "triad"}}. Schema 1 files, and any
entry without the field, are read from the name grammar `<corner>/<op>/<variant>/<key>:<value>/...`.
"""

from __future__ import annotations

from typing import Any

from triaudit.results.gbench import CASE_FIELD, PROVENANCE_KEY

MEASURED, SYNTHETIC, IMPORTED = "measured", "synthetic", "imported"
PROVENANCES = (MEASURED, SYNTHETIC, IMPORTED)
# What a column of synthetic figures is labelled with, and what every page that shows one says first.
SYNTHETIC_LABEL = " (synthetic)"
SYNTHETIC_BANNER = (
    "SYNTHETIC, NOT MEASUREMENTS: the columns marked (synthetic) hold made-up figures (test fixtures, "
    "examples, models of a datasheet); no GPU was measured for them. Never quote them as a card's performance."
)


def synthetic_in(table) -> bool:
    """Whether any row of a tidy table (its provenance column) is synthetic."""
    return table is not None and not table.empty and "provenance" in table and (table["provenance"] == SYNTHETIC).any()


def gpu_measured(context: dict) -> bool:
    """The one rule for "was a GPU measured" in a result file: its context says gpu_available true
    (every triaudit executable and import writes it; a plain Google Benchmark file has none, and a
    file of an executable that found no device says false). Standard library only: the whole-node
    run reads it on bare GPU nodes."""
    return str(context.get("gpu_available", "")).strip().lower() == "true"


def provenance(context: dict) -> str:
    """measured / synthetic / imported (a peer tool's output brought in by `triaudit import`): the
    context's PROVENANCE_KEY where it has one; before it, a file whose context says "synthetic"
    anywhere (every generator of test fixtures and examples wrote so) is synthetic, a peer import
    (executable "peer:<tool>") imported, the rest measured."""
    said = str(context.get(PROVENANCE_KEY, "")).strip().lower()
    if said in PROVENANCES:
        return said
    if said.startswith(IMPORTED):
        return IMPORTED
    if "synthetic" in context or any("synthetic" in str(v).lower() for v in context.values()):
        return SYNTHETIC
    if str(context.get("executable", "")).startswith("peer:"):
        return IMPORTED
    return MEASURED


def case_descriptions(entries: list, names: list, case_of: dict) -> dict[str, dict]:
    """case -> its entry's CASE_FIELD (the first entry of the case that has one, when it is an object)."""
    out: dict[str, dict] = {}
    for n, e in zip(names, entries):
        info = e.get(CASE_FIELD) if type(e) is dict else None
        if type(info) is dict:
            out.setdefault(case_of.get(n, n), info)
    return out


def axes_of(info: dict | None) -> tuple[str, str, tuple] | None:
    """(op, variant, ((key, value), ...)) of a case from its description; None when it has none
    usable (then the name is parsed). "op" and "variant" are the name grammar's second and third
    parts; the other axes its key:value parts."""
    if not info or type(info.get("axes")) is not dict:
        return None
    axes: dict[str, Any] = dict(info["axes"])
    op, variant = axes.pop("op", None), axes.pop("variant", "")
    axes.pop("corner", None)
    if op is None:
        return None
    return str(op), str(variant), tuple((str(k), str(v)) for k, v in axes.items())
