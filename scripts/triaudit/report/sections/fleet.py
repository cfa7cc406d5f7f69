"""The report's fleet section: per case, every GPU's figure against its group's median (model and
driver), outliers marked (outliers.py decides), and the hosts of the fleet that measured nothing.
Empty unless some group has two GPUs or more, so single-card reports do not change."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from triaudit.judge import outliers as O
from triaudit.report.section import Section, pyplot
from triaudit.results.status import STATUS_DIR, read_statuses
from triaudit.results.table import ResultSet

MAX_CASES = 30  # per figure: the cases with outliers first, then the widest spread


def _status_roots(contexts: dict[str, dict]) -> list[Path]:
    """Fleet folders (holding hosts/*.status) above the result files: <root>/<card>/<run>/<file>."""
    roots = set()
    for f in contexts:
        for p in list(Path(f).parents)[1:3]:
            if (p / STATUS_DIR).is_dir():
                roots.add(p)
    return sorted(roots)


def strip_figure(per: pd.DataFrame, model: str, driver: str, threshold: float):
    """One dot per GPU and case at its throughput relative to the group median; outliers red, named."""

    plt = pyplot()
    g = per[(per["model"] == model) & (per["driver"] == driver)]
    # A group median of zero has no relative figure (and divided, warned on every report).
    g = g[g["group_median"] > 0].copy()
    g["relative"] = g["throughput"] / g["group_median"] * 100
    spread = g.groupby("case")["relative"].agg(lambda s: s.max() - s.min())
    flagged = set(g.loc[g["outlier"], "case"])
    order = sorted(spread.index, key=lambda c: (c not in flagged, -spread[c]))[:MAX_CASES]
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.32 * len(order)))
    for y, case in enumerate(order):
        c = g[g["case"] == case]
        jitter = [((k % 5) - 2) * 0.06 for k in range(len(c))]
        ok = c[~c["outlier"]]
        ax.scatter(ok["relative"], [y + jitter[k] for k in range(len(ok))], s=14, color="tab:blue", alpha=0.7)
        bad = c[c["outlier"]]
        ax.scatter(bad["relative"], [y] * len(bad), s=40, color="tab:red", marker="x", zorder=3)
        for _, r in bad.iterrows():
            ax.annotate(
                f"{r['host']} GPU {r['gpu_index']}",
                (r["relative"], y),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=7,
                color="tab:red",
            )
    ax.axvline(100, color="0.4", lw=0.8)
    ax.axvline(100 * (1 - threshold), color="tab:red", lw=0.8, ls="--", label=f"{threshold * 100:g} % below the median")
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels(order, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("throughput relative to the group median (%)")
    ax.set_title(f"{model} (driver {driver}): {g['gpu'].nunique()} GPUs on {g['host'].nunique()} host(s)", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    fig.set_layout_engine("tight")  # laid out as it is drawn
    return fig


def fleet_section(rs: ResultSet, threshold: float = 0.05):
    sec = Section("fleet", "Fleet: every GPU against its siblings")
    ident = O.identities(rs)
    if O.siblings(ident) < 2:  # one GPU per model and driver (a table of cards): nothing to judge
        return sec
    per, not_measured = O.per_gpu_table(rs, ident=ident)
    if per.empty or per.groupby(["model", "driver"])["gpu"].nunique().max() < 2:
        return sec
    per, judged = O.judge(per, threshold)
    per["group_median_value"] = per.apply(O._value_in_median_units, axis=1)
    j = O.Judgement(
        per,
        per[per["outlier"]].sort_values("deficit", ascending=False),
        pd.DataFrame(),
        threshold=threshold,
        judged=judged,
    )
    t = O.outlier_table(j)
    if not t.empty:
        sec.tables.append(
            (
                f"Outliers: more than {threshold * 100:g} % below the group median and outside "
                f"{O.MAD_K:g} robust standard deviations",
                t.set_index(["host", "GPU"]),
            )
        )
    groups = per.groupby(["model", "driver"]).agg(
        GPUs=("gpu", "nunique"), hosts=("host", "nunique"), cases=("case", "nunique")
    )
    groups["cases judged"] = per[per["gpus"] >= O.MIN_GPUS].groupby(["model", "driver"])["case"].nunique()
    groups["cases judged"] = groups["cases judged"].fillna(0).astype(int)
    groups["outliers"] = per.groupby(["model", "driver"])["outlier"].sum().astype(int)
    sec.tables.append((f"Groups (a group needs {O.MIN_GPUS} GPUs to be judged)", groups))
    for (model, driver), g in per.groupby(["model", "driver"]):
        if g["gpu"].nunique() >= 2:
            stem = "fleet_" + re.sub(r"[^a-z0-9]+", "_", f"{model}_{driver}".lower()).strip("_")
            sec.figures.append(
                (
                    stem,
                    f"{model}, driver {driver}: every GPU per case, relative to the group median",
                    strip_figure(per, model, driver, threshold),
                )
            )
    sec.csv = per[
        [
            "model",
            "driver",
            "host",
            "gpu_index",
            "gpu_uuid",
            "case",
            "metric",
            "value",
            "group_median_value",
            "deficit",
            "gpus",
            "outlier",
            "siblings_loaded",
        ]
    ].rename(columns={"group_median_value": "group_median"})
    hosts = [s for root in _status_roots(rs.contexts) for s in read_statuses(root)]
    sec.notes = not_measured + O.host_problems(hosts)
    return sec
