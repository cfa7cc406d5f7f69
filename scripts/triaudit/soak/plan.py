"""What a soak runs: its GPUs, its windows, each GPU's peer, and how long a process may take.
Standard library only (it runs on bare GPU nodes)."""

from __future__ import annotations

import math
from dataclasses import dataclass

DEFAULT_WINDOW_S = 60.0  # a point of each time series per minute
MIN_WINDOW_S, MAX_WINDOW_S = 1.0, 3600.0  # what triaudit_soak's --window-s accepts
DEFAULT_DRIFT_PCT = 3.0
# A process's time limit beyond its windows: the setup before the load (buffers of several GB
# filled and hashed on the host, the GEMM's FP64 check and two reruns) and its end. A process past
# it is stopped; one whose windows stop coming for STALL_WINDOWS windows is stopped sooner.
SETUP_ALLOWANCE_S = 600.0
STALL_WINDOWS = 3
STALL_FLOOR_S = 60.0  # short windows: a slow fsync or a loaded host must not look like a hang
# triaudit_soak registers every window's cases when it starts, and `triaudit soak` reads every
# window record when it ends: a day of one-minute windows per process (a longer soak runs one
# process after another, each new first output checked against the golden one), and at most a
# million windows per soak (its hash logs about a gigabyte per GPU).
MAX_WINDOWS_PER_PROCESS = 1440
MAX_WINDOWS = 1_000_000


@dataclass(frozen=True)
class SoakGpu:
    index: int  # nvidia-smi's (PCI order) index
    uuid: str
    pci_bus_id: str
    name: str

    @property
    def tag(self) -> str:
        return f"gpu{self.index}"


def windows_for(duration_s: float, window_s: float) -> tuple[int, float]:
    """(windows, seconds each) for a soak of `duration_s`: windows of `window_s`, or one window of
    the whole duration when it is shorter; ValueError when a window would be under MIN_WINDOW_S."""
    window = min(window_s, duration_s)
    if window < MIN_WINDOW_S:
        raise ValueError(f"a window of {window:g} s: at least {MIN_WINDOW_S:g} s")
    if window > MAX_WINDOW_S:
        raise ValueError(f"a window of {window:g} s: at most {MAX_WINDOW_S:g} s")
    windows = max(1, math.ceil(duration_s / window - 1e-9))
    if windows > MAX_WINDOWS:
        raise ValueError(f"{windows} windows: at most {MAX_WINDOWS:,}; make the window longer")
    return windows, window


def peers(gpus: list[SoakGpu]) -> dict[str, SoakGpu | None]:
    """Each GPU's peer for the p2p round trips: the next one, in a ring (none with one GPU), so
    every GPU sends and receives while all of them run."""
    if len(gpus) < 2:
        return {g.uuid: None for g in gpus}
    return {g.uuid: gpus[(i + 1) % len(gpus)] for i, g in enumerate(gpus)}


def process_limit_s(windows: int, window_s: float) -> float:
    return windows * window_s + SETUP_ALLOWANCE_S


def stall_limit_s(window_s: float, first_window: bool) -> float:
    """How long a process may go without finishing a window (the first: its setup too)."""
    between = max(STALL_WINDOWS * window_s, STALL_FLOOR_S)
    return between + (SETUP_ALLOWANCE_S if first_window else 0.0)
