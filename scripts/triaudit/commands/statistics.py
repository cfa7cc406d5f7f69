"""The statistical options `compare` and `history` share."""

from __future__ import annotations

from triaudit.core import argtypes


def stat_args(p) -> None:
    p.add_argument(
        "--alpha", type=argtypes.probability, default=0.05, help="significance level of the Mann-Whitney U test"
    )
    p.add_argument(
        "--min-effect",
        type=argtypes.non_negative,
        default=0.02,
        help="smallest relative change that counts (0.02 = 2%%)",
    )
    p.add_argument("--min-repetitions", type=argtypes.count, default=4, help="fewer repetitions than this: 'uncertain'")
