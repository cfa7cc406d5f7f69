"""A synthetic series of nightly runs of one card, for `triaudit history` (tests, and the history
timing in scripts/bench): every case of the catalogue each night (synthetic_cards.py's model of the
card), each night's figures off by a small random drift (0.3 % by default), and from one night on
the cases that match `drop_cases` slower by `drop` (9 %: a BF16 regression). NOT MEASUREMENTS: the
files' names and contexts say "synthetic".

    write_series(out, "h100-sxm", catalogue(build))   # 14 run folders under out/<card>/
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from synthetic_cards import write_cards

# The cases a BF16 regression slows: every GEMM case in BF16 (the ceilings, cuBLASLt, the ladder).
BF16 = r"^gemm/[^/]+/bf16(/|$)"


def night_stamp(night: int) -> str:
    """The run folder's UTC stamp of night `night` (0-based): 02:00 each day from 2026-01-01."""
    return f"202601{night + 1:02d}T020000Z"


def write_series(
    out: Path,
    key: str,
    names: dict[str, list[str]],
    nights: int = 14,
    drop_night: int = 9,
    drop: float = 0.09,
    drop_cases: str = BF16,
    drift: float = 0.003,
    reps: int = 5,
) -> list[Path]:
    """`nights` run folders of card `key`; from night `drop_night` (0-based) on, the cases matching
    `drop_cases` take (1 + drop) times as long. Returns the run folders, oldest first."""
    pattern = re.compile(drop_cases)
    folders = []
    for night in range(nights):
        rng = random.Random(1000 + night)
        drifts: dict[str, float] = {}

        def slower(case: str, night=night, rng=rng, drifts=drifts) -> float:
            f = drifts.setdefault(case, 1.0 + rng.gauss(0.0, drift))
            return f * (1.0 + drop) if night >= drop_night and pattern.search(case) else f

        folders += write_cards(out, [key], names, reps, stamp=night_stamp(night), slower=slower, seed=night)
    return folders
