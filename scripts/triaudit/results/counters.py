"""Which counter says how fast a case was, and which counters are secondary. Standard library only
(`compare`, `export` and the loader use it; so may `run`).

A rule, not a closed list of case names: whatever corner or peer tool a case comes from, it is
judged on the first of JUDGED that it reports (busbw only when it is not 0: one rank has none).
Everything else (energy, clocks, fractions, algo_id, ...) is secondary: shown, never judged.
"""

from __future__ import annotations

import re

# (counter, higher is better), in order of preference. `time_s` is the real (manual) time per
# iteration, which every case has.
JUDGED: list[tuple[str, bool]] = [
    ("flops", True),
    ("ops", True),
    ("busbw", True),
    ("bytes_per_second", True),
    ("algbw", True),
    ("hidden_fraction", True),
    ("per_kernel_s", False),
    ("time_s", False),
]
JUDGED_NAMES = {name for name, _ in JUDGED}

# Energy counters are unknown on boards whose NVML cannot read energy (DESIGN: "unknown is said,
# never 0"); a NaN there means unknown, not a broken measurement.
_ENERGY = re.compile(r"^(joules|watts|energy)|_per_joule$|_per_watt$")


def is_energy(counter: str) -> bool:
    return bool(_ENERGY.search(counter))


def judged_counter(counters: dict) -> tuple[str, bool] | None:
    """(name, higher_is_better) of the counter a case is judged on, or None when it has none."""
    for name, higher in JUDGED:
        if name in counters and not (name == "busbw" and counters[name] == 0):
            return name, higher
    return None


# How exports and tables show each judged counter: (unit label, divisor from base units).
DISPLAY: dict[str, tuple[str, float]] = {
    "flops": ("TFLOP/s", 1e12),
    "ops": ("TOP/s", 1e12),
    "busbw": ("GB/s", 1e9),
    "algbw": ("GB/s", 1e9),
    "bytes_per_second": ("GB/s", 1e9),
    "hidden_fraction": ("fraction", 1.0),
    "per_kernel_s": ("us", 1e-6),
    "time_s": ("us", 1e-6),
}
