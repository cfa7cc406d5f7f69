"""The report's one way of writing numbers (core/numbers.py), on the values the tables print."""

import math

import pytest

from triaudit.core import numbers as N


@pytest.mark.parametrize(
    "x, spread, text",
    [
        (828.04, 0.00075, "828"),  # ±0.1% printed: three significant digits
        (699.24, 0.0, "699.2"),  # ±0.0% printed: the fourth digit is supported
        (56.214, 0.0002, "56.21"),
        (56.214, 0.0012, "56.2"),
        (12000.0, None, "12,000"),  # thousands separated, integer digits all kept
        (1822.4, None, "1,822"),
        (0.012345, None, "0.0123"),
        (0.0, None, "0"),
        (math.inf, None, "∞"),
        (float("nan"), None, ""),
        (None, None, ""),
    ],
)
def test_number_digits_follow_the_printed_spread(x, spread, text):
    assert N.number(x, spread) == text


def test_figure_joins_value_spread_and_datasheet_fraction():
    assert N.figure(828.04e12, 1e12, 0.15, 0.84) == "828 ±0.1% (84%)"
    assert N.figure(699.24, 1.0, 0.0) == "699.2 ±0.0%"
    assert N.figure(float("nan")) == ""


@pytest.mark.parametrize(
    "n, text", [(2**28, "256 MiB"), (1.5 * 2**20, "1.5 MiB"), (4096, "4 KiB"), (3 * 2**30, "3 GiB"), (100, "100 B")]
)
def test_sizes_are_binary_units(n, text):
    assert N.size(n) == text


@pytest.mark.parametrize("x, text", [(1500, "1.5 k"), (2e12, "2 T"), (5e-7, "500 n"), (1.0, "1"), (0, "0")])
def test_axis_ticks_carry_si_prefixes(x, text):
    assert N.si(x) == text


def test_log_ticks_stay_few_and_readable():
    ticks = N.log_ticks(2**20, 2**32, 2, 7)
    assert len(ticks) <= 7 and all(math.log2(t).is_integer() for t in ticks)
    assert N.log_ticks(300e9, 6e12, 10, 8) == [5e11, 1e12, 2e12, 5e12]  # 1-2-5 within two decades
