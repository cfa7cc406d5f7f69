"""Case names of earlier result schemas, read as today's: a run measured before a rename still
compares with one measured after it. One entry per renamed prefix; the schema version the rename
came with is beside it (docs/json.md)."""

from __future__ import annotations

# old prefix -> new prefix
LEGACY_PREFIXES = {
    # schema 2: back-to-back small copies are not nvbandwidth's latency (a pointer chase)
    "p2p/latency/": "p2p/small_copy/",
}


def current_name(case: str) -> str:
    """`case` under today's name: an old prefix replaced by its new one, anything else unchanged."""
    for old, new in LEGACY_PREFIXES.items():
        if case.startswith(old):
            return new + case[len(old) :]
    return case
