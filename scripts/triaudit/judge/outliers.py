"""`triaudit outliers`: the slow GPUs of a fleet, named.

GPUs are grouped by model and driver (a driver change moves every card; another model is another
population). Per case, each GPU's value is the median of its result files' medians; a GPU is an
outlier when its throughput is more than `threshold` below the group's median **and** outside the
group's robust spread: deficit > MAD_K x 1.4826 x MAD (the median absolute deviation, scaled to
a standard deviation for normal noise). The two tests together: the threshold keeps a tight fleet's
1 % noise from naming anyone, the spread keeps a loose group (a case that varies run to run on
every card) from naming its slowest member. A group needs MIN_GPUS GPUs to be judged.

Time-like metrics (launch cost, seconds) are judged as 1/time, so "below" always means slower.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from triaudit.core.errors import TriauditError
from triaudit.results.counters import DISPLAY
from triaudit.results.counters import JUDGED as PRIMARY_METRICS
from triaudit.results.facts import identities  # noqa: F401 (its home was here: fleet, derive, gate import it)
from triaudit.results.status import read_statuses
from triaudit.results.table import ResultSet, plain

MIN_GPUS = 4
MAD_K = 3.0
MAD_SCALE = 1.4826  # MAD of normal noise x this = its standard deviation

EXIT_NONE, EXIT_OUTLIERS, EXIT_BAD_INPUT, EXIT_TOO_FEW = 0, 1, 2, 3

# metric -> (scale, unit) for people


class OutlierError(TriauditError):
    """Bad input for `outliers` (the message names the file or flag)."""


@dataclass
class Judgement:
    per: pd.DataFrame  # one row per (group, GPU, case): value, throughput, group median, deficit, outlier
    outliers: pd.DataFrame  # the rows of per_gpu that are outliers, worst first
    groups: pd.DataFrame  # per group: model, driver, GPUs, hosts, cases judged
    not_judged: list[str] = field(default_factory=list)
    not_measured: list[str] = field(default_factory=list)
    hosts: list[dict] = field(default_factory=list)  # host status files found beside the results
    threshold: float = 0.05
    judged: int = 0  # (group, case) pairs with enough GPUs


def _primary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per case, the rows of the first throughput metric in PRIMARY_METRICS that the case has."""
    order = {m: i for i, (m, _) in enumerate(PRIMARY_METRICS)}
    higher = dict(PRIMARY_METRICS)
    rows = rows[rows["metric"].isin(order)].copy()
    if rows.empty:
        return rows
    rows["rank"] = rows["metric"].map(order)
    best = rows.groupby("case")["rank"].transform("min")
    rows = rows[rows["rank"] == best].drop(columns="rank")
    rows["higher_better"] = rows["metric"].map(higher)
    return rows


def siblings(ident: dict[str, dict]) -> int:
    """The most GPUs of one model and driver among the files: below 2, no GPU has a sibling."""
    groups: dict[tuple, set] = {}
    for who in ident.values():
        groups.setdefault((who.get("model"), who.get("driver")), set()).add(who.get("gpu"))
    return max(map(len, groups.values()), default=0)


def per_gpu_table(rs: ResultSet, cases: str = "", ident: dict | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Tidy rows -> one row per GPU and case (the GPU's median), and notes on cases not measured."""
    df = rs.table
    ident = identities(rs) if ident is None else ident
    if df.empty or not ident:
        return pd.DataFrame(), []
    # Only what is judged (each case's throughput metric) or reported (cases not measured): the
    # other counters of a hundred cards are most of the table, and merging them took seconds.
    wanted = df["metric"].isin([m for m, _ in PRIMARY_METRICS]) | (df["status"] != "ok")
    rows = plain(df[df["file"].isin(ident) & wanted])
    if cases:
        rows = rows[rows["case"].str.contains(cases, regex=True)]
    who = pd.DataFrame.from_dict(ident, orient="index")
    rows = rows.merge(who, left_on="file", right_index=True, how="inner")
    notes = []
    bad = rows[rows["status"] != "ok"]
    for (host, idx, status), g in bad.groupby(["host", "gpu_index", "status"]):
        notes.append(f"{host} GPU {idx}: {len(g)} case(s) {status}, e.g. `{g['case'].iloc[0]}`: {g['message'].iloc[0]}")
    ok = _primary(rows[rows["status"] == "ok"])
    if ok.empty:
        return pd.DataFrame(), notes
    keys = ["model", "driver", "gpu", "host", "gpu_index", "gpu_uuid", "case", "metric", "higher_better"]
    per = (
        ok.groupby(keys, dropna=False)
        .agg(value=("median", "median"), files=("file", "nunique"), siblings_loaded=("siblings_loaded", "first"))
        .reset_index()
    )
    return per, notes


def judge(per: pd.DataFrame, threshold: float = 0.05, min_gpus: int = MIN_GPUS, k: float = MAD_K):
    """Adds throughput, group_median, deficit, robust_sigma and outlier columns to per-GPU rows;
    returns the rows and the number of (group, case) pairs judged."""
    if per.empty:
        return per.assign(throughput=[], group_median=[], deficit=[], robust_sigma=[], gpus=[], outlier=[]), 0
    per = per.copy()
    per["throughput"] = [v if hb else (1.0 / v if v else math.nan) for v, hb in zip(per["value"], per["higher_better"])]
    grp = per.groupby(["model", "driver", "case"])["throughput"]
    per["gpus"] = grp.transform("count")
    per["group_median"] = grp.transform("median")
    per["mad"] = (
        (per["throughput"] - per["group_median"])
        .abs()
        .groupby([per["model"], per["driver"], per["case"]])
        .transform("median")
    )
    per["robust_sigma"] = MAD_SCALE * per["mad"]
    per["deficit"] = 1.0 - per["throughput"] / per["group_median"]
    judged = per["gpus"] >= min_gpus
    per["outlier"] = (
        judged & (per["deficit"] > threshold) & (per["group_median"] - per["throughput"] > k * per["robust_sigma"])
    )
    n_judged = per.loc[judged, ["model", "driver", "case"]].drop_duplicates().shape[0]
    return per.drop(columns="mad"), n_judged


def _value_in_median_units(r) -> float:
    """The group median in the metric's own units (time-like: back from 1/time)."""
    return r["group_median"] if r["higher_better"] else (1.0 / r["group_median"] if r["group_median"] else math.nan)


def fmt_value(v: float, metric: str) -> str:
    unit, scale = DISPLAY.get(metric, (metric, 1.0))
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    x = v / scale
    digits = 0 if abs(x) >= 100 else (1 if abs(x) >= 10 else 2)
    return f"{x:,.{digits}f} {unit}"


def find_outliers(paths: list[Path], threshold: float = 0.05, cases: str = "", min_gpus: int = MIN_GPUS) -> Judgement:
    if not 0 < threshold < 1:
        raise OutlierError(f"--threshold {threshold}: must be a fraction between 0 and 1 (0.05 = 5 %)")
    if cases:
        try:
            re.compile(cases)
        except re.error as exc:
            raise OutlierError(f"--cases {cases!r}: not a regular expression: {exc}") from exc
    from triaudit.store.source import JsonSource, open_source

    source = open_source(paths)  # LoadError names a missing path; the store's runs where it has them
    hosts = [s for p in map(Path, paths) if p.is_dir() for s in read_statuses(p)]
    if not source.runs and not hosts:
        raise OutlierError(f"no result files under {', '.join(map(str, paths))}")
    if isinstance(source, JsonSource):
        per, notes = per_gpu_table(source.rs, cases) if source.runs else (pd.DataFrame(), [])
    else:  # each GPU's medians computed by the store's engine (store/per_gpu.py), then judged here
        from triaudit.store.per_gpu import per_gpu

        per, notes = source.retrying(per_gpu, source, cases)
    per, n_judged = judge(per, threshold, min_gpus)
    groups, not_judged = pd.DataFrame(), []
    if not per.empty:
        per["group_median_value"] = per.apply(_value_in_median_units, axis=1)
        groups = (
            per.groupby(["model", "driver"])
            .agg(gpus=("gpu", "nunique"), hosts=("host", "nunique"), cases=("case", "nunique"))
            .reset_index()
        )
        judged_cases = per[per["gpus"] >= min_gpus].groupby(["model", "driver"])["case"].nunique()
        groups["cases_judged"] = [int(judged_cases.get((m, d), 0)) for m, d in zip(groups["model"], groups["driver"])]
        for _, g in groups[groups["cases_judged"] < groups["cases"]].iterrows():
            few = per[(per["model"] == g["model"]) & (per["driver"] == g["driver"]) & (per["gpus"] < min_gpus)]
            not_judged.append(
                f"{g['model']} (driver {g['driver']}): {few['case'].nunique()} case(s) measured on fewer "
                f"than {min_gpus} GPUs (at most {int(few['gpus'].max())}), not judged"
            )
        mixed = per.groupby(["model", "driver"])["siblings_loaded"].nunique()
        for (m, d), n in mixed.items():
            if n > 1:
                not_judged.append(
                    f"{m} (driver {d}): mixes GPUs measured with and without their siblings loaded; "
                    "a lone GPU can look faster than one in a full node"
                )
    out = per[per["outlier"]].sort_values("deficit", ascending=False) if not per.empty else per
    return Judgement(per, out, groups, not_judged, notes, hosts, threshold, n_judged)


def exit_code(j: Judgement) -> int:
    if not j.outliers.empty:
        return EXIT_OUTLIERS
    return EXIT_NONE if j.judged else EXIT_TOO_FEW


def outlier_table(j: Judgement) -> pd.DataFrame:
    o = j.outliers
    if o.empty:
        return pd.DataFrame()
    t = pd.DataFrame(
        {
            "host": o["host"],
            "GPU": o["gpu_index"],
            "UUID": o["gpu_uuid"],
            "model": o["model"],
            "case": o["case"],
            "value": [fmt_value(v, m) for v, m in zip(o["value"], o["metric"])],
            "group median": [fmt_value(v, m) for v, m in zip(o["group_median_value"], o["metric"])],
            "deficit": [f"{d * 100:.1f} %" for d in o["deficit"]],
            "GPUs in group": o["gpus"].astype(int),
        }
    )
    return t.reset_index(drop=True)


def host_problems(hosts: list[dict]) -> list[str]:
    """Hosts whose status file says they measured nothing, failed or never finished."""
    out = []
    for h in hosts:
        if h.get("state") != "complete":
            out.append(
                f"{h.get('node') or h.get('host', '?')}: {h.get('state', '?')}"
                + (f" (exit {h['exit_code']})" if h.get("exit_code") is not None else "")
                + (f": {h.get('message')}" if h.get("message") else "")
            )
    return out


def summary_markdown(j: Judgement) -> str:
    lines = ["## Fleet outliers", ""]
    if j.per.empty:
        lines.append("No per-GPU measurements in these results.")
    else:
        lines.append(
            f"{j.per['gpu'].nunique()} GPU(s) on {j.per['host'].nunique()} host(s) in {len(j.groups)} group(s) "
            f"(model and driver); a GPU is named when its throughput is more than {j.threshold * 100:g} % "
            f"below its group's median and more than {MAD_K:g} robust standard deviations "
            f"({MAD_SCALE} × MAD) from it; groups need {MIN_GPUS} GPUs."
        )
        lines.append("")
        t = outlier_table(j)
        if t.empty:
            lines.append(
                f"**No outliers** in {j.judged} judged (group, case) pair(s)."
                if j.judged
                else "**Nothing judged**: too few GPUs per group."
            )
        else:
            lines.append(f"**{len(t)} outlier(s)** on {j.outliers['gpu'].nunique()} GPU(s):")
            lines += ["", "| " + " | ".join(t.columns) + " |", "|" + "---|" * len(t.columns)]
            lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in t.itertuples(index=False)]
        lines += ["", "| model | driver | GPUs | hosts | cases | judged |", "|---|---|---|---|---|---|"]
        lines += [
            f"| {g.model} | {g.driver} | {g.gpus} | {g.hosts} | {g.cases} | {g.cases_judged} |"
            for g in j.groups.itertuples(index=False)
        ]
    for title, items in (
        ("Not judged", j.not_judged),
        ("Not measured", j.not_measured),
        ("Hosts without a complete run", host_problems(j.hosts)),
    ):
        if items:
            lines += ["", f"{title}:", ""] + [f"- {x}" for x in items]
    return "\n".join(lines)
