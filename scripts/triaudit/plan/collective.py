"""`triaudit plan allreduce`: the time of a ring allreduce of a payload across n GPUs, from a link's
per-direction bandwidth or from the busbw a run measured (its GPU-count sweep where it has one).

  ring allreduce = each rank sends 2(n-1)/n x payload; time = that / per-direction link bytes/s

The measured figures come from the corner whose headline stands for a training step's gradient
synchronisation (role "gradient_sync", corners/); everything else of `plan` is collective-free."""

from __future__ import annotations

import math
from pathlib import Path

from triaudit import corners as registry
from triaudit.plan.model import Basis, Figure, PlanError

QUESTION = "allreduce"
HELP = (
    "ring allreduce time of a payload across n GPUs (with --run: the busbw measured at that GPU count "
    "by the collective's --scaling sweep)"
)
FORMULA = "bytes per rank = 2(n−1)/n × payload; time = bytes per rank ÷ link bytes/s"


def ring_time(payload_bytes: float, gpus: int, link_bw: float) -> dict:
    if gpus < 1:
        raise PlanError("--gpus must be at least 1")
    per_rank = 2.0 * (gpus - 1) / gpus * payload_bytes
    return {"bytes_per_rank": per_rank, "time_s": per_rank / link_bw if link_bw else math.inf}


def sync_corner() -> str:
    """The corner of the gradient-synchronising collective."""
    return next((c.name for c, h in registry.headlines() if "gradient_sync" in h.roles), "")


def sync_scaling_from(table) -> dict[int, dict[int, Figure]]:
    """busbw of the synchronising collective's `<name>/scaling/<type>/algo:<a>/gpus:<g>|ranks:<r>/bytes:<N>`
    cases, per count and size: Ring where measured (the formula here is a ring's), else NCCL's own
    choice; the best type."""
    import pandas as pd

    if table is None or table.empty:
        return {}
    rows = table[
        (table["corner"] == sync_corner())
        & (table["op"] == "scaling")
        & (table["metric"] == "busbw")
        & (table["status"] == "ok")
    ]
    if rows.empty:
        return {}
    count = pd.Series(float("nan"), index=rows.index)
    for col in ("ranks", "gpus"):
        if col in rows:
            count = pd.to_numeric(rows[col], errors="coerce").fillna(count)
    algo = rows["algo"].astype(str) if "algo" in rows else pd.Series("", index=rows.index)
    rows = rows.assign(
        count=count,
        nbytes=pd.to_numeric(rows["bytes"], errors="coerce"),
        algo_rank=algo.map(lambda a: 0 if a == "ring" else 1),
    ).dropna(subset=["count", "nbytes"])
    out: dict[int, dict[int, Figure]] = {}
    for (g, n), grp in rows.groupby(["count", "nbytes"]):
        grp = grp[grp["algo_rank"] == grp["algo_rank"].min()]
        r = grp.loc[grp["median"].idxmax()]
        out.setdefault(int(g), {})[int(n)] = Figure(
            float(r["median"]), f"measured: {r['case']} ({Path(str(r['file'])).parent.name})"
        )
    return out


def pick_scaling(
    scaling: dict[int, dict[int, Figure]], gpus: int, payload_bytes: float
) -> tuple[int, int, Figure, list[str]]:
    """The measured busbw to plan n GPUs and a payload with: the same GPU count where measured
    (else the nearest below, else above), the measured size nearest the payload (log scale).
    Returns (count, bytes, figure, notes)."""
    notes = []
    counts = sorted(c for c in scaling if c >= 2)
    if not counts:
        raise PlanError("the run's scaling cases have no multi-GPU count")
    if gpus in counts:
        g = gpus
    elif gpus > counts[-1]:
        g = counts[-1]
        notes.append(
            f"measured up to {g} GPUs: busbw at {g} used for {gpus}; beyond the measured counts it is an "
            "extrapolation (busbw usually falls as GPUs are added)"
        )
    else:
        below = [c for c in counts if c < gpus]
        g = below[-1] if below else counts[0]
        notes.append(f"no measurement at {gpus} GPUs: busbw at {g} used")
    sizes = sorted(scaling[g])
    n = min(sizes, key=lambda s: abs(math.log2(s) - math.log2(max(payload_bytes, 1))))
    if payload_bytes > sizes[-1] * 2:
        notes.append(
            f"the payload is larger than the largest size measured ({sizes[-1] / 2**20:g} MiB): busbw there used"
        )
    return g, n, scaling[g][n], notes


def answer(a, basis: Basis | None, link, notes: list[str]) -> dict:
    """The question's answer; `link(a, basis)` -> (bytes/s, source) from --link or --link-gbps."""
    scaled = []
    if basis and any(c >= 2 for c in basis.sync_scaling) and not (a.link or a.link_gbps) and a.gpus > 1:
        # The run measured busbw per GPU count: plan with the one for this count and size.
        g, n, fig, more = pick_scaling(basis.sync_scaling, a.gpus, a.payload_gb * 1e9)
        link_bps, src = fig.value, fig.source + " (busbw)"
        notes += more
        scaled = [
            (
                f"measured busbw, {c} GPUs",
                by[n].value / 1e9 if n in by else by[max(by)].value / 1e9,
                "GB/s",
                (by[n] if n in by else by[max(by)]).source,
            )
            for c, by in sorted(basis.sync_scaling.items())
            if c >= 2
        ]
    elif basis and basis.sync_busbw and not (a.link or a.link_gbps):
        link_bps, src = basis.sync_busbw.value, basis.sync_busbw.source + " (busbw)"
    else:
        link_bps, src = link(a, basis)
    r = ring_time(a.payload_gb * 1e9, a.gpus, link_bps)
    rows = [
        ("payload", a.payload_gb, "GB", ""),
        ("bytes sent per rank", r["bytes_per_rank"] / 1e9, "GB", ""),
        ("link, per direction", link_bps / 1e9, "GB/s", src),
        ("time", r["time_s"] * 1e3, "ms", ""),
    ] + scaled
    if a.gpus == 1:
        notes.append("one GPU: nothing to exchange")
    return {"question": a.question, "card": None, "rows": rows, "binds": "movement", "formula": FORMULA, "notes": notes}


def add_parser(questions, number, count, links) -> None:
    """The question's options on `plan`'s sub-parsers."""
    a = questions.add_parser(QUESTION, help=HELP)
    a.add_argument("--payload-gb", type=number, required=True)
    a.add_argument("--gpus", type=count, required=True)
    a.add_argument("--link", choices=sorted(links))
    a.add_argument("--link-gbps", type=number, help="per-direction link bandwidth, GB/s")
