"""What every NCCL collective shares, as nccl-tests' `testColl` table has it: its executables (one
process over every visible GPU, and `_mpi`, one rank per process), a node-level scope, the profiles'
arguments, the time model, the busbw headline and gate check, nccl-tests' name of it and the report
section. A collective's own module (corners/<name>.py) is one call of `collective_corner`.

Case names: `<name>/<out_of_place|in_place|graph>/<type>/algo:<ring|auto|nvls>[/root:<r>]/bytes:<N>`
(the message-size sweep; broadcast names its root) and `<name>/scaling/<type>/algo:<a>/gpus:<g>/bytes:<N>` (`ranks:<r>` under MPI;
the GPU-count sweep). Counters: algbw, busbw (nccl-tests' definitions), ranks. The context names the
ranks (`<name>_ranks`), the GPUs per node (`<name>_gpus_per_node`) and the link (`<name>_link`)."""

from __future__ import annotations

from collections.abc import Callable

from triaudit.core import specs
from triaudit.corners import timing as t
from triaudit.corners.base import FULL_WARMUP, QUICK_WARMUP, REPS, Check, Corner, Headline, PeerTool, Step

NCCL_INIT_S = 1.5  # one set of communicators
NCCL_LATENCY_S = 15e-6  # one small collective


def collectives_per_region(size: int) -> int:
    """The harness's count: at least 20 (nccl-tests' iterations per measurement), at most 200."""
    return max(20, min(200, (32 << 20) // max(size, 1)))


def time_model(bus_factor: Callable[[int], float]) -> Callable[..., float]:
    def case(name: str, card: specs.CardSpec, s: t.Settings, gpus: int = 1, axes: dict | None = None) -> float:
        a = t.name_args(name)
        size = int(a["bytes"])
        ranks = int(a.get("gpus", a.get("ranks", gpus)))
        if ranks > gpus:
            return t.CALL_OVERHEAD_S * s.repetitions
        link = card.nvlink_gbps / 2 * 1e9 if card.nvlink_gbps and ranks > 1 else card.mem_bw / 2
        one = NCCL_LATENCY_S + size * (bus_factor(ranks) if ranks > 1 else 1.0) / link
        check = size / 4 / t.HOST_CHECK_PER_S / 20  # counted on the device; a little host work
        return s.repetitions * t.loop(s, collectives_per_region(size) * one, check)

    return case


def startup_s(names: list[str], args: list[str]) -> float:
    """Communicators per algorithm variant and, unless --record-choice=off, the NCCL-choice probe
    (a child with its own NCCL start-up), beside the process's start."""
    algos = {(t.name_args(n).get("algo") or "auto") for n in names}
    probe = 0 if "--record-choice=off" in args else 1
    return NCCL_INIT_S * (len(algos) + probe) + 0.002 * len(names)


def profiles_of(name: str) -> dict[str, tuple[str, ...]]:
    """The profiles' arguments of a collective (the gradient-synchronising one has its own, the one a
    training step waits on): NCCL's own choice in FP32 out of place, no choice probe; nightly at one
    size (64 MiB), the full profile at 8 B (latency) and 2 GiB (bandwidth) with the GPU-count sweep
    at 64 MiB (a rooted collective's root:<r> before the count); every case in the exhaustive one."""
    common = ("--types=fp32", "--modes=out_of_place", "--algos=auto", "--record-choice=off")
    return {
        "quick": (
            *common,
            "--max-bytes=64MiB",
            "--min-time=0.03",
            QUICK_WARMUP,
            REPS,
            "--benchmark_filter=/bytes:67108864/",
        ),
        "full": (
            *common,
            "--min-time=0.05",
            FULL_WARMUP,
            "--scaling=on",
            REPS,
            f"--benchmark_filter=(/bytes:(8|2147483648)/|{name}/scaling/fp32/algo:auto/(root:[0-9]+/)?gpus:"
            "[0-9]+/bytes:67108864/)",
        ),
        "exhaustive": ("--scaling=on", "--min-time=0.05", REPS),
    }


def collective_corner(
    name: str,
    title: str,
    order: int,
    bus_factor: Callable[[int], float],
    nccl_tests: tuple[str, ...],
    profiles: dict[str, tuple[str, ...]] | None = None,
    roles: tuple[str, ...] = (),
) -> Corner:
    """The corner of one collective. `title`: as people say it ("allgather"); `bus_factor`: busbw =
    algbw x bus_factor(ranks), nccl-tests' getBw; `nccl_tests`: its names in nccl-tests' outputs."""
    exe = f"triaudit_{name}"
    headline = Headline(
        name,
        f"NCCL {title} busbw, largest message (GB/s)",
        "busbw",
        1e9,
        # fp32 out of place (nccl-tests' default), NCCL's own choice first, then Ring (a rooted
        # collective's root:<r> between the algorithm and the size); older runs had no algo.
        (
            f"{name}/out_of_place/fp32/algo:auto/*bytes:*",
            f"{name}/out_of_place/fp32/algo:ring/*bytes:*",
            f"{name}/out_of_place/fp32/bytes:*",
        ),
        largest="bytes",
        min_ranks=2,
        roles=roles,
    )
    return Corner(
        name=name,
        account="movement",
        title=f"Movement: NCCL {title}",
        order=order,
        steps=(Step(exe, exe, profiles or profiles_of(name)),),
        scope="node",
        judged="busbw",
        time_model=time_model(bus_factor),
        startup_s=startup_s,
        headlines=(headline,),
        checks=(
            Check(
                name,
                f"NCCL {title} bus bandwidth, largest size",
                "node",
                "busbw",
                True,
                name,
                ("GB/s", 1e9),
                f"triaudit_{name}_bus_bytes_per_second",
                f"NCCL {title} bus bandwidth (bytes per second)",
            ),
        ),
        peers=(PeerTool("nccl-tests", nccl_tests),),
        section="collective",
        ranks_context=f"{name}_ranks",
        gpus_context=f"{name}_gpus_per_node",
        collective=title,
        bus_factor=bus_factor,
    )
