"""GPU-to-GPU topology from `nvidia-smi topo -m` (or `-mp`, `-p2p`) and NVLink link states from
`nvidia-smi nvlink -s`, as data, plus what they say is wrong.

Standard library only: `triaudit doctor` imports this on a bare GPU machine.

Formats handled (every one nvidia-smi has printed): cells separated by tabs or by runs of spaces
(a dump pasted through a terminal or a web page loses its tabs; a tab expanded at a tab stop may
leave a single space); the old header naming NICs directly (`mlx5_0`) and the newer one (`NIC0` +
a `NIC Legend`, a `GPU NUMA ID` column); CPU/NUMA affinity columns or none; rows with a leading
space (`topo -p2p`); the Legend, whose `NV#` line tells `topo -m` from `topo -mp` (PCIe paths
only: no NVLink is ever shown there, so it must not be read as "no NVLink"); old drivers' `SOC`
(the socket interconnect, today's `SYS`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import permutations

from triaudit.core.errors import TriauditError

# Multi-word column titles after the device columns, in the order nvidia-smi prints them.
AFFINITY_TITLES = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
SHORT_TITLES = {"CPU Affinity": "CPUs", "NUMA Affinity": "NUMA node", "GPU NUMA ID": "GPU NUMA id"}

# What each path code means, from nvidia-smi's Legend; SOC is the pre-NODE name of SYS.
LINK_MEANING = {
    "X": "self",
    "SYS": "PCIe + the SMP interconnect between NUMA nodes (QPI/UPI/xGMI)",
    "SOC": "PCIe + the SMP link between CPU sockets (old name of SYS)",
    "NODE": "PCIe + the interconnect between PCIe host bridges in one NUMA node",
    "PHB": "PCIe through a host bridge (the CPU)",
    "PXB": "PCIe through several bridges, not the host bridge",
    "PIX": "PCIe through at most one bridge",
}
# P2P capability codes of `nvidia-smi topo -p2p <r|w|n|a|p>`.
P2P_MEANING = {
    "OK": "supported",
    "CNS": "chipset not supported",
    "GNS": "GPU not supported",
    "TNS": "topology not supported",
    "NS": "not supported",
    "U": "unknown",
}
# PCIe path codes from best to worst, for naming the worst pair.
PCIE_ORDER = ["PIX", "PXB", "PHB", "NODE", "SYS", "SOC"]

_NV = re.compile(r"^NV(\d+)$")


class TopologyError(TriauditError):
    """A dump that cannot be read as a topology matrix; the message says why."""


@dataclass
class Topology:
    source: str
    kind: str  # "m", "mp", "p2p" or "unknown" (no Legend, no NV#)
    devices: list[str]  # column titles: GPU0.., NIC0../mlx5_0..
    cells: dict[tuple[str, str], str]  # (row, column) -> code
    affinity: dict[str, dict[str, str]] = field(default_factory=dict)  # GPU title -> column -> value
    legend: dict[str, str] = field(default_factory=dict)
    nic_legend: dict[str, str] = field(default_factory=dict)

    @property
    def gpus(self) -> list[int]:
        return sorted(int(d[3:]) for d in self.devices if re.fullmatch(r"GPU\d+", d))

    def link(self, i: int, j: int) -> str | None:
        return self.cells.get((f"GPU{i}", f"GPU{j}"))

    def gpu_pairs(self) -> list[tuple[int, int]]:
        g = self.gpus
        return [(a, b) for k, a in enumerate(g) for b in g[k + 1 :]]


def nvlink_count(code: str | None) -> int | None:
    """NV12 -> 12; anything else -> None."""
    m = _NV.match(code or "")
    return int(m.group(1)) if m else None


def describe_link(code: str | None) -> str:
    if code is None:
        return "unknown"
    n = nvlink_count(code)
    if n is not None:
        return f"NVLink x{n}"
    return LINK_MEANING.get(code, P2P_MEANING.get(code, f"unknown code {code!r}"))


def _split_header(line: str) -> tuple[list[str], list[str]]:
    """Device titles and affinity titles of the header line, whatever the whitespace."""
    found = [(line.find(t), t) for t in AFFINITY_TITLES if t in line]
    rest = line
    for _, t in found:
        rest = rest.replace(t, " ")
    return rest.split(), [t for _, t in sorted(found)]


def parse_topo(text: str, source: str = "topology dump") -> Topology:
    """Reads a saved `nvidia-smi topo -m` / `-mp` / `-p2p X` dump. Lines before the header (a
    prompt, the command) are skipped."""
    lines = text.replace("\r\n", "\n").split("\n")
    # The header names GPU0 and has no X; GPU0's own row has an X.
    start = next((k for k, ln in enumerate(lines) if "GPU0" in ln.split() and "X" not in ln.split()), None)
    if start is None:
        raise TopologyError(
            f"{source}: no matrix header (a line naming GPU0, GPU1, ...) - is this `nvidia-smi topo -m` output?"
        )
    devices, titles = _split_header(lines[start])
    if len(set(devices)) != len(devices):
        raise TopologyError(f"{source}: the header names a device twice: {' '.join(devices)}")
    cells: dict[tuple[str, str], str] = {}
    affinity: dict[str, dict[str, str]] = {}
    k = start + 1
    while k < len(lines) and lines[k].strip() and not lines[k].strip().startswith("Legend"):
        tokens = lines[k].split()
        row = tokens[0]
        if row not in devices:
            raise TopologyError(f"{source}: line {k + 1} starts with {row!r}, which the header does not name")
        values = tokens[1:]
        if len(values) < len(devices):
            raise TopologyError(
                f"{source}: row {row} (line {k + 1}) has {len(values)} cells, the header names "
                f"{len(devices)} devices (a cut line?)"
            )
        for col, v in zip(devices, values):
            cells[(row, col)] = v
        if row.startswith("GPU"):
            affinity[row] = dict(zip(titles, values[len(devices) :]))
        k += 1
    gpu_rows = {r for r, _ in cells if re.fullmatch(r"GPU\d+", r)}
    gpu_cols = {d for d in devices if re.fullmatch(r"GPU\d+", d)}
    if not gpu_rows:
        raise TopologyError(f"{source}: the header has no rows under it")
    if gpu_rows != gpu_cols:
        missing = sorted(gpu_cols - gpu_rows)
        raise TopologyError(f"{source}: rows missing for {', '.join(missing)} (a cut dump?)")
    for g in gpu_rows:
        if cells.get((g, g)) != "X":
            raise TopologyError(f"{source}: {g}'s own cell is {cells.get((g, g))!r}, not X: the columns are misaligned")
    legend, nic_legend = _legends(lines[k:])
    codes = {v for (r, c), v in cells.items() if r.startswith("GPU") and c.startswith("GPU")} - {"X"}
    if "OK" in legend or codes & {"OK", "NS", "CNS", "GNS", "TNS"}:
        kind = "p2p"
    elif "NV#" in legend or any(nvlink_count(c) for c in codes):
        kind = "m"
    elif legend:
        kind = "mp"
    else:
        kind = "unknown"
    return Topology(source, kind, devices, cells, affinity, legend, nic_legend)


def _legends(lines: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    legend: dict[str, str] = {}
    nic: dict[str, str] = {}
    section = None
    for ln in lines:
        s = ln.strip()
        if s == "Legend:":
            section = legend
        elif s == "NIC Legend:":
            section = nic
        elif section is legend and "=" in s:
            key, _, meaning = s.partition("=")
            legend[key.strip()] = meaning.strip()
        elif section is nic and ":" in s:
            key, _, name = s.partition(":")
            nic[key.strip()] = name.strip()
    return legend, nic


# --- NVLink link states --------------------------------------------------------------------------


@dataclass
class NvlinkState:
    gpu: int
    name: str
    links: dict[int, float | None] = field(default_factory=dict)  # link -> GB/s (None: active, speed not shown)
    down: list[int] = field(default_factory=list)
    all_inactive: bool = False  # "Unable to retrieve NVLink information as all links are inActive"
    other: list[str] = field(default_factory=list)  # lines not understood, kept for the user

    @property
    def active(self) -> int:
        return len(self.links)

    @property
    def total(self) -> int:
        return len(self.links) + len(self.down)


_GPU_HEADER = re.compile(r"^GPU (\d+): (.*?)(?: \(UUID: [^)]*\))?\s*$")
_LINK_LINE = re.compile(r"^Link (\d+): (.*)$")


def parse_nvlink_status(text: str) -> dict[int, NvlinkState]:
    """`nvidia-smi nvlink -s` (or --status): per GPU the links that are up (with their speed)
    and down (`<inactive>`), or NVML's "all links are inActive"."""
    out: dict[int, NvlinkState] = {}
    cur = None
    for raw in (text or "").splitlines():
        s = raw.strip()
        if not s:
            continue
        m = _GPU_HEADER.match(s)
        if m:
            cur = out.setdefault(int(m.group(1)), NvlinkState(int(m.group(1)), m.group(2)))
            continue
        if cur is None:
            continue
        m = _LINK_LINE.match(s)
        if m:
            link, state = int(m.group(1)), m.group(2).strip()
            speed = re.match(r"([\d.]+)\s*GB/s", state)
            if speed:
                cur.links[link] = float(speed.group(1))
            elif re.search(r"inactive|down|disabled|off", state, re.IGNORECASE):
                cur.down.append(link)
            elif re.search(r"active|up", state, re.IGNORECASE):
                cur.links[link] = None
            else:
                cur.other.append(s)
        elif re.search(r"all links are inactive", s, re.IGNORECASE):
            cur.all_inactive = True
        else:
            cur.other.append(s)
    return out


# --- judgement -----------------------------------------------------------------------------------


@dataclass
class Findings:
    rows: dict = field(default_factory=dict)  # printable lines: key -> value
    problems: list = field(default_factory=list)  # exit 1
    warnings: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def nvlink_ring_exists(gpus: list[int], linked) -> bool:
    """Whether the GPUs can be ordered in a ring whose every hop is an NVLink (a Hamiltonian
    cycle; small n: NCCL rings are per node, so at most a few dozen GPUs, and the search stops at the
    first ring). linked(i, j) -> bool."""
    if len(gpus) < 2:
        return False
    if len(gpus) == 2:
        return linked(gpus[0], gpus[1])
    first, rest = gpus[0], gpus[1:]
    if len(rest) > 10:  # beyond that only switched fabrics occur in practice: all pairs or bust
        return all(linked(a, b) for k, a in enumerate(gpus) for b in gpus[k + 1 :])
    for order in permutations(rest):
        ring = (first,) + order
        if all(linked(ring[k], ring[(k + 1) % len(ring)]) for k in range(len(ring))):
            return True
    return False


def _list(items: list[str], limit: int = 12) -> str:
    return ", ".join(items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit else "")


def matrix_rows(t: Topology) -> dict[str, str]:
    """The GPU x GPU part of the matrix with each GPU's NUMA node and CPUs, as aligned lines."""
    g = t.gpus
    w = max(4, *(len(t.link(i, j) or "?") for i in g for j in g)) + 2
    kw = max(len(f"GPU{i}") for i in g)
    rows = {"GPU#".ljust(kw): "".join(f"GPU{j}".rjust(w) for j in g)}
    nics = [d for d in t.devices if not re.fullmatch(r"GPU\d+", d)]
    for i in g:
        aff = t.affinity.get(f"GPU{i}", {})
        extra = [f"{SHORT_TITLES.get(k, k)} {v}" for k, v in aff.items() if v and v != "N/A"]
        near: dict = {}
        for n in nics:
            code = t.cells.get((f"GPU{i}", n))
            if code in ("PIX", "PXB"):
                near.setdefault(code, []).append(t.nic_legend.get(n, n))
        if near:
            best = min(near, key=PCIE_ORDER.index)
            extra.append(f"nearest NIC {', '.join(near[best])} ({best})")
        rows[f"GPU{i}".ljust(kw)] = "".join((t.link(i, j) or "?").rjust(w) for j in g) + (
            "    " + "; ".join(extra) if extra else ""
        )
    return rows


def judge_topology(t: Topology) -> Findings:
    f = Findings()
    what = {
        "m": "nvidia-smi topo -m",
        "mp": "nvidia-smi topo -mp (PCIe paths only)",
        "p2p": "nvidia-smi topo -p2p (P2P capability)",
        "unknown": "topology matrix without a Legend",
    }[t.kind]
    f.rows["source"] = f"{t.source}: {what}, {len(t.gpus)} GPU(s)"
    f.rows.update(matrix_rows(t))
    pairs = t.gpu_pairs()
    if t.kind == "p2p":
        bad = [
            f"GPU{a}-GPU{b} ({P2P_MEANING.get(t.link(a, b), t.link(a, b))})" for a, b in pairs if t.link(a, b) != "OK"
        ]
        if bad:
            f.warnings.append(
                f"peer-to-peer access is not available between {_list(bad)}: copies between these GPUs "
                "go through host memory and NCCL falls back to SHM"
            )
        f.notes.append(
            "this dump is a P2P capability matrix, not the link matrix: take `nvidia-smi topo -m` to see NVLink"
        )
        return f
    if t.kind == "mp":
        f.notes.append(
            "the dump shows PCIe paths only (`nvidia-smi topo -mp`): NVLink never appears in it, so it says "
            "nothing about NVLink; take `nvidia-smi topo -m` for the full link matrix"
        )
        return f
    if len(t.gpus) < 2:
        f.notes.append("one GPU: no GPU-to-GPU link to check")
        return f
    nv = {(a, b): nvlink_count(t.link(a, b)) for a, b in pairs}
    without = [(a, b) for (a, b), n in nv.items() if not n]
    if t.kind == "unknown" and len(without) == len(pairs):
        f.warnings.append(
            f"{t.source} has no NVLink entry and no Legend, so it cannot tell `topo -m` from `topo -mp` "
            "(which never shows NVLink); if it is `topo -m`, no GPU pair has NVLink"
        )
        return f
    if len(without) == len(pairs):
        worst = max((t.link(a, b) for a, b in pairs), key=lambda c: PCIE_ORDER.index(c) if c in PCIE_ORDER else -1)
        f.warnings.append(
            f"no NVLink between any of the {len(t.gpus)} GPUs: every GPU-to-GPU transfer crosses PCIe "
            f"(worst path {worst}: {describe_link(worst)}); tensor parallelism across them will be "
            "bound by PCIe"
        )
        return f
    if without:
        names = [f"GPU{a}-GPU{b} ({t.link(a, b)})" for a, b in without]
        ring = nvlink_ring_exists(t.gpus, lambda a, b: bool(nv.get((min(a, b), max(a, b)))))
        f.warnings.append(
            f"{len(without)} of {len(pairs)} GPU pairs have no NVLink: {_list(names)}; transfers between "
            "them cross PCIe"
            + (
                ""
                if ring
                else "; no ring over NVLink alone exists, so a ring collective over all GPUs crosses PCIe somewhere"
            )
        )
    counts = sorted({n for n in nv.values() if n})
    if len(counts) > 1 and not without:
        # Every pair linked with unequal counts: on a switched fabric (NV18 everywhere) fewer links
        # on one GPU's pairs means that GPU lost links.
        common = max(counts, key=lambda c: sum(1 for n in nv.values() if n == c))
        low = [f"GPU{a}-GPU{b} (NV{n})" for (a, b), n in nv.items() if n and n < common]
        if low:
            f.warnings.append(
                f"most GPU pairs have NV{common} but {_list(low)} have fewer links: a link may be down "
                "(see the NVLink states)"
            )
    return f


def judge_nvlink(states: dict[int, NvlinkState], gpus: list[int] | None = None) -> Findings:
    """Links down per GPU. Partial loss is a problem; every link down on every GPU is what a
    PCIe card without a bridge reports, so that alone is only a note."""
    f = Findings()
    if not states:
        return f
    any_up = any(s.active for s in states.values())
    for g, s in sorted(states.items()):
        if s.all_inactive:
            f.rows[f"GPU{g}"] = "all links inactive (NVML)"
        elif s.total:
            speeds = sorted({v for v in s.links.values() if v})
            f.rows[f"GPU{g}"] = (
                f"{s.active}/{s.total} links up"
                + (f" at {', '.join(f'{v:g}' for v in speeds)} GB/s" if speeds else "")
                + (f"; down: {', '.join(map(str, s.down))}" if s.down else "")
            )
        else:
            f.rows[f"GPU{g}"] = "no NVLink reported"
        if s.active and s.down:
            f.problems.append(
                f"GPU{g} ({s.name}): NVLink link(s) {', '.join(map(str, s.down))} down, {s.active} of "
                f"{s.total} up: GPU-to-GPU bandwidth over NVLink drops in proportion (reseat/replace, "
                "check `nvidia-smi nvlink -e` error counters)"
            )
        elif (s.all_inactive or (s.total and not s.active)) and any_up:
            f.problems.append(f"GPU{g} ({s.name}): every NVLink link is down while other GPUs' links are up")
    if not any_up and any(s.total or s.all_inactive for s in states.values()):
        f.notes.append(
            "NVLink hardware is reported but no link is active: a PCIe card without an NVLink bridge "
            "reports this, as do links that all failed"
        )
    return f
