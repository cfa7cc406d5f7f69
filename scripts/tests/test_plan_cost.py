"""Cost rows of `triaudit plan`, checked by hand (the arithmetic is written out in each test)."""

import json

import pytest
from synthetic import write
from synthetic_energy import synthetic_energy_result

from triaudit import commands as cli
from triaudit.plan import prices as C


def ans(capsys, *argv):
    assert cli.main(["plan", "--json", *argv]) == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    return out, {r[0]: r[1] for r in out["rows"]}, {r[0]: r[3] for r in out["rows"]}


def refused(capsys, *argv) -> str:
    try:
        code = cli.main(["plan", *argv])
    except SystemExit as e:  # argparse's refusal of a value that is not a number
        code = e.code
    assert code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_7b_fp16_decode_on_h100_sxm_at_2_50_per_hour_is_2_90_per_million_tokens(capsys):
    # 3350 GB/s ÷ 14 GB of weights = 239.29 token/s (the plan's own figure, test_plan.py);
    # 239.29 × 3600 = 861,429 token/h; $2.50 ÷ 861,429 × 1e6 = $2.902 per million tokens.
    out, rows, src = ans(
        capsys, "--card", "h100-sxm", "decode", "--params", "7e9", "--weights", "fp16", "--price-per-hour", "2.50"
    )
    assert rows["tokens/s per sequence (batch 1)"] == pytest.approx(239.29, abs=0.01)
    assert rows["cost per million tokens"] == pytest.approx(2.50 / (3350e9 / 14e9 * 3600) * 1e6)
    assert rows["cost per million tokens"] == pytest.approx(2.90, abs=0.005)
    assert rows["cost per hour"] == 2.5
    assert "user price" in src["cost per hour"] and "239.3 token/s" in src["cost per million tokens"]
    # Every input's source: the price is the user's, the rate the datasheet's.
    assert "(user price, --price-per-hour)" in src["cost per million tokens"]
    assert src["cost per million tokens"].endswith("rate from datasheet: H100 SXM5 80GB")


def test_7b_on_8_a100_at_50pct_mfu_at_1_50_per_gpu_hour_is_33_7k(capsys):
    # 6 × 7e9 × 3e11 = 1.26e22 FLOP; ÷ (312e12 × 8 × 0.5 = 1.248e15 FLOP/s) = 1.0096e7 s = 2804.5 h
    # (the plan's 116.9 days); × 8 GPUs × $1.50 = $33,654.
    out, rows, src = ans(
        capsys,
        "--card",
        "a100-sxm-80",
        "train",
        "--params",
        "7e9",
        "--tokens",
        "3e11",
        "--gpus",
        "8",
        "--mfu",
        "0.5",
        "--price-per-hour",
        "1.5",
    )
    assert rows["time"] == pytest.approx(116.9, abs=0.1)
    assert rows["cost of the run"] == pytest.approx(1.26e22 / 1.248e15 / 3600 * 8 * 1.5)
    assert rows["cost of the run"] == pytest.approx(33_700, rel=0.002)
    assert rows["cost per hour"] == pytest.approx(12.0)
    assert "8 GPUs" in src["cost of the run"]


def test_buying_amortises_the_price_and_adds_energy_at_the_datasheet_tdp(capsys):
    # $30,000 over 3 years × 8760 h = $1.1416/h; 700 W (H100 SXM TDP) × $0.15/kWh = $0.105/h;
    # $1.2466/h ÷ (239.29 × 3600 token/h) × 1e6 = $1.447 per million tokens.
    out, rows, src = ans(
        capsys,
        "decode",
        "--card",
        "h100-sxm",
        "--params",
        "7e9",
        "--price",
        "30000",
        "--years",
        "3",
        "--power-price-kwh",
        "0.15",
    )
    assert rows["amortised price"] == pytest.approx(30000 / (3 * 8760))
    assert rows["power drawn"] == 700 and src["power drawn"] == "datasheet TDP: H100 SXM5 80GB"
    assert rows["energy"] == pytest.approx(0.105)
    assert rows["cost per hour"] == pytest.approx(1.14155 + 0.105, abs=1e-4)
    assert rows["cost per million tokens"] == pytest.approx(1.447, abs=0.001)
    assert any("upper bound" in n for n in out["notes"])
    # At half the hours in use the amortised part doubles; the energy per used hour does not.
    _, half, _ = ans(
        capsys,
        "decode",
        "--card",
        "h100-sxm",
        "--params",
        "7e9",
        "--price",
        "30000",
        "--years",
        "3",
        "--power-price-kwh",
        "0.15",
        "--utilisation",
        "0.5",
    )
    assert half["amortised price"] == pytest.approx(2 * rows["amortised price"])
    assert half["energy"] == pytest.approx(rows["energy"])
    # --watts overrides the datasheet.
    _, given, src = ans(
        capsys,
        "decode",
        "--card",
        "h100-sxm",
        "--params",
        "7e9",
        "--price",
        "30000",
        "--years",
        "3",
        "--power-price-kwh",
        "0.15",
        "--watts",
        "400",
    )
    assert given["energy"] == pytest.approx(0.4 * 0.15) and src["power drawn"] == "given: --watts"


def test_buying_with_a_run_uses_the_power_measured_on_the_binding_case(tmp_path, capsys):
    f = write(
        tmp_path / "nvidia-h100" / "run1" / "triaudit_synthetic_energy.json",
        synthetic_energy_result("NVIDIA H100 80GB HBM3", triad=(3.0e12, 500.0)),
    )
    # Decode binds on bandwidth: the fastest cold STREAM case at the largest size is the burst
    # triad (3.0e12 B/s at 500 W; sustained is 92 % of it). 3.0e12 ÷ 14e9 = 214.29 token/s;
    # $30,000 / 26,280 h = $1.1416/h + 0.5 kW × $0.20 = $0.10/h -> $1.2416/h ÷ (214.29 × 3600) × 1e6 = $1.609.
    out, rows, src = ans(
        capsys,
        "decode",
        "--run",
        str(f),
        "--params",
        "7e9",
        "--price",
        "30000",
        "--years",
        "3",
        "--power-price-kwh",
        "0.2",
    )
    assert rows["power drawn"] == pytest.approx(500.0)
    assert src["power drawn"].startswith("measured: watts_mean of stream/triad/fp32/cache:cold/bytes:1073741824")
    assert "rate from measured: stream/triad/fp32/cache:cold/bytes:1073741824 (run1)" in src["cost per million tokens"]
    assert rows["cost per million tokens"] == pytest.approx((30000 / 26280 + 0.1) / (3.0e12 / 14e9 * 3600) * 1e6)
    # Training binds on compute: the BF16 GEMM ceiling (burst, 690 W) is the figure and its power.
    _, rows, src = ans(
        capsys,
        "train",
        "--run",
        str(f),
        "--params",
        "7e9",
        "--tokens",
        "1e10",
        "--mfu",
        "0.5",
        "--price",
        "30000",
        "--years",
        "3",
        "--power-price-kwh",
        "0.2",
    )
    assert rows["power drawn"] == pytest.approx(690.0) and "gemm/ceiling/bf16/burst" in src["power drawn"]
    hours = 6 * 7e9 * 1e10 / (760e12 * 0.5) / 3600
    assert rows["cost of the run"] == pytest.approx(hours * (30000 / 26280 + 0.69 * 0.2))


def test_a_run_without_energy_falls_back_to_the_datasheet_and_says_why(tmp_path, capsys):
    f = write(
        tmp_path / "nvidia-h100" / "run1" / "triaudit_synthetic_energy.json",
        synthetic_energy_result("NVIDIA H100 80GB HBM3", energy="unsupported"),
    )
    _, rows, src = ans(
        capsys,
        "decode",
        "--run",
        str(f),
        "--params",
        "7e9",
        "--price",
        "30000",
        "--years",
        "3",
        "--power-price-kwh",
        "0.2",
    )
    assert rows["power drawn"] == 700
    assert (
        src["power drawn"].startswith("datasheet TDP: H100 SXM5 80GB; stream/triad/fp32")
        and "no energy figure" in src["power drawn"]
    )


def test_every_question_gets_cost_rows(capsys):
    # roofline: 4096³ FP16 on an H100 SXM is compute-bound, 1.374e11 FLOP ÷ 989.4e12 = 138.9 µs; at $3.60/h
    # that is 138.9e-6 s × $0.001/s = $1.389e-7.
    _, rows, _ = ans(
        capsys,
        "--card",
        "h100-sxm",
        "roofline",
        "--gemm",
        "4096",
        "4096",
        "4096",
        "--precision",
        "fp16",
        "--price-per-hour",
        "3.6",
    )
    assert rows["cost of the operation"] == pytest.approx(2 * 4096**3 / 989.4e12 / 1000)
    # transfer: 2 GB at PCIe Gen5's 64 GB/s = 31.25 ms; at $3.60/h, $3.125e-5.
    _, rows, _ = ans(capsys, "--card", "h200", "transfer", "--payload-gb", "2", "--price-per-hour", "3.6")
    assert rows["cost of the operation"] == pytest.approx(2 / 64 / 1000)
    # allreduce on 8 GPUs: 14 GB at 300 GB/s each way = 81.67 ms × 8 GPUs at $2/h each.
    _, rows, _ = ans(
        capsys, "allreduce", "--payload-gb", "14", "--gpus", "8", "--link", "nvlink-a100", "--price-per-hour", "2"
    )
    assert rows["cost of the operation"] == pytest.approx(2 * 7 / 8 * 14 / 300 * 8 * 2 / 3600)
    assert rows["cost per hour"] == 16
    _, rows, _ = ans(capsys, "memory", "--params", "7e9", "--price-per-hour", "2")
    assert rows["cost per hour"] == 2
    _, rows, _ = ans(
        capsys, "launches", "--count", "1000", "--eager-us", "4", "--graph-us", "1", "--price-per-hour", "3.6"
    )
    assert rows["cost of the operation"] == pytest.approx(4e-3 / 1000)
    assert rows["cost of the operation, graph"] == pytest.approx(1e-3 / 1000)


def test_decode_with_an_architecture_costs_the_batch_served_and_batch_1(capsys):
    _, rows, src = ans(capsys, "decode", "--card", "h100-sxm", "--model", "llama-2-7b", "--price-per-hour", "2.5")
    batched = next(v for k, v in rows.items() if k.startswith("tokens/s at batch "))
    assert rows["cost per million tokens"] == pytest.approx(2.5 / (batched * 3600) * 1e6)
    assert rows["cost per million tokens at batch 1"] == pytest.approx(
        2.5 / (rows["tokens/s per sequence (batch 1)"] * 3600) * 1e6
    )
    assert rows["cost per million tokens"] < rows["cost per million tokens at batch 1"]


def test_a_model_that_does_not_fit_gets_no_cost_per_token(capsys):
    out, rows, _ = ans(capsys, "decode", "--card", "h100-sxm", "--params", "70e9", "--price-per-hour", "2.5")
    assert "cost per million tokens" not in rows and rows["cost per hour"] == 2.5
    assert any("does not fit" in n for n in out["notes"])


def test_no_price_no_cost_rows(capsys):
    _, rows, _ = ans(capsys, "--card", "h100-sxm", "decode", "--params", "7e9")
    assert not [k for k in rows if "cost" in k]


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--price-per-hour", "2", "--price", "3", "--years", "3", "--power-price-kwh", "0.1"], "exclude each other"),
        (["--price", "30000"], "years"),
        (["--price", "30000", "--years", "3"], "power price"),
        (["--years", "3"], "needs a price"),
        (["--price-per-hour", "2", "--utilisation", "1.5"], "at most 1"),
        (["--price-per-hour", "2", "--utilisation", "0"], "utilisation must be a positive"),
        (["--price-per-hour", "-2"], "0 or more"),
        (["--price-per-hour", "two"], "not a number"),
        (["--price-per-hour", "2", "--years", "3"], "go with a purchase price"),
    ],
)
def test_bad_prices_are_refused_with_a_reason(capsys, argv, needle):
    err = refused(capsys, "--card", "h100-sxm", "decode", "--params", "7e9", *argv)
    assert needle in err


def test_buying_without_any_power_figure_is_refused(capsys):
    err = refused(
        capsys,
        "allreduce",
        "--payload-gb",
        "14",
        "--gpus",
        "8",
        "--link",
        "nvlink-a100",
        "--price",
        "10000",
        "--years",
        "4",
        "--power-price-kwh",
        "0.1",
    )
    assert "--watts" in err and "--card" in err


def test_hourly_arithmetic():
    h = C.hourly(C.Price(purchase=8760.0, years=1, power_price_kwh=0.5, utilisation=0.5), C.Power(1000.0, "given"))
    assert h.amortised == pytest.approx(2.0) and h.energy == pytest.approx(0.5) and h.total == pytest.approx(2.5)
    assert C.hourly(C.Price(per_hour=3.0, utilisation=0.75)).total == pytest.approx(4.0)
    assert C.per_unit_hour(2.0, 0.5e15, 1e15) == pytest.approx(4.0)
    assert C.money(33653.8) == "USD 33,654" and C.money(2.9022) == "USD 2.90" and C.money(0.000123) == "USD 0.000123"
