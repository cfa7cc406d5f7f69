"""`triaudit gate`: is each GPU of each node fit for work? One verdict per GPU and check.

Performance checks (gate_checks.CHECKS): the case a floor names, the GPU's median of its
repetitions, against the floor of its SKU entry (floors.py): below FAIL is a FAIL, below WARN a
WARN (a ceiling for launch time). The node's checks: per p2p link type its slowest ordered pair
(the link type from the p2p run's own matrix, p2p_link_<i>_<j>), and each NCCL collective's bus
bandwidth at the floor's size for the floor's GPU count (a collective that no floor names is judged
only when it is the gradient-synchronising one, ALWAYS_JUDGED: the others are new to the fleet). Then the environment (gate_environment.py)
and health (gate_health.py) from the same run.

A check is NOT TESTED, never PASS, when its case is missing, skipped or errored, when the GPU has
no floors entry or the entry no floor for it. A check the entry says does not apply (FP8 on an
A100) is listed as such and given no verdict. Exit code: 1 a FAIL; else 3 something NOT TESTED;
else 0 (WARNs allowed). No GPU in the input at all is exit 3 too (nothing could be tested).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from triaudit import corners as registry
from triaudit.core.errors import EXIT_FOUND, EXIT_NOTHING_JUDGED, EXIT_OK, TriauditError
from triaudit.judge.floors import Floor, FloorSet, Sku, choose_sku
from triaudit.judge.gate_checks import (
    CHECKS,
    ENVIRONMENT,
    FAIL,
    HEALTH_BANDED,
    HEALTH_FATAL,
    NODE_CHECKS,
    NOT_TESTED,
    PASS,
    STATUSES,
    WARN,
    Check,
    fmt,
)
from triaudit.judge.gate_environment import environment
from triaudit.judge.gate_facts import Gpu, Node, build_nodes, newest_runs
from triaudit.judge.gate_health import health
from triaudit.judge.gate_rows import Figure, GateRows
from triaudit.judge.gate_verdict import Verdict, drain_words, figure_message, judge_figure
from triaudit.results.case_info import SYNTHETIC, SYNTHETIC_BANNER, provenance
from triaudit.results.table import ResultSet, plain, records

ORDER = {c: i for i, c in enumerate([*CHECKS, *ENVIRONMENT])}
# Node checks said NOT TESTED when no floor names them (the others are left out without a floor).
_HEADLINE = {h.key: h for _, h in registry.headlines()}
ALWAYS_JUDGED = {c.id for c in NODE_CHECKS if "gradient_sync" in _HEADLINE[c.headline].roles}
PER_LINK = {c.id for c in NODE_CHECKS if _HEADLINE[c.headline].per_link}  # one verdict per link type


class GateError(TriauditError):
    """Bad input for `gate` (the message names the path)."""


@dataclass
class GateResult:
    verdicts: list[Verdict]
    nodes: list[Node]
    not_applicable: list[str] = field(default_factory=list)  # "host GPU i: gemm_fp8: why"
    notes: list[str] = field(default_factory=list)

    _by_host: tuple | None = field(default=None, repr=False, compare=False)

    def counts(self, host: str | None = None) -> dict[str, int]:
        if host is None:
            return {s: sum(v.status == s for v in self.verdicts) for s in STATUSES}
        # Counted once for every host (asked once per host: a thousand hosts, a hundred thousand verdicts).
        if self._by_host is None or self._by_host[0] != len(self.verdicts):
            tally: dict[str, dict[str, int]] = {}
            for v in self.verdicts:
                t = tally.setdefault(v.host, dict.fromkeys(STATUSES, 0))
                if v.status in t:
                    t[v.status] += 1
            self._by_host = (len(self.verdicts), tally)
        return dict(self._by_host[1].get(host) or dict.fromkeys(STATUSES, 0))

    def node_status(self, host: str) -> str:
        c = self.counts(host)
        return FAIL if c[FAIL] else NOT_TESTED if c[NOT_TESTED] else WARN if c[WARN] else PASS


def exit_code(result: GateResult) -> int:
    c = result.counts()
    if c[FAIL]:
        return EXIT_FOUND
    if c[NOT_TESTED] or not result.verdicts:
        return EXIT_NOTHING_JUDGED
    return EXIT_OK


# The counters any check reads: the checks', the clock flags, the health counters (and every case
# that did not run: its status and message). Only these are loaded from a results store.
HEALTH = set(HEALTH_FATAL) | set(HEALTH_BANDED)
NEEDED = {c.metric for c in CHECKS.values()} | HEALTH | {"throttled", "clock_low"}


def _needed_rows(rs: ResultSet) -> pd.DataFrame:
    """The rows any check reads (NEEDED, and every case that did not run)."""
    t = rs.table
    if t.empty:
        return t
    return t[(t["metric"].isin(NEEDED) | (t["status"] != "ok")).to_numpy()]


def _gpu_verdict(gpu: Gpu, sku: Sku | None, check: str, status: str, message: str, **kw) -> Verdict:
    kw.setdefault("floor_source", sku.label() if sku else "no floors entry for this GPU")
    return Verdict(
        gpu.host, gpu.index, gpu.uuid, gpu.model, check, status, message, sku=sku.label() if sku else "", **kw
    )


def _figure(fig: Figure | None, floor: Floor) -> tuple[float | None, str]:
    """(the figure, how it was measured) of a floor's case in a GPU's rows (gate_rows.py, summed
    up), or (None, why not)."""
    metric = CHECKS[floor.check].metric
    fig = fig or Figure()
    if fig.value is not None:
        reps = fig.reps
        if fig.files == 1:
            return fig.value, f"median of {reps} repetition(s)"
        return fig.value, f"median over {fig.files} files, {reps} repetitions"
    if fig.bad is not None:
        case, status, message = fig.bad
        return None, f"{case} {status}: {message}"
    if fig.hits:
        return None, f"{floor.case} has no {metric} counter"
    return None, f"{floor.case} is not in the run"


def _performance(gpu: Gpu, sku: Sku | None, rows: GateRows, result: GateResult) -> list[Verdict]:
    out = []
    for check, c in CHECKS.items():
        if c.scope != "gpu":
            continue
        if sku is None:
            why = (
                f"no floors for {gpu.model or 'this GPU'} ({_memory(gpu)}): no floors entry matches it; "
                "derive them from a fleet (triaudit floors derive) and pass --floors"
            )
            out.append(_gpu_verdict(gpu, sku, check, NOT_TESTED, why))
            continue
        if check in sku.not_applicable:
            result.not_applicable.append(f"{gpu.host} GPU {gpu.index}: {check}: {sku.not_applicable[check]}")
            continue
        floor = sku.floors.get(check)
        if floor is None:
            out.append(_gpu_verdict(gpu, sku, check, NOT_TESTED, f"{sku.label()} has no {check} floor"))
            continue
        value, how = _figure(rows.figures(floor.case, CHECKS[check].metric).get(_unit(gpu)), floor)
        if value is None:
            out.append(
                _gpu_verdict(gpu, sku, check, NOT_TESTED, how, case=floor.case, fail=floor.fail, warn=floor.warn)
            )
            continue
        status = judge_figure(value, check, floor.fail, floor.warn)
        out.append(
            _gpu_verdict(
                gpu,
                sku,
                check,
                status,
                figure_message(value, check, floor.fail, floor.warn, how),
                measured=value,
                fail=floor.fail,
                warn=floor.warn,
                case=floor.case,
                floor_source=f"{sku.label()}: {floor.describe()}",
                short=drain_words(value, check, status, floor.fail, floor.warn),
            )
        )
    return out


def _memory(gpu: Gpu) -> str:
    m = gpu.facts.get("memory_gb")
    return f"{m:.1f} GB" if m else "memory unknown"


def _p2p(node: Node, sku: Sku | None, rows: list[dict], contexts: dict) -> list[Verdict]:
    """Per link type, the slowest ordered pair of the p2p run, against the type's floor. `rows`:
    the node's rows of the node checks' cases (_node_rows), as records."""
    p2p = [r for r in rows if r["case"].startswith(P2P_CASES)]
    by_bus = {g.facts.get("pci_bus_id", "").lower(): g for g in node.gpus}
    by_index = {g.index: g for g in node.gpus}

    def who(ctx: dict, ordinal: str) -> tuple[str, str]:
        bus = str(ctx.get(f"gpu_{ordinal}_pci_bus_id", "")).lower()
        g = by_bus.get(bus) if bus else None
        g = g or (by_index.get(ordinal) if not bus else None)
        return (g.index, g.uuid) if g else (ordinal, str(ctx.get(f"gpu_{ordinal}_uuid", "?")))

    def verdict(status, message, link="", **kw) -> Verdict:
        return Verdict(
            node.host,
            kw.pop("gpu", ""),
            kw.pop("uuid", ""),
            _node_model(node),
            "p2p",
            status,
            message,
            link=link,
            sku=sku.label() if sku else "",
            **kw,
        )

    if not p2p:
        return [verdict(NOT_TESTED, f"no p2p case in the run of {node.gpu_count} GPUs")]
    pairs: dict[str, list[dict]] = {}
    not_run: list[str] = []
    for r in p2p:
        ctx = contexts.get(r["file"], {})
        src, dst = str(r.get("src", "")), str(r.get("dst", ""))
        link = str(ctx.get(f"p2p_link_{src}_{dst}", "unknown")).split(" ")[0] or "unknown"
        if r["status"] == "ok" and r["metric"] == "bytes_per_second":
            pairs.setdefault(link, []).append({**r, "src": src, "dst": dst, "ctx": ctx})
        elif r["status"] != "ok" and "not the representative pair" not in str(r["message"]):
            not_run.append(f"{r['case']} {r['status']}: {r['message']}")
    out = []
    for link in sorted(pairs):
        floor = sku.floors.get(f"p2p:{link}") if sku else None
        candidates = [p for p in pairs[link] if floor is None or fnmatch.fnmatchcase(p["case"], floor.case)]
        if not candidates:
            out.append(verdict(NOT_TESTED, f"{floor.case} not in the run", link, case=floor.case))
            continue
        # The slowest pair at the largest size measured of this link type.
        size = max(int(p.get("bytes") or 0) for p in candidates)
        at = [p for p in candidates if int(p.get("bytes") or 0) == size]
        slow = min(at, key=lambda p: p["median"])
        src_i, src_u = who(slow["ctx"], slow["src"])
        dst_i, dst_u = who(slow["ctx"], slow["dst"])
        pair = dict(
            gpu=src_i, uuid=src_u, peer=dst_i, peer_uuid=dst_u, case=slow["case"], measured=float(slow["median"])
        )
        measured_pairs = f"slowest of {len(at)} pair(s) measured at {size} B"
        if floor is None:
            why = f"no p2p:{link} floor in {sku.label()}" if sku else "no floors entry matches the node's GPUs"
            out.append(verdict(NOT_TESTED, f"{fmt(slow['median'], 'p2p')} ({measured_pairs}); {why}", link, **pair))
            continue
        status = judge_figure(slow["median"], "p2p", floor.fail, floor.warn)
        out.append(
            verdict(
                status,
                figure_message(slow["median"], "p2p", floor.fail, floor.warn, measured_pairs),
                link,
                fail=floor.fail,
                warn=floor.warn,
                floor_source=f"{sku.label()}: {floor.describe()}",
                short=drain_words(slow["median"], "p2p", status, floor.fail, floor.warn),
                **pair,
            )
        )
    if not pairs:
        out.append(verdict(NOT_TESTED, "no p2p pair was measured: " + ("; ".join(not_run[:2]) or "none ran")))
    return out


def _figure_of(rows: list[dict], case_glob: str, metric: str) -> tuple[Figure, list[dict]]:
    """gate_rows.py GateRows.figures for one node's records; and the records of the case."""
    pattern = re.compile(fnmatch.translate(case_glob))
    hits = [r for r in rows if pattern.match(r["case"])]
    ok = [r for r in hits if r["status"] == "ok" and r["metric"] == metric]
    fig = Figure(hits=bool(hits))
    if ok:
        fig.value = float(np.median([r["median"] for r in ok]))
        fig.reps, fig.files = int(sum(r["reps"] for r in ok)), len(ok)
    bad = next((r for r in hits if r["status"] != "ok"), None)
    if bad is not None:
        fig.bad = (bad["case"], bad["status"], str(bad["message"]))
    return fig, hits


def _collective(node: Node, check: Check, sku: Sku | None, rows: list[dict], contexts: dict) -> Verdict:
    """A collective's busbw at the floor's case, over the floor's GPU count."""
    cid = check.id

    def verdict(status, message, **kw) -> Verdict:
        return Verdict(node.host, "", "", _node_model(node), cid, status, message, sku=sku.label() if sku else "", **kw)

    floor = sku.floors.get(cid) if sku else None
    if floor is None:
        why = f"no {cid} floor in {sku.label()}" if sku else "no floors entry matches the node's GPUs"
        return verdict(NOT_TESTED, why)
    fig, hits = _figure_of(rows, floor.case, CHECKS[cid].metric)
    value, how = _figure(fig, floor)
    if value is None:
        return verdict(NOT_TESTED, how, case=floor.case)
    corner = registry.corner_named(cid)
    key = corner.ranks_context if corner else ""
    files = {r["file"] for r in hits}
    ranks = {str(contexts.get(f, {}).get(key, "?")) for f in files}
    if floor.gpus is not None and ranks != {str(floor.gpus)}:
        return verdict(
            NOT_TESTED,
            f"{fmt(value, cid)} over {'/'.join(sorted(ranks))} GPU(s); the floor is for {floor.gpus}",
            case=floor.case,
            measured=value,
        )
    status = judge_figure(value, cid, floor.fail, floor.warn)
    return verdict(
        status,
        figure_message(value, cid, floor.fail, floor.warn, f"{how}, {'/'.join(sorted(ranks))} GPUs"),
        case=floor.case,
        measured=value,
        fail=floor.fail,
        warn=floor.warn,
        floor_source=f"{sku.label()}: {floor.describe()}",
        short=drain_words(value, cid, status, floor.fail, floor.warn),
    )


def _node_model(node: Node) -> str:
    models = sorted({g.model for g in node.gpus})
    return models[0] if len(models) == 1 else " + ".join(models)


def same_host(a: str, b: str) -> bool:
    """One host, however it was spelled: a recorded FQDN and a short `hostname` are one node.
    Two full names must be equal (n1.a.org is not n1.b.org), and an IP address is never shortened."""
    a, b = a.lower().rstrip("."), b.lower().rstrip(".")
    if a == b:
        return True
    if ("." in a) == ("." in b) or any(_is_ip(x) for x in (a, b)):
        return False
    return a.split(".")[0] == b.split(".")[0]


def _is_ip(name: str) -> bool:
    return ":" in name or bool(re.fullmatch(r"[0-9.]+", name))


def gate(paths: list[Path], floor_files: list[Path] | None = None, host: str = "") -> GateResult:
    """The verdicts for every host under `paths` (only `host`'s, when given): each host's newest run,
    from the results store where it holds them (only those runs, only the counters read), else from
    the JSON files (store/source.py)."""
    from triaudit.store.source import open_source

    # Of a store's runs only each host's newest and those with notes: a year of nights costs what one does.
    source = open_source(paths, newest_per_host=True)  # LoadError names a missing or unreadable path
    if not any(r.has_files for r in source.runs):
        raise GateError(f"no result files under {', '.join(map(str, paths))}")
    floors = FloorSet.load(floor_files)  # FloorsError names the file and key
    chosen, notes = newest_runs(source.runs, source.hosts)
    if host:
        others = [h for h in chosen if not same_host(h, host)]
        chosen = {h: r for h, r in chosen.items() if same_host(h, host)}
        notes = [x for x in notes if not any(x.startswith(f"{o}:") for o in others)]
        if not chosen:
            notes.append(f"no run of host {host} in these results: nothing to judge it on")
    judged = list({id(r): r for r in chosen.values()}.values())
    # The health counters are three rows in four of a fleet's: a store sums them itself (per file,
    # as gate_rows.health_counters does), and the table holds only the rest.
    counters = source.health_counters(judged, HEALTH) if judged else None
    rs = source.load(judged, NEEDED - HEALTH if counters is not None else NEEDED) if judged else None
    found = build_nodes(chosen, rs, source.identities(judged)) if rs is not None else []
    result = GateResult([], found, notes=list(source.skipped) + source.notes() + notes)
    if rs is None:
        return result
    rows = _needed_rows(rs)
    unit_of = {f: _unit(g) for node in found for g in node.gpus for f in g.files}
    per_gpu = GateRows(rows, unit_of)
    clocks, healths = per_gpu.clocks(), per_gpu.health(counters)
    node_rows = _node_rows(rows, found)
    for node in found:
        skus = []
        for gpu in node.gpus:
            sku, mismatches = choose_sku(gpu.facts, floors)
            skus.append(sku)
            result.verdicts += _performance(gpu, sku, per_gpu, result)
            result.verdicts += environment(gpu, sku, mismatches, clocks.get(_unit(gpu)), node.gpus)
            result.verdicts.append(health(gpu, sku, healths.get(_unit(gpu))))
        if node.gpu_count >= 2:
            sku = next((s for s in skus if s is not None), None)
            here = node_rows.get(node.host, [])
            for c in NODE_CHECKS:
                if c.id in PER_LINK:
                    result.verdicts += _p2p(node, sku, here, rs.contexts)
                elif c.id in ALWAYS_JUDGED or (sku is not None and c.id in sku.floors):
                    result.verdicts.append(_collective(node, c, sku, here, rs.contexts))
    synthetic = {n.host for n in found if any(provenance(rs.contexts.get(f, {})) == SYNTHETIC for f in n.files)}
    for v in result.verdicts:
        if v.host in synthetic:
            v.provenance = SYNTHETIC
    result.verdicts.sort(key=lambda v: (v.host, not v.gpu, _num(v.gpu), ORDER.get(v.check, 99), v.link))
    return result


def _unit(gpu: Gpu) -> str:
    """A GPU's key among the gate's rows (gate_rows.py): one per GPU of a node."""
    return f"{gpu.host}\x00{gpu.index}\x00{gpu.uuid}"


# The node checks read only their corners' cases (p2p's copy-engine pairs, the collectives') and
# only these columns of them.
P2P_CASES = "p2p/ce/uni/"
_NODE_CORNERS = tuple(P2P_CASES if c.id in PER_LINK else f"{c.id}/" for c in NODE_CHECKS)
_NODE_COLUMNS = ["file", "case", "metric", "median", "reps", "status", "message", "src", "dst", "bytes"]


def _node_rows(rows: pd.DataFrame, found: list[Node]) -> dict[str, list[dict]]:
    """Per node, its files' rows of the node checks' corners, as records (plain text), made once."""
    if rows.empty or not found:
        return {}
    host_of = {f: n.host for n in found if n.gpu_count >= 2 for f in n.files}
    case = rows["case"]
    cats = case.cat.categories if isinstance(case.dtype, pd.CategoricalDtype) else None
    if cats is not None:
        keep = np.array([str(c).startswith(_NODE_CORNERS) for c in cats] + [False])[case.cat.codes.to_numpy()]
    else:
        keep = case.astype(str).str.startswith(_NODE_CORNERS).to_numpy()
    keep &= rows["file"].isin(host_of).to_numpy()
    mine = plain(rows.loc[keep, [c for c in _NODE_COLUMNS if c in rows.columns]])
    out: dict[str, list[dict]] = {}
    for r in records(mine):
        out.setdefault(host_of[r["file"]], []).append(r)
    return out


def _num(index: str) -> tuple:
    return (int(index), "") if index.isdigit() else (1 << 30, index)


def _cell(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).replace("|", "/")


def summary_markdown(result: GateResult) -> str:
    lines = ["## triaudit gate", ""]
    synthetic = sorted({v.host for v in result.verdicts if v.provenance == SYNTHETIC})
    if synthetic:
        lines += [f"**{SYNTHETIC_BANNER}** (synthetic: {', '.join(synthetic)})", ""]
    if not result.nodes:
        lines.append("**NOT TESTED**: no GPU of these results was measured (or none of the host asked for).")
    for node in result.nodes:
        c = result.counts(node.host)
        lines.append(
            f"- **{node.host}**: **{result.node_status(node.host)}**, {len(node.gpus)} GPU(s), run {node.run.name}: "
            + ", ".join(f"{c[s]} {s}" for s in STATUSES)
        )
    shown = [v for v in result.verdicts if v.status != PASS]
    if shown:
        lines += ["", "| where | check | verdict | measured, floor | floor from |", "|---|---|---|---|---|"]
        for v in shown:
            lines.append(
                f"| {_cell(v.where())} | {_cell(v.name)} | **{v.status}** | {_cell(v.message)} | {_cell(v.floor_source)} |"
            )
    elif result.verdicts:
        lines += ["", f"Every one of {len(result.verdicts)} check(s) passed."]
    for title, items in (("Not applicable", result.not_applicable), ("Notes", result.notes)):
        if items:
            lines += ["", f"{title}:", ""] + [f"- {_cell(x)}" for x in items[:50]]
            if len(items) > 50:
                lines.append(f"- ... and {len(items) - 50} more")
    return "\n".join(lines)
