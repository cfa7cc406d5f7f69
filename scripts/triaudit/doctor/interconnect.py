"""doctor's interconnect checks: the GPU x GPU link matrix, NVLink links that are down, and the
path NCCL actually takes (transport per channel, and whether P2P runs over NVLink).

Inputs come from the live machine (`nvidia-smi topo -m`, `nvidia-smi nvlink -s`, one small
allreduce run with NCCL_DEBUG=INFO) or from saved text (`--topo-file`, `--nccl-log`), so a machine
known only by its dumps can be checked too. Standard library only.

Exit-code policy (doctor's): a problem is exit 1: NVLink links down on some GPUs, or NCCL taking
SHM, the network or PCIe between GPUs where NVLink would serve. Warnings (no NVLink at all,
pairs without NVLink by design, sockets between nodes) leave the exit code alone.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

from triaudit.core.errors import TriauditError
from triaudit.core.files import not_a_regular_file
from triaudit.doctor import nccl_log as N
from triaudit.doctor import topology as T

FIXES = (
    "usual fixes: `NCCL_P2P_LEVEL=NVL` (P2P over NVLink), and unset NCCL_P2P_DISABLE / NCCL_SHM_DISABLE "
    "if set; PCIe ACS or the IOMMU routing P2P through the root complex (disable ACS on the PCIe switch ports, "
    "boot with iommu=pt); inside a VM or container make sure NVLink is visible there (`nvidia-smi nvlink -s`, "
    "NCCL_TOPO_FILE); on NVSwitch systems nvidia-fabricmanager must be running"
)
NVLINK_GRAPH_TYPES = {"NVL", "NVB"}


class InputError(TriauditError):
    """A --topo-file or --nccl-log that cannot be used; the message names the file."""


def read_text(path: Path, flag: str) -> str:
    what = not_a_regular_file(path)
    if what:  # reading a FIFO would wait for a writer forever
        raise InputError(f"{flag} {path}: {what}, not a file: save the dump to a file first")
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise InputError(f"{flag} {path}: cannot be read: {e.strerror or e}") from None
    if not text.strip():
        raise InputError(f"{flag} {path}: empty file")
    return text


def load_topology(path: Path) -> T.Topology:
    try:
        return T.parse_topo(read_text(path, "--topo-file"), str(path))
    except T.TopologyError as e:
        raise InputError(f"--topo-file {e}") from None


def load_nccl_log(path: Path) -> N.NcclLog:
    log = N.parse_nccl_log(read_text(path, "--nccl-log"), str(path))
    if not log.info_lines and not log.warns and not log.fatal:
        raise InputError(f"--nccl-log {path}: no `NCCL INFO` line in it (was it run with NCCL_DEBUG=INFO?)")
    return log


# --- which GPU a rank is -------------------------------------------------------------------------


def gpu_of(log: N.NcclLog, rank: int, dev: str | None, bus_to_gpu: dict[str, int]) -> tuple[int | None, str]:
    """The nvidia-smi index of a connection endpoint and how it was found. NCCL 2.19+ prints the
    NVML index (= nvidia-smi's), older releases the PCI bus id."""
    if dev is not None and not N.bracket_is_bus_id(log, rank, dev):
        return int(dev), "NVML index"
    bus = N.normal_bus_id(dev) if dev is not None else None
    info = log.ranks.get(rank)
    if bus is None and info is not None:
        bus = N.normal_bus_id(info.bus_id)
    if bus is not None:
        if bus in bus_to_gpu:
            return bus_to_gpu[bus], "PCI bus id"
        same = [r for r in log.ranks.values() if N.normal_bus_id(r.bus_id) == bus]
        if same and same[0].nvml_dev is not None:
            return same[0].nvml_dev, "NVML index"
        if same:
            return same[0].cuda_dev, "CUDA index (assumed to follow nvidia-smi's order)"
    return None, "unknown"


def _same_node(log: N.NcclLog, a: int, b: int) -> bool | None:
    if log.nnodes == 1:
        return True
    ra, rb = log.ranks.get(a), log.ranks.get(b)
    if ra and rb and ra.host and rb.host:
        return ra.host == rb.host
    return None


# --- the judgement -------------------------------------------------------------------------------


def judge_nccl(log: N.NcclLog, topo: T.Topology | None = None, bus_to_gpu: dict[str, int] | None = None) -> T.Findings:
    f = T.Findings()
    bus_to_gpu = bus_to_gpu or {}
    f.rows["source"] = (
        f"{log.source}"
        + (f", NCCL {log.version}" if log.version else "")
        + (f", {log.nranks} rank(s)" if log.nranks else "")
        + (f", {log.nnodes} node(s)" if log.nnodes else "")
    )
    link_matrix = topo is not None and topo.kind == "m"
    nv = (lambda a, b: T.nvlink_count(topo.link(a, b))) if link_matrix else (lambda a, b: None)
    machine_nvlink = link_matrix and any(nv(a, b) for a, b in topo.gpu_pairs())
    hows: set[str] = set()

    by_pair: dict[tuple, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    intra: list[tuple[N.Connection, int | None, int | None]] = []
    remote: dict[tuple, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for c in log.connections:
        if c.transport == "COLLNET":
            remote[("CollNet", c.src_rank, c.direction)][c.via].add(c.channel)
            continue
        local = c.transport in ("P2P", "SHM") and c.kind != "P2P/MNNVL"
        if c.transport == "NET":
            local = bool(_same_node(log, c.src_rank, c.dst_rank))
        if not local:
            remote[(c.src_rank, c.dst_rank, c.direction)][c.via].add(c.channel)
            continue
        a, how_a = gpu_of(log, c.src_rank, c.src_dev, bus_to_gpu)
        b, how_b = gpu_of(log, c.dst_rank, c.dst_dev, bus_to_gpu)
        hows |= {how_a, how_b}
        intra.append((c, a, b))
        key = (a, b) if a is not None and b is not None else (f"rank {c.src_rank}", f"rank {c.dst_rank}")
        by_pair[key][c.via].add(c.channel)

    gpus_used = sorted({g for _, a, b in intra for g in (a, b) if g is not None})
    ring_possible = machine_nvlink and T.nvlink_ring_exists(gpus_used, lambda a, b: bool(nv(a, b)))

    def where(a, b) -> str:
        if not link_matrix or not isinstance(a, int) or not isinstance(b, int):
            return ""
        code = topo.link(a, b)
        if code is None:
            return f"; GPU{a}/GPU{b} not in {topo.source}"
        n = T.nvlink_count(code)
        return f", over NVLink ({code})" if n else f", over PCIe ({code}: {T.describe_link(code)})"

    for (a, b), vias in sorted(by_pair.items(), key=lambda kv: str(kv[0])):
        name = f"GPU{a} -> GPU{b}" if isinstance(a, int) else f"{a} -> {b}"
        for via, chans in sorted(vias.items()):
            text = f"{via}, channel(s) {N.ranges(chans)}"
            if via.startswith("SHM"):
                text += ", through host memory"
            elif via.startswith("NET"):
                text += ", through the network card"
            elif via.startswith("P2P/indirect"):
                text += ", through an intermediate GPU"
            else:
                text += where(a, b)
            f.rows.setdefault(name, [])
            f.rows[name].append(text)
    for k, v in list(f.rows.items()):
        if isinstance(v, list):
            f.rows[k] = "; ".join(v)
    for (s, d, direction), vias in sorted(remote.items(), key=lambda kv: str(kv[0])):
        name = (
            f"CollNet rank {d} [{direction}]"
            if s == "CollNet"
            else f"rank {s} -> rank {d}" + (f" [{direction}]" if direction else "") + " (other node)"
        )
        f.rows[name] = "; ".join(f"{via}, channel(s) {N.ranges(ch)}" for via, ch in sorted(vias.items()))
    if hows - {"NVML index", "PCI bus id"}:
        f.notes.append(
            "GPUs named by " + " / ".join(sorted(hows - {"NVML index", "PCI bus id"})) + ": set "
            "CUDA_DEVICE_ORDER=PCI_BUS_ID, or give a log of NCCL 2.19+ (it names NVML indices)"
        )

    _judge_failures(log, f)
    _channel_summary(log, f)
    _judge_paths(log, topo, f, intra, nv, machine_nvlink, ring_possible, link_matrix)
    _judge_network(log, f, remote)
    return f


def _channel_summary(log: N.NcclLog, f: T.Findings) -> None:
    s = dict(log.summary)
    if s.get("collnet") == s.get("coll") and not any(c.transport == "COLLNET" for c in log.connections):
        s.pop("collnet", None)  # several releases print the coll count in the collnet place
    if s:
        f.rows["channels"] = ", ".join(
            f"{v} {dict(coll='coll', collnet='CollNet', nvls='NVLS')[k]}" for k, v in s.items()
        )
    if log.nvls_support:
        avail = sorted(d for d, ok in log.nvls_support.items() if ok)
        f.rows["NVLS"] = (f"multicast available on dev {N.ranges(avail)}" if avail else "multicast not available") + (
            f"; {s['nvls']} NVLS channel(s) set up (NVLink SHARP: reductions in the NVSwitch)"
            if s.get("nvls")
            else "; no NVLS channel set up"
            if "nvls" in s
            else ""
        )
    if log.graphs:
        names = {
            1: "balanced tree",
            2: "split tree",
            3: "tree",
            4: "ring",
            5: "NVLS",
            6: "CollNet direct",
            7: "NVLS tree",
        }
        f.rows["graph search"] = "; ".join(
            sorted(
                {
                    f"{names.get(p, f'pattern {p}')}: {n} channel(s), intra-node {i}, inter-node {o}"
                    for p, n, i, o in log.graphs
                }
            )
        )
    if log.env:
        f.rows["environment"] = ", ".join(f"{k}={v}" for k, v in sorted(log.env.items()))
    fatal = {x.message for x in log.fatal if x.nccl_warn}
    shown = {w: re.sub(r"0x[0-9a-fA-F]+", "0x…", w) for w in log.warns}
    harmless = list(dict.fromkeys(w for w in log.warns if shown[w] not in fatal and not N.is_fatal_warn(w)))
    for w in harmless[:3]:
        f.warnings.append(f"NCCL WARN: {w}")
    if len(harmless) > 3:
        f.warnings.append(f"NCCL WARN: {len(harmless) - 3} more distinct WARN message(s) in the log")


MAX_FAILURES = 5


def _judge_failures(log: N.NcclLog, f: T.Findings) -> None:
    """A run that died is a problem whatever its path: each distinct fatal line, where it is."""
    for x in log.fatal[:MAX_FAILURES]:
        what = f"NCCL WARN {x.message}" if x.nccl_warn else x.message
        where = f"line {x.line}" + (f", {x.where}" if x.where else "") + (f"; {x.count} times" if x.count > 1 else "")
        if len(x.on) > 1:
            where += f", on {', '.join(x.on)}"
        then = f"; then {x.returned} returned up the call stack" if x.returned else ""
        f.problems.append(f"the run failed: `{what}` ({where}{then})")
    if len(log.fatal) > MAX_FAILURES:
        rest = log.fatal[MAX_FAILURES:]
        f.problems.append(
            f"the run failed: and {len(rest)} more distinct fatal line(s), the first at line {rest[0].line}"
        )
    if log.fatal and log.connections:
        f.notes.append("the run died: the connections above are the ones NCCL had set up before it")
    if not log.fatal and log.error_returns:
        line, where, code = log.error_returns[0]
        f.warnings.append(
            f"NCCL returned {code} at {where} (line {line}, {len(log.error_returns)} trace line(s)) with no WARN "
            "before it: a call failed; whether the run survived it the log does not say"
        )


def _judge_paths(log, topo, f, intra, nv, machine_nvlink, ring_possible, link_matrix) -> None:
    if not intra:
        if not log.connections:
            f.warnings.append(
                "the log shows no connection line: one rank only, or the log ended before NCCL connected "
                "(NCCL 2.22+ connects at the first collective)"
            )
        return
    LINKED, RING, ONE_NODE = (
        "though NVLink connects them",
        "though a ring over NVLink alone exists on this machine",
        "between GPUs of one node: P2P and SHM are off or failed",
    )
    bad: dict[tuple[str, str], set] = defaultdict(set)
    unavoidable: set[str] = set()
    shm_without_nvlink = set()
    unknown = set()
    for c, a, b in intra:
        # Each direction prints its own line; a pair is named once, lower index first.
        pair = (
            f"GPU{min(a, b)}-GPU{max(a, b)}"
            if a is not None and b is not None
            else f"rank {min(c.src_rank, c.dst_rank)}-rank {max(c.src_rank, c.dst_rank)}"
        )
        if link_matrix and (a is None or b is None or topo.link(a, b) is None):
            unknown.add(pair)  # not judged: the matrix does not name both GPUs
            continue
        linked = a is not None and b is not None and bool(nv(a, b))
        if c.transport in ("SHM", "NET"):
            what = "SHM (through host memory)" if c.transport == "SHM" else f"{c.kind} (the network card)"
            if linked:
                bad[(what, LINKED)].add(f"{pair} ({topo.link(a, b)})")
            elif machine_nvlink:
                if ring_possible:
                    bad[(what, RING)].add(pair)
                else:
                    unavoidable.add(pair)
            elif c.transport == "SHM":
                shm_without_nvlink.add(pair)
            else:
                bad[(what, ONE_NODE)].add(pair)
        elif c.transport == "P2P" and c.kind != "P2P/indirect" and machine_nvlink and not linked:
            code = topo.link(a, b)
            if ring_possible:
                bad[("P2P over PCIe", RING)].add(f"{pair} ({code})")
            else:
                unavoidable.add(f"{pair} ({code})")
    for k, ((what, reason), pairs) in enumerate(sorted(bad.items())):
        f.problems.append(f"NCCL chose {what} for {T._list(sorted(pairs))} {reason}" + ("" if k else f"; {FIXES}"))
    if unknown:
        f.notes.append(f"{T._list(sorted(unknown))}: not both in {topo.source}, not judged (a log of another machine?)")
    if unavoidable:
        f.notes.append(
            f"{T._list(sorted(unavoidable))}: no NVLink between these GPUs and no ring over NVLink alone "
            "exists on this machine, so NCCL's ring crosses PCIe there"
        )
    if shm_without_nvlink:
        f.warnings.append(
            f"NCCL moves data through host memory (SHM) between {T._list(sorted(shm_without_nvlink))}: "
            "P2P over PCIe is unavailable or off (GeForce cards from Ada on have none; ACS/IOMMU "
            "can block it; NCCL_P2P_DISABLE)"
        )
    p2p_nvlink = [1 for c, a, b in intra if c.transport == "P2P" and a is not None and b is not None and nv(a, b)]
    if p2p_nvlink and not bad:
        f.notes.append("P2P runs over NVLink")
    rings = [(i, o) for p, n, i, o in log.graphs if p == 4]
    if (
        machine_nvlink
        and rings
        and len({a for _, a, _ in intra} | {b for _, _, b in intra}) > 1
        and not any(i in NVLINK_GRAPH_TYPES for i, _ in rings)
    ):
        f.problems.append(
            f"NCCL's topology search settled on {'/'.join(sorted({i for i, _ in rings}))} paths inside the "
            f"node although {topo.source} shows NVLink: NCCL does not see NVLink" + ("" if bad else f"; {FIXES}")
        )
    if not link_matrix:
        kinds = sorted({c.kind for c, _, _ in intra if c.transport == "P2P"})
        if kinds:
            graph_nv = any(i in NVLINK_GRAPH_TYPES for _, _, i, _ in log.graphs)
            f.notes.append(
                f"{', '.join(kinds)} used between GPUs; "
                + (
                    "NCCL's graph search reports NVLink paths (type NVL)"
                    if graph_nv
                    else "without the link matrix (nvidia-smi topo -m, or --topo-file) it cannot be told whether P2P runs over NVLink"
                )
            )


def _judge_network(log, f, remote) -> None:
    nets = {via.split("/")[1] for vias in remote.values() for via in vias if via.startswith("NET/")}
    if "Socket" in nets:
        f.warnings.append(
            "between nodes NCCL uses TCP sockets (NET/Socket): expect a fraction of an InfiniBand/RoCE "
            "link"
            + (
                "; NET/IB found no device (no RDMA NIC visible, or its libraries/plugin missing here)"
                if log.no_ib_device
                else ""
            )
        )
    ib = [via for vias in remote.values() for via in vias if via.startswith("NET/IB")]
    if ib and not any("GDRDMA" in v for v in ib):
        f.warnings.append(
            "NET/IB connections without /GDRDMA: GPUDirect RDMA is not used, so network traffic bounces "
            "through host memory (nvidia-peermem / dmabuf support, NCCL_NET_GDR_LEVEL)"
        )
    if any(k[0] == "CollNet" for k in remote):
        f.notes.append("CollNet (in-network reduction, e.g. SHARP) is in use")


# --- the live run --------------------------------------------------------------------------------


def find_allreduce(build_dir: Path) -> tuple[list[str] | None, str]:
    """The command of one small allreduce over every visible GPU: the built triaudit_allreduce,
    else nccl-tests' all_reduce_perf from PATH."""
    hits = (
        sorted(p for p in Path(build_dir).rglob("triaudit_allreduce") if p.is_file())
        if Path(build_dir).is_dir()
        else []
    )
    if hits:
        return [
            str(hits[0]),
            "--types=fp32",
            "--modes=out_of_place",
            "--algos=auto",
            "--record-choice=off",
            "--min-bytes=1MiB",
            "--max-bytes=1MiB",
            "--min-time=0.01",
            "--warmup-s=0",
            "--benchmark_repetitions=1",
            "--benchmark_filter=^allreduce/out_of_place/fp32/algo:auto/bytes:1048576/",
        ], str(hits[0])
    perf = shutil.which("all_reduce_perf")
    if perf:
        return [perf, "-b", "1M", "-e", "1M", "-n", "5", "-w", "2"], perf
    return None, ""


def run_allreduce(build_dir: Path, gpus: int, timeout: int = 180) -> tuple[str | None, str]:
    """(NCCL log text, what ran) or (None, why not)."""
    cmd, what = find_allreduce(build_dir)
    if cmd is None:
        return None, (
            f"no triaudit_allreduce under {build_dir} and no all_reduce_perf on PATH: NCCL's path not checked "
            "(build with NCCL, or give a saved log: --nccl-log F)"
        )
    if cmd[0].endswith("all_reduce_perf"):
        cmd += ["-g", str(gpus)]
    env = dict(os.environ, NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,GRAPH,ENV")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return out or None, f"{what} did not finish within {timeout} s (a hang in NCCL's setup is itself a finding)"
    except OSError as e:
        return None, f"{what}: cannot run: {e}"
    text = p.stdout + p.stderr
    how = f"{what}: one 1 MiB fp32 allreduce over {gpus} GPUs with NCCL_DEBUG=INFO (exit {p.returncode})"
    return text, how


# --- what doctor calls ---------------------------------------------------------------------------


def _smi(args: list[str], timeout: int = 60) -> tuple[int, str]:
    try:
        p = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except FileNotFoundError:
        return 127, "nvidia-smi: not found"
    except (OSError, subprocess.SubprocessError) as e:
        return 1, str(e)


def _section(f: T.Findings) -> dict:
    rows = dict(f.rows)
    for k, n in enumerate(f.notes):
        rows["note" if k == 0 else f"note {k + 1}"] = n
    return rows


def check(
    build_dir: Path,
    topo_file: Path | None = None,
    nccl_log_file: Path | None = None,
    live: bool = True,
    smi_gpus: list[dict] | None = None,
    nvlink_text: str | None = None,
    run_nccl: bool = True,
    visible_gpus: int | None = None,
) -> T.Findings:
    """Everything interconnect-related for doctor. Raises InputError for an unusable file.
    Returns Findings whose rows are doctor sections (section name -> rows)."""
    out = T.Findings()
    smi_gpus = smi_gpus or []
    topo = None
    if topo_file is not None:
        topo = load_topology(topo_file)
    elif live and len(smi_gpus) >= 2:
        rc, text = _smi(["topo", "-m"])
        if rc == 0:
            try:
                topo = T.parse_topo(text, "nvidia-smi topo -m")
            except T.TopologyError as e:
                out.warnings.append(f"could not read the link matrix: {e}")
        else:
            out.warnings.append(f"nvidia-smi topo -m failed (exit {rc}): {text.strip()[:200]}")
    if topo is not None:
        f = T.judge_topology(topo)
        out.rows["topology"] = _section(f)
        out.problems += f.problems
        out.warnings += f.warnings
    states = T.parse_nvlink_status(nvlink_text or "")
    if states:
        f = T.judge_nvlink(states)
        out.rows["nvlink"] = _section(f)
        out.problems += f.problems
        out.warnings += f.warnings
    elif nvlink_text and nvlink_text.strip():
        out.rows["nvlink"] = {"state": nvlink_text.strip()[:300]}

    log = None
    if nccl_log_file is not None:
        log = load_nccl_log(nccl_log_file)
    elif live and run_nccl:
        n = visible_gpus if visible_gpus is not None else len(smi_gpus)
        if n >= 2:
            text, how = run_allreduce(build_dir, n)
            if text is None:
                out.rows["nccl path"] = {"not checked": how}
            else:
                log = N.parse_nccl_log(text, how)
                if not log.info_lines and not log.fatal:
                    tail = " | ".join(text.strip().splitlines()[-3:])[:300]
                    out.warnings.append(
                        f"the allreduce run printed no NCCL INFO line, NCCL's path not checked: {how}: {tail}"
                    )
                    log = None
        elif n == 1:
            out.rows["nccl path"] = {"not checked": "one GPU visible: no GPU-to-GPU path"}
    if log is not None:
        bus = {
            N.normal_bus_id(g.get("pci.bus_id", "")): int(g["index"])
            for g in smi_gpus
            if str(g.get("index", "")).isdigit() and g.get("pci.bus_id")
        }
        f = judge_nccl(log, topo, bus)
        out.rows["nccl path"] = _section(f)
        out.problems += f.problems
        out.warnings += f.warnings
    return out
