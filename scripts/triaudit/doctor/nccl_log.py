"""NCCL's `NCCL_DEBUG=INFO` log as data: which transport each channel's connection uses.

Standard library only (doctor imports it). The line shapes follow NCCL's own format strings
(src/transport/{p2p,shm,net,coll_net}.cc, src/init.cc, src/graph/search.cc across releases):

  Channel 00/0 : 0[0] -> 1[1] via P2P/direct pointer/read          (2.19+: [nvmlDev])
  Channel 00/0 : 0[4b000] -> 7[cf000] via P2P/IPC/read             (2.12-2.18: [busId])
  Channel 00 : 0[0] -> 1[1] via SHM/direct/direct                  (SHM has no connIndex)
  Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read   .../P2P/MNNVL   .../P2P/IPC/CE
  Channel 00/0 : 0[0] -> 2[2] via P2P/indirect/1[1]/read           (through an intermediate GPU)
  Channel 00/0 : 9[51000] -> 0[4b000] [receive] via NET/Socket/0
  Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0(1)/GDRDMA(PCI)/Shared   ((n): PXN proxy rank)
  CollNet 00/0 : 0 [send] via COLLNET/SHARP/0/GDRDMA               (older: "Coll 00 : ...")
  Ring 00 : 0[0] -> 1[1] via P2P/IPC                               (2.4-2.6)
  NVLS multicast support is [not ]available on dev 0[ (NVLS_NCHANNELS 16)|, transport enabled, ...]
  24 coll channels, 0 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer
  Pattern 4, crossNic 0, nChannels 24, bw 20.000000/20.000000, type NVL/PIX, sameChannels 1   (NCCL_GRAPH)
  comm 0x... rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId a4000 commId 0x... - Init START
  NCCL_P2P_LEVEL set by environment to NVL                         (NCCL_ENV)

Lines may carry any prefix (`host:pid:tid [dev] NCCL INFO`, a launcher's `[rank0]:`, timestamps).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PREFIX = re.compile(
    r"(?:^|\s)(?:(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] )?NCCL (?P<level>INFO|WARN|TRACE) (?P<msg>.*)$"
)
_CHANNEL = re.compile(
    r"^(?:Channel|Ring) (?P<ch>\d+)(?:/(?P<conn>\d+))? : (?P<src>\d+)(?:\[(?P<sdev>[0-9a-fA-F]+)\])? -> "
    r"(?P<dst>\d+)(?:\[(?P<ddev>[0-9a-fA-F]+)\])?(?: \[(?P<dir>send|receive)\])? via (?P<via>\S.*?)\s*$"
)
_COLLNET = re.compile(
    r"^(?:CollNet|Coll) (?P<ch>\d+)(?:/(?P<conn>\d+))? : (?P<rank>\d+) \[(?P<dir>send|receive)\] via (?P<via>COLLNET/\S.*?)\s*$"
)
_COMM = re.compile(
    r"comm 0x[0-9a-fA-F]+ rank (?P<rank>\d+) nranks (?P<nranks>\d+) cudaDev (?P<cuda>\d+)"
    r"(?: nvmlDev (?P<nvml>\d+))? busId (?P<bus>[0-9a-fA-F]+)"
)
_NNODES = re.compile(r"rank (?P<rank>\d+) nRanks (?P<nranks>\d+) nNodes (?P<nnodes>\d+) localRanks (?P<local>\d+)")
_NVLS = re.compile(r"NVLS multicast support is (?P<not>not )?available on dev (?P<dev>\d+)")
_SUMMARY = re.compile(
    r"(?P<coll>\d+) coll channels(?:, (?P<collnet>\d+) collnet channels)?(?:, (?P<nvls>\d+) nvls channels)?"
)
_GRAPH = re.compile(
    r"Pattern (?P<pattern>\d+), crossNic \d+, nChannels (?P<n>\d+), (?:bw|speed) [\d.]+/[\d.]+, "
    r"type (?P<intra>[A-Z0-9]+)/(?P<inter>[A-Z0-9]+)"
)
_ENV = re.compile(r"^(?P<name>NCCL_\w+) set by environment to (?P<value>.*?)\.?\s*$")
_VERSION = re.compile(r"NCCL version (?P<v>\d+\.\d+\.\d+)")
_NET_VIA = re.compile(r"^NET/(?P<name>.+?)/(?P<dev>\d+)(?:\((?P<proxy>\d+)\))?(?P<rest>.*)$")
# A run that died: NCCL's WARNs that only a failure prints (CUDACHECK's "Cuda failure", the result
# strings, "fatal"), nccl-tests' own failure lines, and NCCLCHECK's "file.cc:line -> N" trace, which
# NCCL prints only for a call that returned an error (N = ncclResult_t; 7, ncclInProgress, is none).
_FATAL_WARN = re.compile(
    r"cuda failure|unhandled (?:system|cuda) error|\bfatal\b|got completion from peer|call to \S+ failed", re.I
)
_TEST_FAILURE = re.compile(r"\S+: Test (?:NCCL|CUDA) failure .*|Invalid number of GPUs: .*")
_FAILURE_HOST = re.compile(r"^(\S+): (Test (?:NCCL|CUDA) failure .*)$")
_NIC = re.compile(r"\b[a-z][a-z0-9]*_\d+:\d+\b")  # mlx5_3:1
_TRACE = re.compile(r"^(?P<where>\S+:\d+) -> (?P<code>[1-6])\b")
_THREAD = re.compile(r"(?:^|\s)(?P<thread>[^\s:\[\]]+:\d+:\d+) \[\d+\]")
_WHERE = re.compile(r"(?P<where>\S+:\d+) NCCL WARN")
RESULTS = {
    1: "ncclUnhandledCudaError",
    2: "ncclSystemError",
    3: "ncclInternalError",
    4: "ncclInvalidArgument",
    5: "ncclInvalidUsage",
    6: "ncclRemoteError",
}


@dataclass
class Connection:
    channel: int
    conn_index: int | None
    src_rank: int
    src_dev: str | None  # the bracketed device as printed (nvmlDev or hex busId; see device_kind)
    dst_rank: int
    dst_dev: str | None
    direction: str  # "send", "receive" or "" (P2P/SHM print the sender's side only)
    transport: str  # "P2P", "SHM", "NET", "COLLNET"
    kind: str  # "P2P/direct pointer", "P2P/IPC", "P2P/CUMEM", "P2P/MNNVL", "P2P/indirect", "SHM", "NET/IB", ...
    via: str  # everything after "via", as printed
    host: str = ""
    via_rank: int | None = None  # P2P/indirect's intermediate rank


@dataclass
class Fatal:
    """A line that says the run failed: an NCCL WARN (with where NCCL printed it) or nccl-tests' own."""

    line: int
    message: str  # as printed; addresses (0x...) shown as 0x… so ranks' lines group
    nccl_warn: bool
    where: str = ""
    count: int = 1
    returned: str = ""  # the error NCCL returned up the call stack after it, "ncclSystemError (2)"
    on: list = field(default_factory=list)  # the hosts (nccl-tests) or NICs (NET/IB) it was printed for


@dataclass
class RankInfo:
    rank: int
    nranks: int
    cuda_dev: int
    nvml_dev: int | None
    bus_id: str
    host: str = ""


@dataclass
class NcclLog:
    source: str
    version: str | None = None
    ranks: dict = field(default_factory=dict)  # rank -> RankInfo (last communicator seen wins)
    connections: list = field(default_factory=list)
    nvls_support: dict = field(default_factory=dict)  # dev -> bool
    summary: dict = field(default_factory=dict)  # coll / collnet / nvls channel counts as printed
    graphs: list = field(default_factory=list)  # (pattern, nChannels, intra type, inter type)
    env: dict = field(default_factory=dict)
    nnodes: int | None = None
    networks: list = field(default_factory=list)  # "Using network IB" -> IB
    no_ib_device: bool = False
    nvls_tree: bool = False
    warns: list = field(default_factory=list)  # NCCL WARN messages
    fatal: list = field(default_factory=list)  # Fatal, one per distinct message, in order of first line
    error_returns: list = field(default_factory=list)  # (line, file:line, code) of traces after no WARN
    info_lines: int = 0

    @property
    def nranks(self) -> int | None:
        return max((r.nranks for r in self.ranks.values()), default=None)


def _kind(via: str) -> tuple[str, str, int | None]:
    """(transport, kind, intermediate rank) of a `via ...` text."""
    head = via.split("/")
    t = head[0].upper()
    if t == "P2P":
        sub = head[1] if len(head) > 1 else ""
        if sub.startswith("indirect"):
            m = re.match(r"P2P/indirect/(\d+)", via)
            return "P2P", "P2P/indirect", int(m.group(1)) if m else None
        if re.fullmatch(r"\d+", sub):  # some vendor builds print a device number
            return "P2P", "P2P", None
        return "P2P", f"P2P/{sub}" if sub else "P2P", None
    if t == "SHM":
        return "SHM", "SHM", None
    if t == "NET":
        m = _NET_VIA.match(via)
        return "NET", f"NET/{m.group('name')}" if m else "NET", None
    if t == "COLLNET":
        return "COLLNET", "/".join(head[:2]), None
    return t, head[0], None


class _Failures:
    """Collects the fatal lines of a log as it is read; a WARN that is not fatal by its words is one
    when its thread then returns an error up the call stack (the `-> N` trace)."""

    def __init__(self, log: NcclLog):
        self.log = log
        self.by_key: dict[str, Fatal] = {}
        self.last_warn: dict[str, tuple] = {}  # thread -> (line, message, where, Fatal | None) of its last WARN

    def add(self, line: int, message: str, nccl_warn: bool, where: str = "", returned: str = "") -> Fatal:
        """One more line of a failure: ranks print the same one with their own host, NIC or address."""
        shown = re.sub(r"0x[0-9a-fA-F]+", "0x…", message)
        key, on = shown, ""
        host = _FAILURE_HOST.match(shown)
        if host and not nccl_warn:
            on, key = host.group(1), host.group(2)
        nic = _NIC.search(key)
        if nic:
            on, key = nic.group(0), key.replace(nic.group(0), "<nic>")
        f = self.by_key.get(key)
        if f is None:
            f = self.by_key[key] = Fatal(line, shown, nccl_warn, where, 0, returned)
            self.log.fatal.append(f)
        f.count += 1
        if on and on not in f.on:
            f.on.append(on)
        return f

    def warn(self, line: int, raw: str, msg: str) -> None:
        w, t = _WHERE.search(raw), _THREAD.search(raw)
        where = w.group("where") if w else ""
        fatal = self.add(line, msg, True, where) if _FATAL_WARN.search(msg) else None
        if t:
            self.last_warn[t.group("thread")] = (line, msg, where, fatal)

    def info(self, line: int, raw: str, msg: str) -> None:
        m = _TRACE.match(msg)
        if not m:
            return
        code = int(m.group("code"))
        returned = f"{RESULTS[code]} ({code})"
        t = _THREAD.search(raw)
        thread = t.group("thread") if t else ""
        warned = self.last_warn.get(thread)
        if warned is None:  # an error with no WARN before it on this thread
            self.log.error_returns.append((line, m.group("where"), returned))
            return
        fatal = warned[3]
        if fatal is None:  # the first trace after this WARN: the WARN was the failure
            fatal = self.add(warned[0], warned[1], True, warned[2])
            self.last_warn[thread] = (*warned[:3], fatal)
        fatal.returned = fatal.returned or returned


def parse_nccl_log(text: str, source: str = "NCCL log") -> NcclLog:
    log = NcclLog(source)
    failures = _Failures(log)
    for lineno, raw in enumerate((text or "").splitlines(), 1):
        v = _VERSION.search(raw)
        if v and not log.version:
            log.version = v.group("v")
        m = _PREFIX.search(raw)
        if not m:
            t = _TEST_FAILURE.search(raw)
            if t:
                failures.add(lineno, t.group(0).strip(), False)
            continue
        host, msg, level = m.group("host") or "", m.group("msg").strip(), m.group("level")
        if level == "WARN":
            log.warns.append(msg)
            failures.warn(lineno, raw, msg)
            continue
        log.info_lines += 1
        failures.info(lineno, raw, msg)
        c = _CHANNEL.match(msg)
        if c:
            transport, kind, via_rank = _kind(c.group("via"))
            log.connections.append(
                Connection(
                    int(c.group("ch")),
                    int(c.group("conn")) if c.group("conn") else None,
                    int(c.group("src")),
                    c.group("sdev"),
                    int(c.group("dst")),
                    c.group("ddev"),
                    c.group("dir") or "",
                    transport,
                    kind,
                    c.group("via"),
                    host,
                    via_rank,
                )
            )
            continue
        c = _COLLNET.match(msg)
        if c:
            r = int(c.group("rank"))
            log.connections.append(
                Connection(
                    int(c.group("ch")),
                    int(c.group("conn")) if c.group("conn") else None,
                    r,
                    None,
                    r,
                    None,
                    c.group("dir"),
                    "COLLNET",
                    _kind(c.group("via"))[1],
                    c.group("via"),
                    host,
                )
            )
            continue
        c = _COMM.search(msg)
        if c:
            r, bus = int(c.group("rank")), c.group("bus").lower()
            nvml = int(c.group("nvml")) if c.group("nvml") else None
            prev = log.ranks.get(r)
            if nvml is None and prev is not None and prev.bus_id == bus:
                nvml = prev.nvml_dev  # "Destroy COMPLETE" lines leave nvmlDev out
            log.ranks[r] = RankInfo(
                r, int(c.group("nranks")), int(c.group("cuda")), nvml, bus, host or (prev.host if prev else "")
            )
            continue
        c = _NNODES.search(msg)
        if c:
            log.nnodes = max(log.nnodes or 0, int(c.group("nnodes")))
            continue
        c = _NVLS.search(msg)
        if c:
            log.nvls_support[int(c.group("dev"))] = not c.group("not")
            continue
        if msg.startswith("Connected NVLS"):
            log.nvls_tree = True
            continue
        c = _SUMMARY.match(msg)
        if c:
            log.summary = {k: int(v) for k, v in c.groupdict().items() if v is not None}
            continue
        c = _GRAPH.search(msg)
        if c:
            log.graphs.append((int(c.group("pattern")), int(c.group("n")), c.group("intra"), c.group("inter")))
            continue
        c = _ENV.match(msg)
        if c:
            log.env[c.group("name")] = c.group("value")
            continue
        if msg.startswith("Using network "):
            name = msg[len("Using network ") :].strip()
            if name not in log.networks:
                log.networks.append(name)
        elif msg.startswith("NET/IB : No device found"):
            log.no_ib_device = True
    return log


def bracket_is_bus_id(log: NcclLog, rank: int, dev: str | None) -> bool:
    """Whether a connection line's [x] is a PCI bus id (NCCL 2.12-2.18) or an NVML index (2.19+).
    Decided by the communicator lines where they name both, else by shape: a bus id as NCCL
    prints it ends in the device/function digits, so it has hex letters or at least four digits."""
    if dev is None:
        return False
    info = log.ranks.get(rank)
    if info is not None:
        if info.nvml_dev is not None and dev == str(info.nvml_dev) and dev != info.bus_id:
            return False
        if dev.lower() == info.bus_id:
            return True
    return bool(re.search(r"[a-fA-F]", dev)) or len(dev) >= 4


def normal_bus_id(text: str) -> str:
    """'00000000:4B:00.0' (nvidia-smi), '0000:4b:00.0' and '4b000' (NCCL) -> '4b000'."""
    digits = re.sub(r"[^0-9a-fA-F]", "", text or "").lower().lstrip("0")
    return digits or "0"


def ranges(values) -> str:
    """[0, 1, 2, 5] -> '0-2, 5'."""
    vals = sorted(set(values))
    out, k = [], 0
    while k < len(vals):
        j = k
        while j + 1 < len(vals) and vals[j + 1] == vals[j] + 1:
            j += 1
        out.append(str(vals[k]) if j == k else f"{vals[k]}-{vals[j]}")
        k = j + 1
    return ", ".join(out)


def is_fatal_warn(message: str) -> bool:
    """A WARN only a failure prints (the promoted ones, after an error trace, are in NcclLog.fatal)."""
    return bool(_FATAL_WARN.search(message))
