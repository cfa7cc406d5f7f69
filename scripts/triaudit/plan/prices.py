"""What a GPU-hour of use costs from a user's price, and what an operation, a run or a million
tokens costs at a throughput. Pure arithmetic; every result says where each input came from.

  renting:  per GPU-hour of use = hourly price / utilisation
  buying:   per GPU-hour of use = price / (years x 8760 h x utilisation)      (amortised)
                                + watts / 1000 x price per kWh                  (energy while in use)
  cost of T seconds on n GPUs = n x T / 3600 x per GPU-hour
  cost per million tokens     = n x per GPU-hour / (tokens/s x 3600) x 1e6

Utilisation is the fraction of the paid (rented) or owned (bought) hours the GPUs do the work:
idle hours are paid for all the same, so they raise the cost of a used hour. The energy of idle
hours is not counted (idle boards draw a small fraction of their limit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from triaudit.core import numbers as N
from triaudit.core.errors import TriauditError

HOURS_PER_YEAR = 8760.0  # 365 days


class CostError(TriauditError):
    pass


def number_problem(v, zero_ok: bool = False) -> str | None:
    """What is wrong with a price, a count of years or a rate as given (None: a usable number)."""
    if (
        isinstance(v, bool)
        or not isinstance(v, (int, float))
        or not math.isfinite(v)
        or v < 0
        or (v == 0 and not zero_ok)
    ):
        return f"must be a {'non-negative' if zero_ok else 'positive'} number, not {v!r}"
    return None


@dataclass(frozen=True)
class Price:
    """A user's price of one GPU: renting (per_hour) or buying (purchase over years, energy per kWh)."""

    per_hour: float | None = None
    purchase: float | None = None
    years: float | None = None
    power_price_kwh: float | None = None
    utilisation: float = 1.0
    source: str = "user price"
    currency: str = "USD"

    @property
    def buying(self) -> bool:
        return self.purchase is not None

    def check(self, where: str = "") -> Price:
        """Raises CostError naming `where` (an option or a file) when the price is incomplete or not a price."""
        at = f"{where}: " if where else ""

        def positive(name: str, v, zero_ok: bool = False) -> None:
            problem = number_problem(v, zero_ok)
            if problem:
                raise CostError(f"{at}{name} {problem}")

        if (self.per_hour is None) == (self.purchase is None):
            raise CostError(
                f"{at}give either a rent (price per GPU-hour) or a purchase price, "
                + ("not both" if self.per_hour is not None else "neither was given")
            )
        if self.per_hour is not None:
            positive("the price per GPU-hour", self.per_hour)
            if self.years is not None or self.power_price_kwh is not None:
                raise CostError(f"{at}years and the power price go with a purchase price, not with a rent")
        else:
            positive("the purchase price", self.purchase)
            if self.years is None or self.power_price_kwh is None:
                raise CostError(
                    f"{at}a purchase price needs the years it is written off over and the power price per kWh"
                )
            positive("years", self.years)
            positive("the power price per kWh", self.power_price_kwh, zero_ok=True)
        positive("utilisation", self.utilisation)
        if self.utilisation > 1:
            raise CostError(f"{at}utilisation is a fraction of the hours, at most 1: {self.utilisation!r}")
        return self


@dataclass(frozen=True)
class Power:
    watts: float
    source: str  # "measured: watts_mean of <case>", "datasheet TDP: <card>", "given: --watts"


@dataclass(frozen=True)
class Hourly:
    """The cost of one GPU-hour of use, and its parts (buying), with the sources."""

    total: float
    amortised: float | None
    energy: float | None
    power: Power | None
    explain: str


def money(v: float, currency: str = "USD", decimals: int | None = None) -> str:
    """'USD 2.90', 'USD 33,654.00', 'USD 0.00012': core/numbers.py money (one style everywhere);
    `decimals`: a table's, so its prices line up."""
    return N.money(v, currency, decimals)


def hourly(price: Price, power: Power | None = None) -> Hourly:
    cur = price.currency
    use = f" ÷ {price.utilisation:.0%} utilisation" if price.utilisation < 1 else ""
    if not price.buying:
        total = price.per_hour / price.utilisation
        return Hourly(total, None, None, None, f"{money(price.per_hour, cur)} per GPU-hour ({price.source}){use}")
    if power is None:
        raise CostError(
            "a purchase price needs the power drawn for the energy cost: measured (a run with energy "
            "counters), the datasheet TDP of a known card, or given"
        )
    amortised = price.purchase / (price.years * HOURS_PER_YEAR * price.utilisation)
    energy = power.watts / 1000.0 * price.power_price_kwh
    explain = (
        f"{money(price.purchase, cur)} over {price.years:g} years × 8760 h{' × ' + format(price.utilisation, '.0%') + ' in use' if use else ''}"
        f" = {money(amortised, cur)}/h ({price.source}) + {power.watts:,.0f} W ({power.source}) × "
        f"{money(price.power_price_kwh, cur)}/kWh ({price.source}) = {money(energy, cur)}/h"
    )
    return Hourly(amortised + energy, amortised, energy, power, explain)


def cost_of_seconds(seconds: float, per_gpu_hour: float, gpus: int = 1) -> float:
    return gpus * seconds / 3600.0 * per_gpu_hour


def cost_per_million_tokens(tokens_per_s: float, per_gpu_hour: float, gpus: int = 1) -> float:
    return gpus * per_gpu_hour / (tokens_per_s * 3600.0) * 1e6


def per_unit_hour(per_gpu_hour: float, rate: float, unit: float) -> float:
    """Cost of one hour of `unit` (e.g. 1e15 FLOP/s) at a measured `rate` on one GPU: per GPU-hour
    / (rate / unit). What one PFLOP/s-hour or one TB/s-hour of the card's measured throughput costs."""
    return per_gpu_hour / (rate / unit)
