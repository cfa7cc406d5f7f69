"""triaudit's figure beside each imported peer's, per card and case: the ratio, each side's statistic,
and for a difference beyond 3 % the likeliest reason.

Peer cases are `peer/<tool>/<triaudit name>`; they are matched to triaudit's case of that name on
the same card (GPU name equal, "NVIDIA " and punctuation aside), from the latest triaudit run that
has it. Peer-only arguments (`device:`) are dropped for the match; where the peer's copy size is
unknown (nvbandwidth) or differs at bandwidth-bound sizes, or BabelStream's un-flushed arrays have
no triaudit `cache:hot` twin, the nearest comparable case is used and the row says so.
"""

from __future__ import annotations

import json
import math
import re

import pandas as pd

from triaudit import corners as registry
from triaudit.peers import statistics
from triaudit.results.counters import DISPLAY
from triaudit.results.table import name_parts

TOLERANCE = 0.03
LARGE = 64 << 20  # bandwidth-bound copies and arrays: sizes beyond this compare across sizes
SIZE_FLAT = {"memcpy", "p2p", "stream"}

# The counter each corner is judged on (corners/): a peer's figure is set beside triaudit's of it.
METRIC = {c.name: c.judged for c in registry.CORNERS if c.judged}
PEER_ONLY_ARGS = {"device"}


def card_key(name: str) -> str:
    s = str(name).lower()
    s = re.sub(r"^nvidia\s+", "", s)
    return re.sub(r"[^a-z0-9]+", " ", s).strip()


def _args(case: str) -> dict:
    return name_parts(case)[3]


def _strip(case: str, drop: set) -> str:
    parts = case.split("/")
    return "/".join(p for p in parts if p.partition(":")[0] not in drop or ":" not in p)


def _prefix_without_bytes(case: str) -> str:
    return "/".join(p for p in case.split("/") if not p.startswith("bytes:"))


def _latest(rows: pd.DataFrame) -> pd.Series:
    return rows.sort_values(["run", "file"]).iloc[-1]


def _candidates(target: str) -> list[tuple[str, list[str]]]:
    """Names to try in order, with the note each one puts on the row."""
    out: list[tuple] = [(target, [])]
    corner, op, variant, args = name_parts(target)
    if corner == "gemm" and op == "torch":
        out.append(
            (
                target.replace("gemm/torch/", "gemm/cublaslt/", 1),
                ["torch.mm beside triaudit's cuBLASLt at the same shape"],
            )
        )
    if corner == "stream" and args.get("cache") == "hot":
        out.append(
            (
                target.replace("cache:hot", "cache:cold"),
                ["the peer does not flush the L2; triaudit's flushed (cold) case"],
            )
        )
    if corner == "allreduce" and args.get("algo") == "auto":
        out.append((target.replace("algo:auto", "algo:ring"), ["triaudit has this size with algo:ring only"]))
    return out


def _match(target: str, peer_bytes: float | None, tri: pd.DataFrame):
    """-> (triaudit row, notes) or (None, []). The same case first, then (copies and STREAM only,
    where bandwidth no longer depends on the size) the nearest bandwidth-bound size."""
    candidates = _candidates(target)
    for name, notes in candidates:
        cold_fallback = "cache:cold" in name and "cache:cold" not in target
        exact = tri[tri["case"] == name]
        if not exact.empty and not (cold_fallback and (peer_bytes is None or peer_bytes < LARGE)):
            return _latest(exact), notes
    if target.split("/", 1)[0] not in SIZE_FLAT:
        return None, []
    for name, notes in candidates:
        prefix = _prefix_without_bytes(name)
        same = tri[tri["case"].map(_prefix_without_bytes) == prefix]
        if same.empty or "bytes" not in same:
            continue
        sizes = pd.to_numeric(same["bytes"], errors="coerce")
        known = sizes.dropna()
        if known.empty:
            continue
        if peer_bytes is None:
            best = known.max()
            note = f"the peer's size is not in its output: triaudit's largest, {_mib(best)}"
        else:
            best = known.iloc[(known - peer_bytes).abs().argsort()].iloc[0]
            if peer_bytes < LARGE or not 0.25 <= best / peer_bytes <= 4:
                continue
            note = f"sizes differ: peer {_mib(peer_bytes)}, triaudit {_mib(best)}"
        if best < LARGE:
            continue
        return _latest(same[sizes == best]), notes + [note]
    return None, []


def _mib(n) -> str:
    n = float(n)
    return f"{n / 2**30:g} GiB" if n >= 2**30 else f"{n / 2**20:g} MiB"


def _statistic(ctx: dict, case: str) -> str:
    """The case's own statistic where the context has one: its name, else the longest name prefix
    (a key ending in "/", one entry for a family of cases), else the run's."""
    by_case = ctx.get("peer_statistic_by_case")
    if by_case:
        try:
            table = json.loads(by_case)
        except ValueError:
            table = {}
        if table.get(case):
            return str(table[case])
        prefixes = [k for k in table if k.endswith("/") and case.startswith(k)]
        if prefixes:
            return str(table[max(prefixes, key=len)])
    return str(ctx.get("peer_statistic", "not recorded"))


def _reason(
    corner: str, tool: str, ratio: float, peer_case: str, tri_case: str, tri_throttled: bool, notes: list[str]
) -> str:
    reasons = []
    if tri_throttled:
        reasons.append("clocks: triaudit's case reported throttling")
    if 1.8 <= ratio <= 2.2 or 0.45 <= ratio <= 0.556:
        reasons.append("byte counting: a factor of 2 (one side counts both directions, or read + write)")
    pa, ta = _args(peer_case), _args(tri_case)
    if corner == "allreduce":
        if pa.get("algo") != ta.get("algo"):
            reasons.append(f"algorithm: triaudit ran algo:{ta.get('algo')}, {tool} algo:{pa.get('algo')}")
        nbytes = float(ta.get("bytes", 0) or 0)
        if nbytes and nbytes <= (1 << 20):
            reasons.append(
                "statistic: at this size the time is latency, and nccl-tests' host-timed mean over "
                "ranks of 20 iterations weighs launch gaps differently from triaudit's median"
            )
        else:
            reasons.append(
                "statistic: nccl-tests' mean over ranks of one host-timed loop beside triaudit's median of repetitions"
            )
    elif corner == "stream":
        reasons.append(
            "statistic: BabelStream keeps its fastest run (host clock, launch and synchronisation "
            "included) beside triaudit's median of repetitions timed with CUDA events"
        )
    elif corner in ("memcpy", "p2p"):
        if any("sizes differ" in n or "size is unknown" in n for n in notes):
            reasons.append("copy size: the two measured different sizes")
        reasons.append(
            "statistic: nvbandwidth's median of 3 samples of 16 copies beside triaudit's median of repetitions"
        )
        if "measured:d2h" in peer_case or "/bidir/" in peer_case:
            reasons.append("byte counting: which direction of a bidirectional copy is measured")
    elif corner == "gemm":
        reasons.append(
            "statistic: mamf-finder's figure is a maximum over shapes (and, by column, the fastest, "
            "median or mean iteration) beside triaudit's median of repetitions"
        )
        reasons.append("library: torch.mm's cuBLAS call beside cuBLASLt's fastest heuristic candidate")
    return "; ".join(reasons[:3])


def side_by_side(df: pd.DataFrame, contexts: dict[str, dict]) -> tuple[pd.DataFrame, list[str]]:
    """-> (one row per matched peer case, notes on what could not be matched or read); `contexts`:
    each result file's context (the peer tool and its version)."""
    notes: list[str] = []
    if df.empty or "corner" not in df:
        return pd.DataFrame(), notes
    peer = df[df["corner"] == "peer"]
    if peer.empty:
        return pd.DataFrame(), notes
    # The report may relabel `card` per run or host; the GPU's own name is then in `card_name`.
    card_col = "card_name" if "card_name" in df else "card"
    tri = df[(df["corner"] != "peer") & (df["status"] == "ok")].copy()
    tri["card_key"] = tri[card_col].map(card_key)
    rows = []
    unmatched: dict[tuple, int] = {}
    for f, g in peer.groupby("file"):
        ctx = contexts.get(f, {})
        tool = str(ctx.get("peer_tool", g["op"].iloc[0]))
        version = ctx.get("peer_tool_version", "")
        card = g[card_col].iloc[0]
        if ctx.get("peer_not_read") and ctx["peer_not_read"] != "nothing":
            notes.append(f"{card}, {tool} ({f.split('/')[-1]}): not in the output: {ctx['peer_not_read']}")
        bad = g[g["status"] != "ok"]
        for _, b in bad.iterrows():
            notes.append(f"{card}, {tool}: `{b['case']}` is an error entry: {b['message']}")
        tri_card = tri[tri["card_key"] == card_key(card)]
        chosen: dict[str, list] = {}
        for _, r in g[g["status"] == "ok"].iterrows():
            inner = r["case"].split("/", 2)[2] if r["case"].count("/") >= 2 else ""
            corner = inner.split("/", 1)[0]
            metric = METRIC.get(corner)
            if corner == "gemm" and "/int8/" in inner:
                metric = "ops"
            if metric is None or r["metric"] != metric:
                continue
            target = _strip(inner, PEER_ONLY_ARGS)
            chosen.setdefault(target, []).append(r)
        for target, peers in chosen.items():
            r, device_note = _pick_device(peers, ctx, _bus_ids(tri_card, contexts))
            inner = r["case"].split("/", 2)[2]
            corner = inner.split("/", 1)[0]
            metric = r["metric"]
            peer_bytes = _args(target).get("bytes")
            tri_target, tri_metric = target, metric
            if corner == "memcpy" and "/measured:d2h" in target:
                # triaudit measures both directions of a bidirectional copy in one case: the
                # device-to-host direction (under host-to-device load) is its counter bytes_per_second_d2h.
                tri_target, tri_metric = target.replace("/measured:d2h", ""), "bytes_per_second_d2h"
            t, match_notes = _match(
                tri_target, float(peer_bytes) if peer_bytes else None, tri_card[tri_card["metric"] == tri_metric]
            )
            if t is None:
                unmatched[(card, tool)] = unmatched.get((card, tool), 0) + 1
                continue
            if corner == "allreduce" and t["median"] == 0 and r["median"] == 0:
                continue  # one rank: busbw is 0 on both sides by the formula
            unit, scale = DISPLAY.get(metric, ("", 1.0))
            ratio = t["median"] / r["median"] if r["median"] else math.nan
            throttled = _throttled(df, t)
            all_notes = ([device_note] if device_note else []) + match_notes
            differs = not math.isnan(ratio) and abs(ratio - 1) > TOLERANCE
            check = (
                "within 3 %"
                if not differs
                else (
                    f"differs by {100 * (ratio - 1):+.1f} %: "
                    + _reason(corner, tool, ratio, inner, t["case"], throttled, all_notes)
                )
            )
            rows.append(
                {
                    "card": card,
                    "case": t["case"],
                    "peer": f"{tool} {version}".strip(),
                    "peer figure": f"{r['median'] / scale:,.2f} {unit}",
                    "peer statistic": _statistic(ctx, r["case"]),
                    "triaudit figure": f"{t['median'] / scale:,.2f} {unit}",
                    "triaudit statistic": statistics.triaudit(int(t["reps"]) if t["reps"] else None),
                    "triaudit ÷ peer": "" if math.isnan(ratio) else f"{ratio:.3f}",
                    "check": check,
                    "matched as": "; ".join(all_notes) or "same case",
                    "peer case": r["case"],
                    "triaudit run": t["run"],
                    "flag": differs,
                    "ratio": ratio,
                }
            )
    for (card, tool), n in sorted(unmatched.items()):
        notes.append(
            f"{card}, {tool}: {n} case(s) with no triaudit counterpart on this card (not measured, "
            "or measured under another name/size)"
        )
    if not rows:
        return pd.DataFrame(), notes
    return pd.DataFrame(rows), notes


def _bus_ids(tri_card: pd.DataFrame, contexts: dict) -> set:
    return {_bus(contexts.get(f, {}).get("gpu_pci_bus_id", "")) for f in tri_card["file"].unique()} - {""}


def _pick_device(peers: list, ctx: dict, tri_bus: set):
    """Several devices of one peer file map to one triaudit case: the one on triaudit's GPU."""
    if len(peers) == 1:
        return peers[0], ""
    by_device = {_args(p["case"]).get("device"): p for p in peers}
    for part in str(ctx.get("peer_devices", "")).split(";"):
        m = re.match(r"\s*(\d+):.*\(([0-9a-fA-F:.]+)\)\s*$", part)
        if m and m.group(1) in by_device and _bus(m.group(2)) in tri_bus:
            return by_device[m.group(1)], f"device {m.group(1)}: the GPU triaudit measured (PCI {_bus(m.group(2))})"
    first = by_device.get("0", peers[0])
    return first, (
        f"device 0 of {len(peers)} (the peer measured every GPU; its bus ids do not say which one triaudit measured)"
    )


def _bus(text: str) -> str:
    """'00000000:99:00.0' / '0000:99:00' -> '99:00' (bus:device), for matching across tools' spellings."""
    parts = [p for p in str(text).lower().replace(".", ":").split(":") if p]
    try:
        return f"{int(parts[1], 16):02x}:{int(parts[2], 16):02x}" if len(parts) >= 3 else ""
    except ValueError:
        return ""


def _throttled(df: pd.DataFrame, t: pd.Series) -> bool:
    th = df[(df["file"] == t["file"]) & (df["case"] == t["case"]) & (df["metric"] == "throttled")]
    return bool(not th.empty and th["median"].iloc[0] > 0)
