import pytest

from triaudit.stats import decide, mann_whitney_u


def test_mann_whitney_exact_small_samples():
    # Complete separation of 4 vs 4: the most extreme of C(8,4) = 70 splits, both tails: 2/70.
    u, p = mann_whitney_u([1, 2, 3, 4], [5, 6, 7, 8])
    assert u == 0 and p == pytest.approx(2 / 70)
    # 3 vs 3 can never reach p < 0.05: the smallest two-sided p is 2/20.
    assert mann_whitney_u([1, 2, 3], [4, 5, 6])[1] == pytest.approx(0.1)
    # Identical samples: p = 1.
    assert mann_whitney_u([1, 1, 1, 1], [1, 1, 1, 1])[1] == pytest.approx(1.0)
    # Interleaved: no evidence.
    assert mann_whitney_u([1, 3, 5, 7], [2, 4, 6, 8])[1] > 0.5


def test_mann_whitney_normal_approximation_large_samples():
    a = [float(i) for i in range(15)]
    b = [float(i) + 20 for i in range(15)]
    u, p = mann_whitney_u(a, b)
    assert u == 0 and p < 1e-5
    assert mann_whitney_u(a, [x + 0.5 for x in a])[1] > 0.3


def test_verdicts():
    base = [100.0, 101.0, 99.5, 100.5, 100.2]
    assert decide(base, [90.0, 90.5, 89.8, 90.2, 90.1], higher_is_better=True).verdict == "slower"
    assert decide(base, [110.0, 110.5, 109.8, 110.2, 110.1], higher_is_better=True).verdict == "faster"
    # Lower is better (latency): a larger time is slower.
    assert decide(base, [110.0, 110.5, 109.8, 110.2, 110.1], higher_is_better=False).verdict == "slower"
    # A consistent but tiny shift is "same" below the effect threshold.
    v = decide(base, [x * 1.005 for x in base], higher_is_better=True)
    assert v.verdict == "same" and "threshold" in v.reason


def test_noise_is_not_a_regression():
    # Two samples of the same noisy process (medians 3% apart, wide overlap): never "slower".
    base = [100.0, 92.0, 108.0, 97.0, 104.0]
    new = [97.0, 89.0, 106.0, 94.0, 101.0]
    v = decide(base, new, higher_is_better=True)
    assert v.verdict == "uncertain", v


def test_too_few_repetitions_is_uncertain_never_same():
    v = decide([100.0, 100.0, 100.0], [100.0, 100.0, 100.0], higher_is_better=True)
    assert v.verdict == "uncertain" and "too few repetitions" in v.reason
