"""What a corner is. Everything triaudit knows about one of its measurements is declared once, in
that corner's module of this package (corners/stream.py, corners/gemm.py, ...): the executable and
the run steps that execute it, whether it measures one GPU or a node, the arguments each profile
gives it, how long its cases take (the time model), the headline figures a card is quoted by, the
gate's checks, the energy figures, how peer tools' outputs map onto it, and the report section
that shows it. The rest of the package loops over the registry (corners/__init__.py) instead of
naming corners, as nccl-tests loops over its `testColl` table and nvbandwidth over its `Testcase`s.

Standard library only: `run` and `doctor` import it on a bare GPU machine, and every wing reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

PROFILE_NAMES = ("quick", "full", "exhaustive")
# The arguments every profile shares, used by each corner's steps. Five repetitions: the fewest with
# which the Mann-Whitney test of `compare` can reach p < 0.05 (with 3 against 3 it never can). Each
# call warms up before its timed regions so the clock comes back after the host's checks (the GPU
# boosts within milliseconds): 0.1 s nightly (quick), 0.15 s in the full profile, 0.2 s (the
# executables' default) in the exhaustive one. `triaudit run --dry-run --card h200` shows the
# estimated time: quick <= 60 s (90 s on eight GPUs) and full <= 5 min on an H200, held by a test.
REPS = "--benchmark_repetitions=5"
QUICK_WARMUP = "--warmup-s=0.1"
FULL_WARMUP = "--warmup-s=0.15"


@dataclass(frozen=True)
class Step:
    """One executable run of a `triaudit run`: its results are <name>.json."""

    name: str
    executable: str
    profiles: Mapping[str, tuple[str, ...]]  # profile -> the arguments it gives this step


@dataclass(frozen=True)
class Headline:
    """A figure a card is quoted by (the summary, `plan --run`, the gate, `floors derive`, energy and
    `figures` all take it from results/figures.py, which reads these declarations).

    Per card (or per GPU), the first source glob that has a measured row of `counter` is taken;
    among its rows, those at the largest `largest` axis, then (for `prefer`) the rows whose column
    has the preferred value, then the best median (`best`: "max" or "min")."""

    key: str  # what other parts ask for: "bf16/burst", "triad", "h2d", ...
    label: str  # with its unit, as the summary shows it
    counter: str
    scale: float  # the unit cells are written in, in base units
    sources: tuple[str, ...]  # case-name globs, in order of preference
    largest: str = ""  # an axis: only the rows at its largest value count ("bytes", "kernels")
    best: str = "max"
    datasheet: str = ""  # what its fraction is of: "compute:<precision>", "bandwidth", "pcie", ""
    roles: tuple[str, ...] = ()  # what it stands for elsewhere: "hbm", "ridge_flops", "gradient_sync", ...
    shown: bool = True  # a row of the summary (False: read by plan or the gate only)
    per_link: str = ""  # "slowest"/"fastest": one figure per link type of a GPU pair (p2p)
    min_ranks: int = 0  # a collective's figure counts only over at least this many GPUs


@dataclass(frozen=True)
class EnergyFigure:
    """Energy per unit of a headline, from the watts its case's energy counter gave."""

    headline: str
    label: str
    scale: float


@dataclass(frozen=True)
class Check:
    """One of `triaudit gate`'s performance checks: the headline it judges, the counter, its
    direction and unit, and its Prometheus name. A floor names the exact case it holds; the
    headline's sources are the cases `floors derive` looks for."""

    id: str
    label: str
    scope: str  # "gpu": one verdict per GPU; "node": one per node (p2p: one per link type)
    metric: str  # the counter judged
    higher_better: bool
    headline: str  # the Headline of the same corner it judges
    unit: tuple[str, float]  # how people read it: (label, divisor from base units)
    prom_name: str  # the Prometheus metric of the measured figure (base units)
    prom_help: str = ""
    prom_labels: dict = field(default_factory=dict)
    candidates: tuple[str, ...] = ()  # filled from the headline by the registry


@dataclass(frozen=True)
class PeerTool:
    """How a peer tool's results map onto this corner: `names` are the tool's own names of what it
    measures here (nccl-tests' collective, nvbandwidth's testcases ...)."""

    tool: str
    names: tuple[str, ...] = ()


# A time model: (case name, card spec, settings, GPUs on the machine) -> seconds of all repetitions.
TimeModel = Callable[..., float]


@dataclass(frozen=True)
class Corner:
    name: str  # the first part of its cases' names: stream/..., gemm/...
    account: str  # compute, bandwidth, movement (the soak: all three)
    title: str  # as the report names it
    order: int  # its place in a run and on the page
    steps: tuple[Step, ...]
    scope: str = "gpu"  # "gpu": measured on each GPU; "node": once over all of a node's GPUs
    judged: str = ""  # the counter its cases are judged on
    time_model: TimeModel | None = None
    # its executable's fixed cost beyond a process's, from its cases and the profile's arguments
    startup_s: Callable[[list[str], list[str]], float] | None = None
    headlines: tuple[Headline, ...] = ()
    checks: tuple[Check, ...] = ()
    energy: tuple[EnergyFigure, ...] = ()
    peers: tuple[PeerTool, ...] = ()
    section: str = ""  # the report section builder that shows it (report/sections: SECTION_BUILDERS)
    ranks_context: str = ""  # a collective: the context key of its GPU count
    gpus_context: str = ""  # a node-level corner: the context key of the GPUs it saw on the node
    collective: str = ""  # a collective: NCCL's name of it (ncclAllReduce -> "AllReduce")
    bus_factor: Callable[[int], float] | None = None  # a collective: busbw = algbw x this(ranks)
    run: bool = True  # a step of `triaudit run` (the soak has its own command)

    @property
    def executable(self) -> str:
        return self.steps[0].executable if self.steps else ""

    @property
    def per_gpu(self) -> bool:
        return self.scope == "gpu"

    def headline(self, key: str) -> Headline | None:
        return next((h for h in self.headlines if h.key == key), None)
