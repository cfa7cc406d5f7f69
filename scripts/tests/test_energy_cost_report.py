"""The report's Energy section (always) and cost tables (--prices), on synthetic result files
(synthetic_energy.py: the executables' shape, made-up numbers). Cost figures checked by hand."""

import json
import math
import re
import sys
from pathlib import Path

import pandas as pd
import pytest
from synthetic import synthetic_corners_result, write
from synthetic_energy import TRIAD_BYTES, synthetic_energy_result

from triaudit import commands as cli
from triaudit.core import numbers as N
from triaudit.report.sections import cost as cost_report

H100, H200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"
SYNTH = " (synthetic)"  # what the report's column of a synthetic run is labelled with
TEMPLATE = Path(__file__).resolve().parents[1] / "prices.template.toml"


def results(tmp_path, h100_energy="valid", h200_energy="valid") -> Path:
    root = tmp_path / "results"
    write(
        root / "nvidia-h100" / "run1" / "triaudit_synthetic_energy.json",
        synthetic_energy_result(H100, energy=h100_energy),
    )
    write(
        root / "nvidia-h200" / "run1" / "triaudit_synthetic_energy.json",
        synthetic_energy_result(
            H200, gemm={"bf16": (800e12, 650.0)}, triad=(4.3e12, 480.0), energy=h200_energy, limit_w=500
        ),
    )
    return root


def prices_file(tmp_path, text: str, name: str = "prices.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


TWO_CARDS = """
[cards."h100-sxm"]
rent_per_hour = 2.50

[cards."NVIDIA H200"]
buy_price = 32000
years = 4
power_price_kwh = 0.12
utilisation = 0.8
"""


def report(tmp_path, root, *extra) -> tuple[int, str, Path]:
    out = tmp_path / "report"
    code = cli.main(["report", str(root), "--out", str(out), *extra])
    return code, (out / "report.md").read_text() if (out / "report.md").exists() else "", out


def md_rows(md: str, caption_start: str) -> dict[tuple, list[str]]:
    """The Markdown table under the caption starting with `caption_start`: {index cells: value cells}."""
    lines = md.splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith("### " + caption_start))
    header = [c.strip() for c in lines[i + 2].strip("|").split("|")]
    out = {}
    for line in lines[i + 4 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[tuple(cells[:-2])] = cells[-2:]
    assert header[-2:] == [H100 + SYNTH, H200 + SYNTH], header  # the fixture's columns say synthetic
    return out


def test_energy_section_burst_vs_sustained_with_counters(tmp_path, capsys):
    code, md, out = report(tmp_path, results(tmp_path))
    assert code == 0
    g = md_rows(md, "GEMM ceilings, burst vs sustained")
    assert g[("bf16", "burst", "TFLOP/s")] == ["760 ±0.0%", "800 ±0.0%"]
    # The synthetic sustained case runs at 92 % of the burst rate, 92 % of the clock, 97 % of the power.
    assert g[("bf16", "sustained", "TFLOP/s")][0] == "699 ±0.0%"  # three significant digits (core/numbers.py)
    assert g[("bf16", "burst", "power (W)")][0] == "690 (counter); samples mean 704, max 759"
    # flops_per_joule = 760e12 FLOP/s ÷ 690 W = 1.101e12 FLOP/J = 1.10 TFLOP/s per W.
    assert g[("bf16", "burst", "TFLOP/s per W")] == ["1.10", "1.23"]  # 760 / 690, 800 / 650 W
    # The main table holds rate, power and efficiency only; the rest is in the detail table below it.
    assert {k[2] for k in g} == {"TFLOP/s", "power (W)", "TFLOP/s per W"}
    d = md_rows(md, "GEMM ceilings: mean SM clock")
    assert d[("bf16", "sustained", "SM clock (MHz)")][0] == "1,822"
    assert d[("bf16", "sustained", "temperature (°C)")][0] == "50 → 68"
    assert d[("bf16", "sustained", "window")][0] == "2 s window, load held 6 s; energy over 4.2 s"
    assert d[("bf16", "burst", "energy per op (J)")][0] == f"{690 * 2 * 8192**3 / 760e12:.3g}"
    s = md_rows(md, "STREAM triad, L2 flushed")
    assert s[("fp32", "burst", "GB/s")] == ["3,300 ±0.0%", "4,300 ±0.0%"]
    assert s[("fp32", "sustained", "GB/s per W")][0] == f"{3.3e12 * 0.92 / (520 * 0.97) / 1e9:.3g}"
    ppw = md_rows(md, "Perf per watt")
    assert ppw[("GEMM ceiling, TFLOP/s per W (TOP/s for int8)", "int8", "burst")][0] == f"{1500 / 680:.3g}"
    ctx = md_rows(md, "Power limits")
    assert ctx[("power limit enforced (W)",)] == ["700", "500 (capped below the default 700)"]
    e = pd.read_csv(out / "energy.csv")
    row = e[
        (e["card"] == H100 + SYNTH) & (e["case"] == f"stream/triad_sustained/fp32/cache:cold/bytes:{TRIAD_BYTES}")
    ].iloc[0]
    assert row["mode"] == "sustained" and row["window_s"] == 2.0
    assert row["bytes_per_joule"] == pytest.approx(3 * TRIAD_BYTES / (3 * TRIAD_BYTES / (3.3e12 * 0.92) * 520 * 0.97))
    assert (out / "throughput_vs_watts.png").stat().st_size > 10_000
    assert "cost" not in {p.stem for p in out.iterdir()}  # no prices: no cost tables


def test_energy_unknown_says_the_labels_reason(tmp_path, capsys):
    code, md, out = report(tmp_path, results(tmp_path, h100_energy="too_short", h200_energy="unsupported"))
    assert code == 0
    g = md_rows(md, "GEMM ceilings, burst vs sustained")
    assert md_rows(md, "GEMM ceilings: mean SM clock")[("bf16", "burst", "energy per op (J)")] == [
        "not known: energy_window_too_short (0.40 s measured, 1.0 s needed)",
        "not known: unknown (NVML: NOT_SUPPORTED)",
    ]
    assert g[("bf16", "burst", "power (W)")][1] == "samples mean 663, max 715"  # the samples still say what it drew
    ctx = md_rows(md, "Power limits")
    assert ctx[("energy counter",)] == ["nvmlDeviceGetTotalEnergyConsumption", "unknown (NVML: NOT_SUPPORTED)"]
    e = pd.read_csv(out / "energy.csv")
    assert e["watts_mean"].isna().all() and set(e["energy_unknown_reason"]) >= {"unknown (NVML: NOT_SUPPORTED)"}
    assert not (out / "throughput_vs_watts.png").exists()  # nothing to draw: no mean power anywhere


def test_energy_on_some_repetitions_says_how_many(tmp_path, capsys):
    _, md, _ = report(tmp_path, results(tmp_path, h100_energy="first_short"))
    g = md_rows(md, "GEMM ceilings: mean SM clock")
    assert g[("bf16", "burst", "energy per op (J)")][0].endswith(
        "(2 of 3 repetitions; the others: energy_window_too_short (0.40 s measured, 1.0 s needed))"
    )


def test_a_run_from_before_energy_says_so(tmp_path, capsys):
    root = tmp_path / "results"
    write(root / "a" / "run1" / "triaudit_synthetic_corners.json", synthetic_corners_result(H100))
    code, md, out = report(tmp_path, root)
    assert code == 0
    # The old ceiling (gemm/ceiling/<p>/shapes:12, right after a warm-up) is shown as the burst figure.
    assert (
        "| bf16 | burst | energy per op (J) | not known: no energy counter in this result (written before "
        "triaudit measured energy) |" in md
    )


def test_prices_for_two_cards_rent_and_buy(tmp_path, capsys):
    root = results(tmp_path)
    code, md, out = report(tmp_path, root, "--prices", str(prices_file(tmp_path, TWO_CARDS)))
    assert code == 0, capsys.readouterr().err
    p = md_rows(md, "Your prices")
    assert p[("price",)] == [
        "rent: USD 2.50 per GPU-hour",
        "buy: USD 32,000 over 4 years, 80% of hours in use; energy USD 0.12/kWh",
    ]
    # Renting: $2.50 per hour ÷ 0.760 PFLOP/s = $3.29 per PFLOP/s-hour.
    # Buying: $32,000 ÷ (4 × 8760 h × 0.8) = $1.1416/h + 0.650 kW (the case's measured power) × $0.12
    # = $0.078/h -> $1.2196/h ÷ 0.800 PFLOP/s = $1.52 per PFLOP/s-hour.
    f = md_rows(md, "USD per PFLOP/s-hour")
    assert f[("bf16", "burst")] == ["USD 3.29", "USD 1.52 (energy at 650 W, measured)"]
    c = pd.read_csv(out / "cost.csv")
    h200 = c[(c["card"] == H200 + SYNTH) & (c["figure"] == "PFLOP/s-hour") & (c["mode"] == "burst")].iloc[0]
    assert h200["value"] == pytest.approx((32000 / (4 * 8760 * 0.8) + 0.65 * 0.12) / 0.8)
    assert h200["power_source"] == "measured" and h200["per_gpu_hour"] == pytest.approx(1.21955, abs=1e-5)
    # Sustained BF16 on the H200 at 736 TFLOP/s and 630.5 W: (1.14155 + 0.6305 × 0.12) / 0.736.
    held = c[(c["card"] == H200 + SYNTH) & (c["figure"] == "PFLOP/s-hour") & (c["mode"] == "sustained")].iloc[0]
    assert held["value"] == pytest.approx((32000 / (4 * 8760 * 0.8) + 0.6305 * 0.12) / 0.736)
    # Bandwidth: $2.50 ÷ 3.3 TB/s = $0.758 per TB/s-hour, in cents as the row's other prices;
    # buying also $32,000 ÷ 4300 GB/s = $7.44 per GB/s (a rented card has no purchase price, and says so).
    b = md_rows(md, "USD per TB/s-hour")
    assert b[("fp32", "burst")][0] == "USD 0.76"
    assert b[("fp32", "purchase price per GB/s (burst)")] == ["rented: no purchase price", "USD 7.44"]
    # Decode: the plan's own figures from the same file and price (triaudit plan decode --run ...).
    h100_file = next((root / "nvidia-h100").rglob("*.json"))
    capsys.readouterr()  # the report's "wrote ..." lines
    assert (
        cli.main(
            ["plan", "--json", "--run", str(h100_file), "decode", "--model", "llama-2-7b", "--price-per-hour", "2.5"]
        )
        == 0
    )
    plan = {r[0]: r[1] for r in json.loads(capsys.readouterr().out)["rows"]}
    d = md_rows(md, "USD per million decode tokens, Llama-2-7B fp16")
    assert (
        d[("at batch 1",)][0] == f"USD {plan['cost per million tokens at batch 1']:.2f} "
        f"({N.number(plan['tokens/s per sequence (batch 1)'])} token/s)"
    )
    # By hand: batch 1 reads 13.48 GB of weights + 2.15 GB of KV cache per token at 3.3 TB/s = 211.2 token/s;
    # $2.50 ÷ (211.2 × 3600) × 1e6 = $3.29.
    assert plan["cost per million tokens at batch 1"] == pytest.approx(2.5 / (211.2 * 3600) * 1e6, rel=1e-3)
    dec = c[(c["card"] == H100 + SYNTH) & (c["figure"] == "million decode tokens")]
    served = re.search(r"batch (\d+)", d[("at the batch served",)][0]).group(1)
    assert set(dec["mode"]) == {"batch 1", f"batch {served}"}


def test_a_price_for_a_card_not_in_the_runs_is_named(tmp_path, capsys):
    text = TWO_CARDS + '\n[cards."b200"]\nrent_per_hour = 6\n'
    _, md, _ = report(tmp_path, results(tmp_path), "--prices", str(prices_file(tmp_path, text)))
    assert "Prices for b200 match no card in these runs." in md


def test_a_card_without_a_price_is_named_and_left_out(tmp_path, capsys):
    text = '[cards."h100-sxm"]\nrent_per_hour = 2.5\n'
    _, md, _ = report(tmp_path, results(tmp_path), "--prices", str(prices_file(tmp_path, text)))
    assert f"No price for {H200}{SYNTH}." in md


@pytest.mark.parametrize(
    "text,needle",
    [
        ("[cards.h100-sxm\nrent_per_hour = 2", "not valid TOML"),
        ('[cards."h100-sxm"]\nrent_per_hr = 2.5\n', "unknown key(s) rent_per_hr"),
        (
            '[cards."h100-sxm"]\nrent_per_hour = 2.5\nbuy_price = 30000\nyears = 3\npower_price_kwh = 0.1\n',
            "rent_per_hour or buy_price, not both",
        ),
        ('[cards."h100-sxm"]\nbuy_price = 30000\n', "buy_price needs years"),
        ('[cards."h100-sxm"]\nrent_per_hour = -1\n', "rent_per_hour must be a positive number"),
        ('[cards."h100-sxm"]\nrent_per_hour = "2.50"\n', "rent_per_hour must be a positive number, not '2.50'"),
        ('[cards."h100-sxm"]\nrent_per_hour = 2\nutilisation = 1.5\n', "at most 1"),
        ('[cards."h100-sxm"]\nrent_per_hour = 2\nyears = 3\n', "go with buy_price"),
        ('[cards."h100-sxm"]\n', "no price"),
        ('[decode]\nmodel = "gpt-5"\n[cards."h100-sxm"]\nrent_per_hour = 2\n', "model 'gpt-5' is not one of"),
        ("price = 3\n", "unknown key(s) price"),
        ('currency = "EUR"\n', "no card has a price"),
    ],
)
def test_a_bad_prices_file_is_refused_naming_it(tmp_path, capsys, text, needle):
    p = prices_file(tmp_path, text, "bad_prices.toml")
    code, _, out = report(tmp_path, results(tmp_path), "--prices", str(p))
    err = capsys.readouterr().err
    assert code == 2 and needle in err and str(p) in err and "Traceback" not in err
    assert not out.exists()  # the file is read before anything is written


def test_a_missing_prices_file_is_refused(tmp_path, capsys):
    code, _, out = report(tmp_path, results(tmp_path), "--prices", str(tmp_path / "nope.toml"))
    err = capsys.readouterr().err
    assert code == 2 and "nope.toml: cannot be read" in err and not out.exists()


def test_the_template_ships_no_prices_and_documents_every_key(tmp_path, capsys):
    text = TEMPLATE.read_text()
    assert [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")] == []
    for key in sorted(cost_report.CARD_KEYS) + ["currency", "[decode]", "model", "weights", "tokens_per_user"]:
        assert key in text
    # No figure is filled in even in the comments: every price line says "...".
    for key in ("rent_per_hour", "buy_price", "years", "power_price_kwh"):
        assert re.search(rf"^# {key} = \.\.\. ", text, re.M), key
    # Used as it is, it is refused: there is no price in it.
    code, _, _ = report(tmp_path, results(tmp_path), "--prices", str(TEMPLATE))
    assert code == 2 and "no card has a price" in capsys.readouterr().err
    # Uncommented with numbers written in, it is a working prices file.
    filled = re.sub(r"^# (\[|rent_per_hour|buy_price|years|power_price_kwh|utilisation)", r"\1", text, flags=re.M)
    filled = (
        filled.replace("rent_per_hour = ...", "rent_per_hour = 2")
        .replace("buy_price = ...", "buy_price = 30000")
        .replace("years = ...", "years = 4")
        .replace("power_price_kwh = ...", "power_price_kwh = 0.1")
    )
    prices = cost_report.load_prices(prices_file(tmp_path, filled, "filled_prices.toml"))
    assert prices.cards["h100-sxm"].per_hour == 2 and prices.cards["h200"].purchase == 30000


@pytest.mark.skipif(sys.version_info >= (3, 11), reason="Python >= 3.11 reads TOML with tomllib")
def test_tomli_reads_prices_before_python_3_11(tmp_path):  # pragma: no cover
    assert cost_report.load_prices(prices_file(tmp_path, TWO_CARDS)).cards["h100-sxm"].per_hour == 2.5


def test_pyproject_names_tomli_for_older_pythons():
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert re.search(
        r'"tomli>=[\d.]+; python_version < \\?"3\.11\\?""|\'tomli>=[\d.]+; python_version < "3\.11"\'', text
    )


def test_cost_arithmetic_of_the_two_checks_by_hand():
    from triaudit.plan import prices as C

    per = C.hourly(C.Price(per_hour=2.5)).total
    assert C.cost_per_million_tokens(3350e9 / 14e9, per) == pytest.approx(2.90, abs=0.005)
    s = 6 * 7e9 * 3e11 / (312e12 * 8 * 0.5)
    assert C.cost_of_seconds(s, 1.5, 8) == pytest.approx(33_654, abs=1)
    assert not math.isnan(per)


def test_counter_and_samples_that_disagree_are_named(tmp_path, capsys):
    root = tmp_path / "results"
    write(root / "h100" / "run1" / "triaudit_synthetic_energy.json", synthetic_energy_result(H100, samples=1.25))
    _, md, _ = report(tmp_path, root)
    # bf16 burst: the counter says 690 W, the samples 1.25 x 690 = 862.5 W: +25 %. STREAM's samples agree.
    assert f"| gemm/ceiling/bf16/burst | counter 690 W, samples {690 * 1.25:.0f} W (+25%) |" in md
    assert "| stream/triad/" not in md.split("disagree by more than 10%")[1].split("###")[0]


def test_prices_match_the_cards_name_under_all_runs(tmp_path, capsys):
    root = results(tmp_path)
    write(root / "nvidia-h100" / "run2" / "triaudit_synthetic_energy.json", synthetic_energy_result(H100))
    out = tmp_path / "report"
    assert (
        cli.main(
            ["report", str(root), "--out", str(out), "--all-runs", "--prices", str(prices_file(tmp_path, TWO_CARDS))]
        )
        == 0
    )
    c = pd.read_csv(out / "cost.csv")
    assert set(c["card"]) == {f"{H100} · run1{SYNTH}", f"{H100} · run2{SYNTH}", f"{H200} · run1{SYNTH}"}
    assert set(c.loc[c["card"].str.startswith(H100), "price_key"]) == {"h100-sxm"}
