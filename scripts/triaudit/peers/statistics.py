"""Each peer tool's statistic in words, as its source code computes it (the functions take what
the output says about iterations, so a non-default run is described as it ran).

Checked in the tools' sources:
- nccl-tests `src/common.cu` BenchTime: one host timer around `iters` (-n, default 20) x `agg_iters`
  back-to-back collectives after a synchronising collective and a barrier, divided by their number,
  then `Allreduce(args, &deltaSec, average)` over ranks with `average` = -a, default 1 = the mean;
  bandwidths come from that time.
- nvbandwidth `memcpy.cpp` doMemcpyCore: `averageLoopCount` (-i/--testSamples, default 3) samples, each
  `loopCount` (16) copies between CUDA events on a stream held by a spin kernel (4 warm-up copies
  queued first); `returnAppropriateMetric()` is the median of the samples, the mean with -m/--useMean
  (common.h). Older releases (PerformanceStatistic with only a running mean) reported the mean.
- BabelStream `main.cpp`: a host clock (`std::chrono::high_resolution_clock`) around each kernel call,
  which synchronises; the bandwidth column is bytes / the minimum time of `num_times` (-n, default 100)
  runs with the first run dropped. In `--order Isolated` (newer versions) every run's time is the
  mean of one loop of `num_times` kernels; `--only Triad` in 4.x/5.0 times one loop of all runs.
- mamf-finder.py: v1 (no "benchmark version" line) times each of `--num_iterations` (100) GEMMs with
  CUDA events after 50 warm-ups and keeps the fastest; the best shape is the maximum over shapes.
  v2 reports, for the best shape by each, the mean, the median and the fastest of the 100 iterations
  (L2 written over and C re-randomised before each); the published comparison table uses the mean.
  v3/v4 report MAMF (v4: the median of a shape's 5 fastest boost-clock iterations) and MSMF (the
  throughput a shape holds over a timed window under full load), each the maximum over shapes.
"""

from __future__ import annotations

TRIAUDIT = "median of {reps} repetitions"


def triaudit(reps: int | None) -> str:
    return TRIAUDIT.format(reps=reps) if reps else "median (aggregates only: repetitions not kept)"


def nccl_tests(iters: int | None = 20, agg: int | None = 1, warmup: int | None = 5, graph: int = 0) -> str:
    n = "?" if iters is None else str(iters)
    text = f"mean over ranks of {n} back-to-back iterations"
    if agg and agg > 1:
        text += f" x {agg} aggregated"
    if graph:
        text += f" in a CUDA Graph replayed {graph}x"
    return text + " (one host-timed loop)"


def nvbandwidth(samples: int | None = 3, use_mean: bool | None = False, loop: int = 16) -> str:
    how = "mean" if use_mean else "median"
    return f"{how} of {3 if samples is None else samples} samples of {loop} copies (CUDA events, stream held)"


def babelstream(num_times: int | None = 100, order: str = "Classic", triad_only: bool = False) -> str:
    n = "?" if num_times is None else str(num_times)
    if triad_only:
        return f"mean of {n} back-to-back triads (one host-timed loop)"
    if order == "Isolated":
        return f"mean of {n} back-to-back runs (one host-timed loop, --order Isolated)"
    return f"best of {n} runs (the fastest after the first; host clock, launch and sync included)"


def mamf(version: int, column: str, iterations: int | None = 100) -> str:
    n = "?" if iterations is None else str(iterations)
    if version == 1:
        return f"max over shapes of the fastest of {n} iterations per shape (CUDA events per GEMM)"
    if version == 2:
        per = {"max": "fastest", "median": "median", "mean": "mean"}[column]
        return f"max over shapes of the {per} of {n} iterations per shape (L2 written over before each)"
    if column == "mamf":
        what = (
            "the median of its 5 fastest boost-clock iterations"
            if version >= 4
            else "its boost-burst peak (clock-validated)"
        )
        return f"max over shapes of {what} (mamf-finder v{version} MAMF)"
    return f"max over shapes of the throughput held over a timed window under full load (mamf-finder v{version} MSMF)"


# What the published figures in published.py were measured with (their sources' statistics).
PUBLISHED_BABELSTREAM = babelstream(100)
PUBLISHED_MAMF_TABLE = (
    "max over shapes of the mean of 100 iterations after 50 warm-ups (the ml-engineering comparison table's statistic)"
)
PUBLISHED_NVBANDWIDTH = nvbandwidth(3) + " (nvbandwidth's default; releases before the median reported the mean)"
PUBLISHED_BANDWIDTHTEST_PINNED = "mean of 100 back-to-back copies in one CUDA-event region (bandwidthTest)"
PUBLISHED_BANDWIDTHTEST_PAGEABLE = (
    "mean of 100 host-timed cudaMemcpy calls (bandwidthTest; newer versions write a 256 MiB host buffer between them)"
)
UNSTATED = "not stated by the source"
EXPECTATION = "an expectation from the link's rate, not a measurement"
TYPICAL = "typical values from several sources, not one measurement"
