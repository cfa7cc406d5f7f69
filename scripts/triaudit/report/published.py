"""What users will hold a run against: published measurements of the same cards by other tools
(BabelStream, mamf-finder, nvbandwidth, bandwidthTest), as listed in docs/cards.md
with their sources and doubts, and a report section setting each beside what this run measured.

These are other people's measurements, never ours: the section names the source of every one,
and a ratio far from 1 is a question to answer (clocks, a different counting, our bug), not a
verdict either way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from triaudit.core import numbers as N
from triaudit.core.specs import match_card
from triaudit.peers import statistics as S
from triaudit.report import frames as F
from triaudit.results.figures import figure, headline_figures


@dataclass(frozen=True)
class Published:
    figure: str  # key into FIGURES
    low: float  # a single figure has low == high
    high: float
    source: str
    doubt: str = ""
    statistic: str = S.UNSTATED  # the source's statistic (peers/statistics.py has the tools' own, from their code)


# Per card (specs.py keys). Units are those of FIGURES.
PUBLISHED: dict[str, list[Published]] = {
    "a100-sxm-80": [
        Published(
            "stream_triad", 1700, 1760, "BabelStream, gpu-stream (83-86 % of peak)", statistic=S.PUBLISHED_BABELSTREAM
        ),
        Published(
            "gemm_bf16_best", 271, 271, "mamf-finder, best over its shape sweep", statistic=S.PUBLISHED_MAMF_TABLE
        ),
        Published("h2d_pinned", 25.7, 25.7, "bandwidthTest, DGX A100", statistic=S.PUBLISHED_BANDWIDTHTEST_PINNED),
        Published("d2h_pinned", 25.8, 25.8, "bandwidthTest, DGX A100", statistic=S.PUBLISHED_BANDWIDTHTEST_PINNED),
        Published("h2d_pageable", 10.0, 10.0, "bandwidthTest, DGX A100", statistic=S.PUBLISHED_BANDWIDTHTEST_PAGEABLE),
        Published("d2h_pageable", 10.8, 10.8, "bandwidthTest, DGX A100", statistic=S.PUBLISHED_BANDWIDTHTEST_PAGEABLE),
    ],
    "h100-sxm": [
        Published("stream_triad", 2970, 2970, "STREAM-type triad, public (89 % of peak)"),
        Published("stream_copy", 2900, 2900, "STREAM-type copy, public"),
        Published(
            "gemm_bf16_best", 794.5, 794.5, "mamf-finder, best over its shape sweep", statistic=S.PUBLISHED_MAMF_TABLE
        ),
        Published(
            "gemm_fp8_best", 1402.6, 1402.6, "mamf-finder, best over its shape sweep", statistic=S.PUBLISHED_MAMF_TABLE
        ),
        Published("h2d_pinned", 55.4, 55.4, "nvbandwidth, copy engine", statistic=S.PUBLISHED_NVBANDWIDTH),
        Published("d2h_pinned", 55.2, 55.2, "nvbandwidth, copy engine", statistic=S.PUBLISHED_NVBANDWIDTH),
    ],
    "h200": [
        Published("stream_triad", 4150, 4150, "STREAM-type triad, public (86 % of 4.8 TB/s)"),
        Published("d2d_read_write", 4300, 4300, "device copy, read + write traffic counted", "approximate"),
        Published("gemm_bf16_8192", 770, 800, "cuBLAS BF16 on 8192³ random data, public"),
        Published("gemm_fp8_best", 1453, 1453, "public FP8 GEMM (73 % of peak)"),
        Published(
            "h2d_pinned",
            55,
            55,
            "expected from PCIe Gen5 x16 like H100",
            "not confirmed on H200",
            statistic=S.EXPECTATION,
        ),
        Published(
            "d2h_pinned",
            55,
            55,
            "expected from PCIe Gen5 x16 like H100",
            "not confirmed on H200",
            statistic=S.EXPECTATION,
        ),
    ],
    "rtx-4090": [
        Published("gemm_bf16_best", 175, 175, "cuBLASLt, public (above the 165 spec: clocks over 2520 MHz)"),
        Published("h2d_pinned", 24, 27, "public pinned-copy figures"),
        Published("d2h_pinned", 24, 27, "public pinned-copy figures"),
    ],
}

# Every card: launch costs vary with driver and host more than with the GPU.
GENERIC: list[Published] = [
    Published(
        "launch_enqueue_us",
        2,
        4,
        "typical eager enqueue of an empty kernel",
        "varies by driver and host",
        statistic=S.TYPICAL,
    ),
    Published(
        "launch_round_trip_us", 5, 9, "typical launch to completion", "varies by driver and host", statistic=S.TYPICAL
    ),
    Published(
        "graph_per_kernel_us",
        0,
        1,
        "an extra node inside a CUDA Graph: well under 1 µs",
        "varies by driver",
        statistic=S.TYPICAL,
    ),
]


def _largest(rows: pd.DataFrame, key: str = "bytes") -> pd.DataFrame:
    rows = F.with_int(rows, key)
    return rows[rows[key] == rows[key].max()] if not rows.empty else rows


def _pick(df: pd.DataFrame, corner: str, metric: str, **where) -> pd.DataFrame:
    rows = F.metric(df, corner, metric)
    for col, value in where.items():
        if rows.empty or col not in rows:
            return pd.DataFrame()
        rows = rows[rows[col].astype(str).isin(value if isinstance(value, (list, tuple)) else [str(value)])]
    return rows


class _Picker:
    """_pick over every card at once, then one card's share: a hundred cards ask the same dozen
    questions, and a filter per card over the whole table took seconds."""

    def __init__(self, df: pd.DataFrame):
        self.df, self.card = df, None
        self._by_card: dict = {}
        self._figures: pd.DataFrame | None = None

    def headline(self, key: str) -> dict | None:
        """The card's headline figure `key` (results/figures.py), as the summary quotes it."""
        if self._figures is None:
            self._figures = headline_figures(self.df)
        return figure(self._figures, key, self.card)

    def __call__(self, corner: str, metric: str, **where) -> pd.DataFrame:
        key = (corner, metric, tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(where.items())))
        groups = self._by_card.get(key)
        if groups is None:
            rows = _pick(self.df, corner, metric, **where)
            groups = self._by_card[key] = dict(tuple(rows.groupby("card", sort=False))) if not rows.empty else {}
        got = groups.get(self.card)
        return got if got is not None else pd.DataFrame()


def _triad(pick):
    """The headline triad (FP32 where measured, the largest array, L2 flushed): the summary's HBM figure."""
    f = pick.headline("triad")
    if f is None:
        return None
    return f["median"] / 1e9, f"{f['case'].split('/')[2]}, {int(f['bytes']) >> 20} MiB per array, L2 flushed", f["reps"]


def _stream(op: str) -> Callable[[_Picker], tuple[float, str] | None]:
    def get(pick):
        rows = _largest(pick("stream", "bytes_per_second", op=op, cache="cold"))
        if rows.empty:
            return None
        best = rows.loc[rows["median"].idxmax()]
        return (
            best["median"] / 1e9,
            f"{best['variant']}, {int(best['bytes']) >> 20} MiB per array, L2 flushed",
            best["reps"],
        )

    return get


def _gemm(precisions: list[str], only_8192: bool) -> Callable[[_Picker], tuple[float, str] | None]:
    def get(pick):
        rows = F.with_int(
            pick("gemm", "ops" if precisions == ["int8"] else "flops", op=["cublaslt", "ceiling"], variant=precisions),
            "m",
            "n",
            "k",
        )
        if only_8192 and not rows.empty:
            if not all(c in rows for c in ("m", "n", "k")):  # ceiling and LLM-shape cases only
                return None
            rows = rows[(rows["op"] == "cublaslt") & (rows["m"] == 8192) & (rows["n"] == 8192) & (rows["k"] == 8192)]
        if rows.empty:
            return None
        best = rows.loc[rows["median"].idxmax()]
        where = f"{best['variant']}, " + (
            "ceiling sweep"
            if best["op"] == "ceiling"
            else f"cuBLASLt {best.get('layout', '')} {int(best['m'])}x{int(best['n'])}x{int(best['k'])}"
        )
        return best["median"] / 1e12, where, best["reps"]

    return get


def _copy(op: str, kind: str, factor: float = 1.0) -> Callable[[_Picker], tuple[float, str] | None]:
    def get(pick):
        rows = _largest(pick("memcpy", "bytes_per_second", op=op, variant=kind))
        if rows.empty:
            return None
        r = rows.iloc[0]
        return (
            factor * r["median"] / 1e9,
            f"{int(r['bytes']) >> 20} MiB" + (", read + write counted" if factor != 1 else ""),
            r["reps"],
        )

    return get


def _launch(op: str, variant: str, metric: str) -> Callable[[_Picker], tuple[float, str] | None]:
    def get(pick):
        rows = pick("launch", metric, op=op, variant=variant)
        if rows.empty:
            return None
        if "kernels" in rows:
            largest = _largest(rows.copy(), "kernels")
            rows = largest if not largest.empty else rows  # chain_fit's kernels is a range (1-1000)
        return rows.iloc[0]["median"] * 1e6, rows.iloc[0]["case"], rows.iloc[0]["reps"]

    return get


def _graph_per_kernel(pick):
    return _launch("chain_fit", "graph", "per_kernel_s")(pick) or _launch("chain", "graph", "per_kernel_s")(pick)


# figure -> (label, unit, how to read it from one card's rows)
FIGURES: dict[str, tuple[str, str, Callable]] = {
    "stream_triad": ("STREAM triad, HBM", "GB/s", _triad),
    "stream_copy": ("STREAM copy, HBM", "GB/s", _stream("copy")),
    "gemm_bf16_8192": ("BF16 GEMM 8192³", "TFLOP/s", _gemm(["bf16"], True)),
    "gemm_bf16_best": ("BF16 GEMM, best shape", "TFLOP/s", _gemm(["bf16"], False)),
    # Whether the published FP8 figures used fast accumulation is not known: the best of both,
    # and `where` names which.
    "gemm_fp8_best": ("FP8 GEMM, best shape", "TFLOP/s", _gemm(["fp8e4m3", "fp8e4m3fast"], False)),
    "h2d_pinned": ("host to device, pinned", "GB/s", _copy("h2d", "pinned")),
    "d2h_pinned": ("device to host, pinned", "GB/s", _copy("d2h", "pinned")),
    "h2d_pageable": ("host to device, pageable", "GB/s", _copy("h2d", "pageable")),
    "d2h_pageable": ("device to host, pageable", "GB/s", _copy("d2h", "pageable")),
    "d2d_read_write": ("device to device, copy engine", "GB/s", _copy("d2d", "copy_engine", 2.0)),
    "launch_enqueue_us": ("eager launch, enqueue", "µs", _launch("empty", "enqueue", "time_s")),
    "launch_round_trip_us": ("eager launch, to completion", "µs", _launch("empty", "round_trip", "time_s")),
    "graph_per_kernel_us": ("CUDA Graph, per kernel", "µs", _graph_per_kernel),
}


def _published_text(p: Published) -> str:
    text = f"{p.low:g}" if p.low == p.high else f"{p.low:g}–{p.high:g}"
    return text + (f" ({p.doubt})" if p.doubt else "")


def ratio_to(p: Published, value: float) -> float | None:
    """value ÷ the published figure (÷ the nearest end of a published range; 1 inside it)."""
    if p.low <= value <= p.high:
        return 1.0
    ref = p.low if value < p.low else p.high
    return value / ref if ref > 0 else None


def comparison_table(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    if df.empty or "card" not in df:
        return pd.DataFrame()
    # The whole table: _Picker reads each (corner, metric) slice once (frames.metric), as text.
    pick = _Picker(df)
    for card in sorted(df["card"].dropna().unique()):
        spec = match_card(card)
        pick.card = card
        for p in (PUBLISHED.get(spec.key, []) if spec else []) + GENERIC:
            label, unit, get = FIGURES[p.figure]
            got = get(pick)
            if got is None:
                continue
            value, where, reps = got
            r = ratio_to(p, value)
            rows.append(
                {
                    "card": card,
                    "figure": f"{label} ({unit})",
                    "measured": N.number(value),
                    "where": where,
                    "published": _published_text(p),
                    "measured ÷ published": "" if r is None or math.isnan(r) else f"{r:.2f}",
                    "source": p.source,
                    "published statistic": p.statistic,
                    "this run's statistic": S.triaudit(int(reps) if reps == reps and reps else None),
                }
            )
    if not rows:
        return pd.DataFrame()
    return pd.DataFrame(rows).set_index(["card", "figure"])
