"""All three accounts for hours (triaudit_soak, run by `triaudit soak`, not by `triaudit run`): ladder
GEMMs, STREAM triads on 2 x L2 arrays and copies at once on every GPU, every output hashed bit for
bit, a point of each series per minute. Case names: `soak/<gpu>/...` (benchmarks/soak)."""

from __future__ import annotations

from triaudit.corners.base import Corner, Step

CORNER = Corner(
    name="soak",
    account="all",
    title="Soak",
    order=90,
    steps=(Step("triaudit_soak", "triaudit_soak", {}),),
    section="soak",
    run=False,
)
