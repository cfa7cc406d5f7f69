"""The report's one way of writing numbers (core/numbers.py), on the values the tables print."""

import math

import pytest

from triaudit.core import numbers as N


@pytest.mark.parametrize(
    "x, spread, text",
    [
        (828.04, 0.00075, "828"),  # ±0.1% printed: three significant digits
        (699.24, 0.0, "699"),  # ±0.0% printed: still three (a fourth would only differ between cells)
        (56.214, 0.0002, "56.2"),
        (56.214, 0.0012, "56.2"),
        (2.4, 0.0, "2.40"),  # the "2.400 ±0.0%"
        (0.75, 0.0001, "0.750"),  # ... and its "0.7500" µs
        (27.48, 0.0002, "27.5"),  # never "27.48" beside "27.5" in one row
        (27.5, 0.06, "28"),  # ±6%: the third digit is inside the spread
        (1653.2, 0.002, "1,653"),  # integer digits all kept
        (0.91, 0.3, "0.91"),  # ±30%: never fewer than two significant digits
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
    assert N.figure(699.24, 1.0, 0.0) == "699 ±0.0%"
    assert N.figure(2.4e-6, 1e-6, 0.0) == "2.40 ±0.0%"
    assert N.figure(float("nan")) == ""
    assert N.figure(6.5e12, 1e9, 0.2, 2.03, "above the PCIe link's limit") == (
        "6,500 ±0.1% (203%) ⚠ above the PCIe link's limit"
    )


@pytest.mark.parametrize(
    "value, metric, text",
    [
        (8.281e14, "flops", "828 TFLOP/s"),  # compare printed "8.281e+14"
        (1.2e15, "ops", "1.20 POP/s"),  # integer GEMMs in OP/s, never FLOP/s
        (4.21e12, "bytes_per_second", "4.21 TB/s"),
        (5.5e10, "bytes_per_second_h2d", "55.0 GB/s"),
        (3.6e11, "busbw", "360 GB/s"),
        (2.4e-6, "time_s", "2.40 µs"),
        (7.5e-7, "per_kernel_s", "750 ns"),
        (0.08, "hidden_fraction", "8%"),  # the overlap table printed "0.0800"
        (3.0, "ranks", "3.00"),
    ],
)
def test_a_figure_alone_carries_its_unit(value, metric, text):
    assert N.with_unit(value, metric) == text


def test_money_in_a_table_has_the_same_decimals():
    costs = [109.32, 6.84, 0.594, 1.19]
    d = N.money_decimals(costs)
    assert [N.money(v, "USD", d) for v in costs] == ["USD 109.32", "USD 6.84", "USD 0.59", "USD 1.19"]
    small = [0.0123, 2.5]
    assert [N.money(v, "EUR", N.money_decimals(small)) for v in small] == ["EUR 0.0123", "EUR 2.5000"]
    assert N.money(33653.8) == "USD 33,654" and N.money(0.000123) == "USD 0.000123"


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
