"""`triaudit floors derive RUNS... --out FILE`: a fleet's own floors, per SKU and check.

GPUs are grouped by model (the CUDA name and memory size); within a model, the topology most of
its GPUs have (NVLink links up, PCIe generation and width, power limit) is the SKU's, and a GPU
that differs is left out of the statistics and named (a degraded link must not make a SKU of its
own). Per check, each GPU's figure is the median of its files' medians of the case the most GPUs
measured (the largest size, where a check has sizes); for p2p (per link type, the slowest pair)
and each collective, each node's. Each GPU's (node's) figure is the one the report's summary quotes
(results/figures.py). Then:

    median M over the GPUs; robust sigma = 1.4826 x MAD (the median absolute deviation, which a
    few slow GPUs do not move); FAIL at max(3 sigma, 4 %) below M; WARN halfway.

Time-like checks (launch) are judged as 1/time, so "below" always means slower.

The expected false-fail rate beside each floor comes from the runs' own repetition noise: each
GPU's repetition spread (range / d2(n), the control-chart estimate of sigma from n values),
as the noise of a median of n repetitions (x 1.2533 / sqrt(n)), gives the chance that this
healthy GPU, measured again, falls below the floor; the rate is the mean over the fleet's GPUs
above the floor now (those below it are listed as found, not counted as false). Day-to-day drift
is not in it: a fleet's floors want several nights of runs. A floor from fewer than 8 GPUs says so.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from triaudit import corners as registry
from triaudit.core.errors import TriauditError
from triaudit.judge.floors_toml import dumps
from triaudit.judge.gate_checks import CHECKS, NODE_CHECKS, fmt
from triaudit.judge.gate_facts import gpu_facts
from triaudit.results.figures import gpu_measured, headline_figures

MAD_SCALE = 1.4826
K_SIGMA = 3.0
MIN_MARGIN = 0.04
FEW_GPUS = 8
MEDIAN_EFFICIENCY = 1.2533  # the standard error of a median of normal noise is ~1.2533 x that of the mean
# d2(n): the expected range of n normal values in standard deviations (control-chart constants).
D2 = {
    2: 1.128,
    3: 1.693,
    4: 2.059,
    5: 2.326,
    6: 2.534,
    7: 2.704,
    8: 2.847,
    9: 2.970,
    10: 3.078,
    11: 3.173,
    12: 3.258,
    13: 3.336,
    14: 3.407,
    15: 3.472,
    16: 3.532,
    17: 3.588,
    18: 3.640,
    19: 3.689,
    20: 3.735,
    21: 3.778,
    22: 3.819,
    23: 3.858,
    24: 3.895,
    25: 3.931,
}
_BYTES = re.compile(r"bytes:(\d+)")


class DeriveError(TriauditError):
    """Bad input for `floors derive` (the message names the path or the option)."""


@dataclass
class Unit:
    """One GPU's (or, for node checks, one node's) figure of a check."""

    who: str  # "host GPU i" or "host"
    value: float  # in the check's units (a time for launch)
    rel_sigma_median: float | None  # the noise of its median of repetitions, relative; None: one repetition
    reps: int


@dataclass
class Derived:
    key: str  # floor key: "hbm", "p2p:NV18"
    case: str
    units: list[Unit]
    median: float
    robust_sigma: float
    margin: float
    fail: float
    warn: float
    false_fail_rate: float | None
    below: list[str]  # units below the FAIL floor now
    gpus: int | None = None  # a collective's: its ranks

    def rate_text(self) -> str:
        scope = "nodes" if CHECKS[self.key.split(":")[0]].scope == "node" else "GPUs"
        if self.false_fail_rate is None:
            return "unknown: one repetition per case, no noise to estimate"
        pct = self.false_fail_rate * 100
        said = f"{pct:.2g} %" if pct >= 1e-5 else "below 0.00001 %"
        return f"{said} per check (within-run repetition noise of {len(self.units)} {scope}; day-to-day drift not included)"


@dataclass
class SkuFloors:
    name: str
    match: dict
    expect: dict
    floors: list[Derived] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    gpus: int = 0


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def _size(case: str) -> int:
    m = _BYTES.search(case)
    return int(m.group(1)) if m else 0


def _rel_noise(row) -> float | None:
    n = int(row["reps"]) if row["reps"] == row["reps"] else 0
    if n < 2 or not row["median"]:
        return None
    sigma = (row["max"] - row["min"]) / D2.get(n, D2[25]) / abs(row["median"])
    return MEDIAN_EFFICIENCY * sigma / math.sqrt(n)


def _case_rows(rows: pd.DataFrame, case: str, metric: str, unit_of: dict[str, str]) -> dict[str, list[tuple]]:
    """Each GPU's measured rows of one case and counter: (median, min, max, reps) in the table's order
    (its files' order), found once for every GPU instead of a frame per GPU."""
    if rows.empty:
        return {}
    hit = rows[((rows["case"] == case) & (rows["metric"] == metric) & (rows["status"] == "ok")).to_numpy()]
    out: dict[str, list[tuple]] = {}
    files = hit["file"].astype(str).to_numpy()
    values = zip(*(hit[c].to_numpy() for c in ("median", "min", "max", "reps")))
    for f, v in zip(files, values):
        unit = unit_of.get(f)
        if unit is not None:
            out.setdefault(unit, []).append(v)
    return out


def _units_of(rows: list[tuple] | None, who: str) -> Unit | None:
    """One GPU's figure of a check from its rows of the case (_case_rows): the median of its files'
    medians, the noise of its repetitions, how many."""
    if not rows:
        return None
    noise = [x for x in (_rel_noise(dict(zip(("median", "min", "max", "reps"), r))) for r in rows) if x is not None]
    return Unit(
        who,
        float(pd.Series([r[0] for r in rows], dtype="float64").median()),
        statistics.mean(noise) if noise else None,
        int(pd.Series([r[3] for r in rows]).median()),
    )


def floor_from(key: str, case: str, units: list[Unit], gpus: int | None = None) -> Derived:
    """The floor of one check of one SKU from its units' figures (see the module's docstring)."""
    higher = CHECKS[key.split(":")[0]].higher_better
    speed = [u.value if higher else 1.0 / u.value for u in units]  # throughput: higher is better
    m = statistics.median(speed)
    mad = statistics.median(abs(s - m) for s in speed)
    sigma = MAD_SCALE * mad
    margin = max(K_SIGMA * sigma / m, MIN_MARGIN)
    fail_s, warn_s = m * (1 - margin), m * (1 - margin / 2)
    below, probs = [], []
    for u, s in zip(units, speed):
        if s < fail_s:
            below.append(f"{u.who}: {fmt(u.value, key.split(':')[0])}")
        elif u.rel_sigma_median is not None:
            # The chance this unit's median of repetitions lands below the floor when measured again.
            probs.append(_phi((fail_s / s - 1) / u.rel_sigma_median) if u.rel_sigma_median > 0 else 0.0)
    rate = statistics.mean(probs) if probs else None
    back = (lambda s: s) if higher else (lambda s: 1.0 / s)
    median = back(m)
    return Derived(
        key,
        case,
        units,
        median,
        sigma if higher else sigma / m**2,
        margin,
        back(fail_s),
        back(warn_s),
        rate,
        below,
        gpus,
    )


def _mode(values: list):
    known = [v for v in values if v is not None]
    return Counter(known).most_common(1)[0][0] if known else None


def _vote(picks: pd.DataFrame) -> str | None:
    """The case the most units' headline figure rests on (the selector's pick per unit); a tie goes
    to the larger size."""
    if picks.empty:
        return None
    counts = picks["case"].astype(str).value_counts()
    return max(counts.index, key=lambda x: (counts[x], _size(x), x))


def _as_pattern(case: str) -> str:
    """A p2p case as the pattern of every pair at its size (a floor holds a link type, not a pair)."""
    return re.sub(r"src:\d+/dst:\d+", "src:*/dst:*", case)


# The counters derive reads: the checks', their headlines' (results/figures.py), each collective's
# GPU count and the energy column the selector fills. Only these are loaded from a results store.
_HEADLINES = {h.key: h for _, h in registry.headlines()}
NEEDED = (
    {c.metric for c in CHECKS.values()}
    | {_HEADLINES[c.headline].counter for c in CHECKS.values() if c.headline in _HEADLINES}
    | {"ranks", "watts_mean"}
)


def derive(paths: list[Path]) -> tuple[list[SkuFloors], list[str]]:
    """Per SKU of the fleet under `paths`, its floors, and notes on what was left out (the runs
    from the results store where it holds them, store/source.py, else from their JSON files)."""
    from triaudit.store.source import open_source

    source = open_source(paths)
    if not source.runs:
        raise DeriveError(f"no result files under {', '.join(map(str, paths))}")
    rs = source.load(None, NEEDED)
    who = source.identities(source.runs)
    notes = list(source.skipped) + source.notes()
    _SPAN[tuple(map(str, paths))] = _span(source)
    if not who:
        return [], notes + ["no GPU result in these files: nothing to derive floors from"]
    t = rs.table
    # Each GPU's headline figures (results/figures.py, the summary's and the gate's selection): the
    # case the most GPUs of a SKU rest a check on is the case its floor holds.
    unit_of = {f: w["gpu"] for f, w in who.items()}
    picks = headline_figures(
        t.assign(unit=t["file"].astype(str).map(unit_of)) if not t.empty else t,
        rs.contexts,
        by=("unit",),
        keys={c.headline for c in CHECKS.values() if c.scope == "gpu"},
    )
    metrics = {c.metric for c in CHECKS.values()}
    rows = t[t["metric"].isin(metrics).to_numpy()] if not t.empty else t
    gpus: dict[str, dict] = {}
    for f, w in who.items():
        g = gpus.setdefault(w["gpu"], {"who": w, "files": []})
        g["files"].append(f)
    for g in gpus.values():
        g["facts"] = gpu_facts([rs.contexts[f] for f in g["files"]])
    # Models: the CUDA name and memory size; the topology the most GPUs of a model have is its SKU's.
    models: dict[tuple, list[dict]] = {}
    for g in gpus.values():
        mem = g["facts"]["memory_gb"]
        models.setdefault((g["who"]["model"], None if mem is None else round(mem)), []).append(g)
    out = []
    for (model, _memory), members in sorted(models.items(), key=lambda kv: str(kv[0])):
        topo_keys = ("nvlink_links", "pcie_generation", "pcie_width")
        topo = {k: _mode([m["facts"][k] for m in members]) for k in topo_keys}
        power = _mode(
            [None if m["facts"]["power_limit_w"] is None else round(m["facts"]["power_limit_w"]) for m in members]
        )
        kept, left = [], []
        for m in members:
            differs = [
                f"{k} {m['facts'][k]} (the model's mode: {topo[k]})"
                for k in topo_keys
                if topo[k] is not None and m["facts"][k] is not None and m["facts"][k] != topo[k]
            ]
            pl = m["facts"]["power_limit_w"]
            if power is not None and pl is not None and round(pl) != power:
                differs.append(f"power limit {pl:g} W (the model's mode: {power} W)")
            label = f"{m['who']['host']} GPU {m['who']['gpu_index']} ({m['who']['gpu_uuid']})"
            (left.append(f"{label}: {', '.join(differs)}") if differs else kept.append(m))
        memories = [m["facts"]["memory_gb"] for m in kept if m["facts"]["memory_gb"] is not None]
        match: dict = {"gpu_name": "^(" + "|".join(sorted({re.escape(m["facts"]["gpu_name"]) for m in kept})) + ")$"}
        if memories:
            match["memory_gb"] = [round(min(memories) * 0.98, 1), round(max(memories) * 1.02, 1)]
        match.update({k: v for k, v in topo.items() if v is not None})
        if power is not None:
            match["power_limit_w_min"] = round(power * 0.99, 1)
        eccs = {m["facts"]["ecc"] for m in kept}
        expect = {"ecc": eccs.pop()} if len(eccs) == 1 and eccs <= {"on", "off"} else {}
        bits = [model] + [f"{topo['nvlink_links']} NVLinks" if topo["nvlink_links"] is not None else ""]
        bits += [f"PCIe Gen{topo['pcie_generation']} x{topo['pcie_width']}" if topo["pcie_width"] else ""]
        bits += [f"{power} W" if power is not None else ""]
        sku = SkuFloors(" · ".join(b for b in bits if b), match, expect, left_out=left, gpus=len(kept))
        for check, c in CHECKS.items():
            if c.scope != "gpu":
                continue
            mine = {m["who"]["gpu"] for m in kept}
            case = _vote(picks[(picks["key"] == c.headline) & picks["unit"].isin(mine)])
            if case is None:
                continue
            by_gpu = _case_rows(rows, case, c.metric, unit_of)
            units = []
            for m in kept:
                w = m["who"]
                u = _units_of(by_gpu.get(w["gpu"]), f"{w['host']} GPU {w['gpu_index']}")
                if u is not None:
                    units.append(u)
            if units:
                sku.floors.append(floor_from(check, case, units))
        sku.floors += _node_floors(rs, kept)
        out.append(sku)
    return out, notes


def _node_floors(rs, kept: list[dict]) -> list[Derived]:
    """The node checks (p2p per link type: each node's slowest pair; each collective: each node's
    busbw at its GPU count) from the nodes whose GPUs are all of this SKU, each node's figure the
    selector's (results/figures.py), as the summary quotes it."""
    hosts = {m["who"]["host"] for m in kept}
    host_of = {
        f: str(ctx.get("host") or "")
        for f, ctx in rs.contexts.items()
        if str(ctx.get("host") or "") in hosts and gpu_measured(ctx)
    }
    t = rs.table
    if t.empty or not host_of:
        return []
    t = t[t["file"].astype(str).isin(host_of)]
    figs = headline_figures(
        t.assign(host=t["file"].astype(str).map(host_of)),
        rs.contexts,
        by=("host",),
        keys={c.headline for c in NODE_CHECKS},
    )
    out: list[Derived] = []
    for c in NODE_CHECKS:
        h = next(h for _, h in registry.headlines() if h.key == c.headline)
        if h.per_link:
            mine = figs[figs["key"].str.endswith("/" + h.per_link) & figs["key"].str.startswith(c.id + "/")]
            for link, grp in sorted(mine.groupby("link"), key=lambda kv: str(kv[0])):
                units = [
                    Unit(str(r["host"]), float(r["median"]), _rel_noise(pd.Series(r)), int(r["reps"]))
                    for r in grp.to_dict("records")
                ]
                case = _as_pattern(_vote(grp))
                out.append(floor_from(f"{c.id}:{link}", case, units))
            continue
        mine = figs[figs["key"] == c.headline]
        by_case: dict[tuple[str, int], list[Unit]] = {}
        for r in mine.to_dict("records"):
            ranks = int(r["ranks"]) if r.get("ranks") == r.get("ranks") and r.get("ranks") else 0
            u = Unit(str(r["host"]), float(r["median"]), _rel_noise(pd.Series(r)), int(r["reps"]))
            by_case.setdefault((str(r["case"]), ranks), []).append(u)
        out += [floor_from(c.id, case, units, gpus or None) for (case, gpus), units in sorted(by_case.items())]
    return out


def to_toml(skus: list[SkuFloors], fleet: str, date: str, measured: str) -> str:
    data: dict = {"schema": 1, "sku": []}
    for s in skus:
        floors: dict = {}
        for d in s.floors:
            scope = "nodes" if CHECKS[d.key.split(":")[0]].scope == "node" else "GPUs"
            prov = {
                "kind": "derived",
                "gpus": len(d.units),
                "fleet": fleet,
                "date": date,
                "statistic": f"median over {scope} of each one's median of its repetitions; robust sigma = "
                f"1.4826 x MAD; FAIL max(3 sigma, 4 %) below the median, WARN halfway",
                "median": d.median,
                "robust_sigma": d.robust_sigma,
                "margin": round(d.margin, 6),
                "measured": measured,
            }
            if scope == "nodes":
                prov["units"] = "nodes"
            notes = []
            if len(d.units) < FEW_GPUS:
                notes.append(f"derived from {len(d.units)} {scope} (fewer than {FEW_GPUS}): the spread is uncertain")
            if d.below:
                notes.append(f"{len(d.below)} below this floor now: " + "; ".join(d.below[:5]))
            if notes:
                prov["note"] = "; ".join(notes)
            entry = {"case": d.case, "fail": d.fail, "warn": d.warn}
            if d.gpus:
                entry["gpus"] = d.gpus
            entry["false_fail_rate"] = d.rate_text()
            if d.false_fail_rate is not None:
                entry["false_fail_rate_per_check"] = d.false_fail_rate
            entry["provenance"] = prov
            floors[d.key] = entry
        sku: dict = {"name": s.name, "provisional": False}
        if s.left_out:
            sku["note"] = f"{len(s.left_out)} GPU(s) left out, their topology differs: " + "; ".join(s.left_out[:10])
        sku["match"] = s.match
        if s.expect:
            sku["expect"] = s.expect
        sku["floors"] = floors
        data["sku"].append(sku)
    head = (
        f"Floors derived by `triaudit floors derive` from fleet {fleet} on {date} (runs {measured}).\n"
        "Per SKU and check: median over GPUs, robust sigma = 1.4826 x MAD, FAIL max(3 sigma, 4 %) below the\n"
        "median, WARN halfway; the expected false-fail rate from the runs' own repetition noise beside each.\n"
        "Use: triaudit gate RUN... --floors this-file.toml"
    )
    return dumps(data, head)


_SPAN: dict[tuple, str] = {}  # the span of the runs derive() read, by its paths


def _span(source) -> str:
    source.complete()
    starts = sorted({r.row["started_recorded"] for r in source.runs} - {""})
    if not starts:
        return "dates unknown"
    return starts[0] if len(starts) == 1 else f"{starts[0]} to {starts[-1]}"


def measured_span(paths: list[Path]) -> str:
    """The runs' dates, first to last (from their folders' stamps and manifests)."""
    key = tuple(map(str, paths))
    if key not in _SPAN:
        from triaudit.store.source import open_source

        _SPAN[key] = _span(open_source(paths))
    return _SPAN[key]


def today_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d")


def check_out(out: Path, force: bool) -> None:
    if out.exists() and not force:
        raise DeriveError(f"--out {out} exists: refusing to overwrite it (--force replaces it)")
    if out.exists() and not out.is_file():
        raise DeriveError(f"--out {out} is not a file")
    if not out.parent.is_dir():
        raise DeriveError(f"--out {out}: no such folder {out.parent}")
