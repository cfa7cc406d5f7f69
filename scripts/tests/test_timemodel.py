"""The time model (`triaudit run --dry-run`) and the profiles it holds to their goals: quick within
a minute and full within five on an H200, no quick case over 20 s. The cases come from the built
executables' own catalogues (no GPU needed)."""

from __future__ import annotations

import pytest

from triaudit import commands as cli
from triaudit.corners import gemm, launch, stream, timing
from triaudit.runner import profiles
from triaudit.runner import timemodel as T


@pytest.fixture(scope="module")
def build_dir(stream_exe):
    return stream_exe.parents[2]


def _estimate(build_dir, profile, card="h200", gpus=1):
    est, _ = T.estimate_profile(build_dir, profile, card, gpus=gpus)
    return est


def test_every_executable_of_the_profiles_is_estimated(build_dir):
    est = _estimate(build_dir, "quick")
    names = {e.executable for e in est}
    built = set(profiles.find_steps(build_dir))
    assert names == built and {"triaudit_stream", "triaudit_gemm", "triaudit_memcpy", "triaudit_launch"} <= names
    assert list(profiles.find_steps(build_dir))[-1] == "triaudit_gemm_ladder"  # the likeliest to hang goes last
    assert all(e.cases for e in est)


def test_quick_fits_a_minute_on_an_h200(build_dir):
    est = _estimate(build_dir, "quick")
    total = sum(e.seconds for e in est)
    assert 20 < total <= 60, T.format_estimate(est, T.card_by_key("h200"), "quick")
    longest = max(c.seconds for e in est for c in e.cases)
    assert longest <= 20


def test_full_fits_five_minutes_on_an_h200(build_dir):
    est = _estimate(build_dir, "full")
    total = sum(e.seconds for e in est)
    assert 100 < total <= 300, T.format_estimate(est, T.card_by_key("h200"), "full")


def test_the_old_semantics_would_not_have_fit(build_dir):
    # Google Benchmark's own loop ran ops-per-region x min-time per call: a launch/sync case (1000
    # operations per region) at min-time 0.02 took ~20 s per call. The model of one call now:
    s = T.Settings(min_time=0.02, warmup=0.2, sustained=1.0, repetitions=1)
    assert launch.launch_case("launch/sync/stream_synchronize", T.card_by_key("h200"), s) < 1.0


def test_calls_scale_with_repetitions_and_min_time():
    card = T.card_by_key("h200")
    name = "stream/triad/fp32/cache:cold/bytes:1073741824"
    one = stream.stream_case(name, card, T.Settings(0.05, 0.2, 10, 1))
    five = stream.stream_case(name, card, T.Settings(0.05, 0.2, 10, 5))
    longer = stream.stream_case(name, card, T.Settings(0.5, 0.2, 10, 5))
    assert five > 4 * (one - 0.6) and longer > five + 5 * 0.4


def test_a_gemm_too_long_for_the_card_is_estimated_as_skipped():
    # FP64 16384^3 on an RTX 4090 (1.3 TFLOP/s): ~7 s per GEMM; triaudit_gemm skips it (--max-op-seconds 1).
    s = T.Settings(0.05, 0.2, 10, 5)
    t = gemm.gemm_case("gemm/cublaslt/fp64/layout:nn/m:16384/n:16384/k:16384", T.card_by_key("rtx-4090"), s)
    assert t < 1.0
    on_h200 = gemm.gemm_case("gemm/cublaslt/fp64/layout:nn/m:16384/n:16384/k:16384", T.card_by_key("h200"), s)
    assert on_h200 > 1.0


def test_dry_run_command(build_dir, capsys):
    assert cli.main(["run", "--dry-run", "--profile", "quick", "--card", "h200", "--build-dir", str(build_dir)]) == 0
    out = capsys.readouterr().out
    assert "triaudit_gemm" in out and "total" in out and "not a measurement" in out
    assert cli.main(["run", "--dry-run", "--card", "h900", "--build-dir", str(build_dir)]) == 2
    err = capsys.readouterr().err
    assert "unknown card 'h900'" in err and "Traceback" not in err
    assert cli.main(["run", "--dry-run", "--card", "h200", "--gpu-count", "0", "--build-dir", str(build_dir)]) == 2


def test_the_card_is_found_as_plan_finds_it():
    """`run --dry-run --card H200` was refused while `plan --card H200` worked: one lookup now."""
    assert T.card_by_key("H200").key == T.card_by_key("h200").key == "h200"
    assert T.card_by_key("NVIDIA H200").key == "h200"
    with pytest.raises(T.ModelError, match="unknown card"):
        T.card_by_key("no-such-card")


def test_quick_fits_ninety_seconds_on_eight_h200s(build_dir):
    """On 8 GPUs the quick profile measured all 56 ordered pairs (~389 s by the model itself): it now
    measures one representative pair per link type (--pairs=representative), full keeps every pair."""
    est = _estimate(build_dir, "quick", gpus=8)
    total = sum(e.seconds for e in est)
    assert total <= 90, T.format_estimate(est, T.card_by_key("h200"), "quick")
    assert "--pairs=representative" in profiles.PROFILES["quick"]["triaudit_p2p"]
    assert "--pairs=representative" not in profiles.PROFILES["full"]["triaudit_p2p"]


@pytest.fixture(scope="module")
def gemm_described(build_dir):
    """Every GEMM case's axes as triaudit_gemm describes them (--describe-cases): the shapes."""
    return T.describe_cases(build_dir / "benchmarks" / "gemm" / "triaudit_gemm")


def test_the_gemm_selection_and_checks_are_counted(gemm_described):
    """The model counts what the executable does before and after timing: the selection (warm-up,
    then >= 20 ms per candidate), the ceiling's second selection of its best shape, and the checked
    launches (one GEMM and the FP64 reference of one element per 64 x 64 block)."""
    card = T.card_by_key("h200")
    s = T.Settings(0.05, 0.2, 10, 1)
    lt = gemm.gemm_case("gemm/cublaslt/bf16/layout:tn/m:8192/n:8192/k:8192", card, s)
    assert lt > s.warmup + gemm.AUTOTUNE_CANDIDATES * gemm.AUTOTUNE_MIN_S + s.warmup + s.min_time
    axes = gemm_described["gemm/ceiling/bf16/burst"]
    burst = gemm.gemm_case("gemm/ceiling/bf16/burst", card, s, 1, axes)
    # every shape of the sweep selected once, the best one a second time
    shapes = gemm.sweep_shapes("gemm/ceiling/bf16/burst", axes)
    assert len(shapes) == 12 and (16384, 8192, 8192) in shapes
    assert burst > (len(shapes) + 1) * gemm.AUTOTUNE_CANDIDATES * gemm.AUTOTUNE_MIN_S + s.warmup
    assert (
        gemm.gemms_per_region(25e-6) == 20 and gemm.gemms_per_region(1.4e-3) == 1 and gemm.gemms_per_region(1e-6) == 31
    )


def test_the_sustained_triads_repetitions_follow_each_other():
    """STREAM checks every output on the device: a call adds only the fills, the poison and a read of
    the output around its window, and the first call no host check of the whole array (1 GiB copied
    to the host and checked there put a second between the first two repetitions)."""
    card = T.card_by_key("h200")
    name = "stream/triad_sustained/fp32/cache:cold/bytes:1073741824"
    one = T.settings_from_args(["--sustained-s=2", "--benchmark_repetitions=1"])
    two = T.settings_from_args(["--sustained-s=2", "--benchmark_repetitions=2"])
    per_call = stream.stream_case(name, card, two) - stream.stream_case(name, card, one)
    outside_window = per_call - (timing.CALL_OVERHEAD_S + one.warmup + one.sustained)
    assert 0 < outside_window < 0.005
    first_call_extra = stream.stream_case(name, card, one) - per_call
    assert first_call_extra < 0.005


def test_the_shapes_come_from_the_catalogue_not_a_copy(gemm_described):
    """An LLM layer's name gives its layer and tokens only: its m, n, k come from the executable's
    description, and the model holds no copy of the catalogue's shapes."""
    assert not hasattr(gemm, "LLM_LAYERS") and not hasattr(gemm, "CEILING_SHAPES")
    name = "gemm/cublaslt/bf16/llm:llama2-70b-mlp_up/tokens:4096"
    axes = gemm_described[name]
    assert (axes["m"], axes["n"], axes["k"]) == ("28672", "4096", "8192")
    card, s = T.card_by_key("h200"), T.Settings(0.05, 0.2, 10, 1)
    assert gemm.gemm_shape(name, axes) == (28672, 4096, 8192)
    bigger = gemm.gemm_case(name, card, s, 1, {**axes, "m": str(4 * 28672)})
    assert bigger > gemm.gemm_case(name, card, s, 1, axes)  # the estimate follows the described shape
    with pytest.raises(T.ModelError, match="no m, n, k"):
        T.estimate_cases("triaudit_gemm", [name], card, s)  # no description: said, never guessed
