"""Drift detection (soak/drift.py) on synthetic time series (made-up rates and powers, not
measurements): a 4 % fall with steady power is flagged where it happens, noise is not, a fall that
takes the power with it is a limit, not a drift."""

from __future__ import annotations

import random

import pytest

from triaudit.soak import drift as D

RATE, POWER = 700e12, 690.0  # H200-like magnitudes, synthetic
START = 1_767_225_600.0


def series(n=120, fall_at=None, fall=0.0, power_fall=0.0, noise=0.0, power=True, seed=1, dips=()):
    rng = random.Random(seed)
    out = []
    for w in range(n):
        down = w >= fall_at if fall_at is not None else False
        rate = RATE * (1 - (fall if down else 0.0)) * (1 + rng.gauss(0, noise))
        if w in dips:
            rate *= 0.85  # one window disturbed by the host
        p = POWER * (1 - (power_fall if down else 0.0)) * (1 + rng.gauss(0, noise)) if power else None
        out.append(D.Point(w, START + 60 * (w + 1), rate, p))
    return out


def test_a_four_percent_fall_with_steady_power_is_flagged_where_it_happens():
    d = D.find_drift(series(fall_at=60, fall=0.04, noise=0.005), 0.03)
    assert d is not None and not d.throttled
    assert 60 <= d.window < 60 + D.SPAN_WINDOWS  # the median of the span turns within it
    assert 0.035 < d.fall < 0.045 and 0.035 < d.worst_fall < 0.05
    assert abs(d.power_fall) < 0.01
    assert d.baseline_rate == pytest.approx(RATE, rel=0.01)


@pytest.mark.parametrize("seed", range(5))
def test_noise_is_not_a_drift(seed):
    assert D.find_drift(series(noise=0.01, seed=seed), 0.03) is None


def test_single_disturbed_windows_are_not_a_drift():
    assert D.find_drift(series(noise=0.003, dips=(20, 21, 50, 90)), 0.03) is None


def test_a_fall_within_the_bound_is_not_a_drift():
    assert D.find_drift(series(fall_at=40, fall=0.02, noise=0.003), 0.03) is None


def test_a_fall_that_takes_the_power_with_it_is_a_limit_not_a_drift():
    d = D.find_drift(series(fall_at=40, fall=0.08, power_fall=0.08, noise=0.003), 0.03)
    assert d is not None and d.throttled and d.power_fall > 0.07


def test_unknown_power_cannot_excuse_a_fall():
    d = D.find_drift(series(fall_at=40, fall=0.05, power=False), 0.03)
    assert d is not None and not d.throttled and d.power_fall is None and d.baseline_power_w is None


def test_a_series_too_short_is_not_judged():
    short = series(n=D.NEEDED - 1, fall_at=3, fall=0.5)
    assert not D.judgeable(short) and D.find_drift(short, 0.03) is None
    assert D.judgeable(series(n=D.NEEDED))
