"""Cost rows for every `triaudit plan` answer, from the user's price (cost.py does the arithmetic).

--price-per-hour USD                               renting, per GPU-hour
--price USD --years N --power-price-kwh USD        buying: amortised + energy at the power drawn
--utilisation F                                    the fraction of paid/owned hours in use (default 1)
--watts W                                          the power per GPU, overriding measured and datasheet

The power for buying's energy: --watts if given, else the energy counter's watts_mean of the very
case the answer's binding figure was measured on (--run), else the card's datasheet TDP (an upper
bound: boards under the software power cap draw up to it). Row names (--json) are stable:
`cost per hour`, `cost per million tokens` (decode), `cost of the run` (train), `cost of the
operation` (roofline with an operation, transfer, a collective, launches).
"""

from __future__ import annotations

import argparse
import re

from triaudit.core import argtypes
from triaudit.core.specs import card_by_key, match_card
from triaudit.plan import collective
from triaudit.plan import model as P
from triaudit.plan import prices as C
from triaudit.plan.questions import figures_for

_money_arg = argtypes.non_negative


def add_arguments(parser, questions) -> None:
    """The price options, on `plan` and (so they may follow the question) on every question."""
    for i, p in enumerate([parser, *questions]):
        d = {} if i == 0 else {"default": argparse.SUPPRESS}
        g = p.add_argument_group("cost (your prices; none ship with triaudit)")
        g.add_argument("--price-per-hour", type=_money_arg, metavar="USD", help="renting: price per GPU-hour", **d)
        g.add_argument(
            "--price",
            type=_money_arg,
            metavar="USD",
            help="buying: price per GPU (with --years, --power-price-kwh)",
            **d,
        )
        g.add_argument("--years", type=_money_arg, metavar="N", help="buying: years the price is written off over", **d)
        g.add_argument("--power-price-kwh", type=_money_arg, metavar="USD", help="buying: electricity per kWh", **d)
        g.add_argument(
            "--utilisation",
            type=_money_arg,
            metavar="F",
            help="fraction of the paid or owned hours the GPUs do this work (default 1)",
            **d,
        )
        g.add_argument(
            "--watts",
            type=_money_arg,
            metavar="W",
            help="buying: power per GPU for the energy cost (default: measured by --run, else the datasheet TDP)",
            **d,
        )


def price_from_args(a) -> C.Price | None:
    given = {
        k: getattr(a, k, None) for k in ("price_per_hour", "price", "years", "power_price_kwh", "utilisation", "watts")
    }
    if given["price_per_hour"] is None and given["price"] is None:
        extra = [k for k in ("years", "power_price_kwh", "utilisation", "watts") if given[k] is not None]
        if extra:
            raise P.PlanError(
                f"--{extra[0].replace('_', '-')} needs a price: --price-per-hour (renting) or --price (buying)"
            )
        return None
    if given["price_per_hour"] is not None and given["price"] is not None:
        raise P.PlanError("--price-per-hour (renting) and --price (buying) exclude each other: give one")
    if given["price"] is not None and given["watts"] is not None and given["watts"] <= 0:
        raise P.PlanError(f"--watts must be positive: {given['watts']:g}")
    what = "--price-per-hour" if given["price_per_hour"] is not None else "--price"
    price = C.Price(
        per_hour=given["price_per_hour"],
        purchase=given["price"],
        years=given["years"],
        power_price_kwh=given["power_price_kwh"],
        utilisation=1.0 if given["utilisation"] is None else given["utilisation"],
        source=f"user price, {what}",
    )
    try:
        return price.check()
    except C.CostError as e:
        raise P.PlanError(f"{what}: {e}") from None


def _power(a, figure: P.Figure | None, card: str | None) -> C.Power | None:
    if getattr(a, "watts", None):
        return C.Power(a.watts, "given: --watts")
    if figure is not None and figure.watts is not None:
        return C.Power(figure.watts.value, figure.watts.source)
    try:
        spec = card_by_key(a.card) if getattr(a, "card", None) else match_card(card or "")
    except KeyError as e:
        raise P.PlanError(str(e.args[0])) from None
    if spec and spec.tdp_w:
        unmeasured = (
            f"; {figure.source.removeprefix('measured: ')} has no energy figure"
            if figure is not None and figure.source.startswith("measured")
            else ""
        )
        return C.Power(float(spec.tdp_w), f"datasheet TDP: {spec.name}{unmeasured}")
    return None


def _rows_by_label(ans: dict) -> dict:
    return {r[0]: r[1] for r in ans["rows"]}


def _basis_or_none(a):
    if not (getattr(a, "run", None) or getattr(a, "card", None)):
        return None
    return figures_for(a)


def with_cost(a, ans: dict) -> dict:
    """`ans` with the cost rows (and notes) added when a price was given; unchanged otherwise."""
    price = price_from_args(a)
    if price is None:
        return ans
    q, rows = ans["question"], _rows_by_label(ans)
    basis = None
    figure = None  # the measured or datasheet figure whose case's power the energy cost uses
    gpus = getattr(a, "gpus", 1) or 1
    cur = price.currency
    out: list[tuple] = []
    notes: list[str] = []
    if price.buying and not getattr(a, "watts", None):
        basis = _basis_or_none(a) if not (q == "train" and getattr(a, "tflops", None) and not a.card) else None
        if basis is not None:
            if q == "decode":
                flops = next((basis.flops[k] for k in P.DECODE_COMPUTE[a.weights] if k in basis.flops), None)
                figure = flops if ans.get("binds") == "compute" else basis.mem_bw
            elif q == "train":
                figure = basis.flops.get(a.precision)
            elif q == "roofline":
                figure = basis.flops.get(a.precision) if ans.get("binds") != "bandwidth" else basis.mem_bw
            elif q == "transfer" and not (a.link or a.link_gbps):
                figure = basis.host_pinned
    power = None
    if price.buying:
        power = _power(a, figure, basis.card if basis else ans.get("card"))
        if power is None:
            raise P.PlanError(
                "--price (buying) needs the power drawn for the energy cost: --run with energy "
                "counters, --card (datasheet TDP) or --watts"
            )
    h = C.hourly(price, power)
    if price.buying:
        out += [
            ("power drawn", power.watts, "W per GPU", power.source),
            (
                "amortised price",
                h.amortised,
                f"{cur} per GPU-hour",
                f"{C.money(price.purchase, cur)} over {price.years:g} years × 8760 h × {price.utilisation:.0%} in use "
                f"({price.source})",
            ),
            (
                "energy",
                h.energy,
                f"{cur} per GPU-hour",
                f"{power.watts:,.0f} W × {C.money(price.power_price_kwh, cur)}/kWh ({price.source})",
            ),
        ]
        if power.source.startswith("datasheet TDP"):
            notes.append("energy at the datasheet TDP: an upper bound (a run with energy counters, --run, measures it)")
    per = h.total
    out.append(
        (
            "cost per hour",
            per * gpus,
            f"{cur}/h for {gpus} GPU{'s' if gpus > 1 else ''}",
            h.explain + (f" × {gpus} GPUs" if gpus > 1 else ""),
        )
    )

    # Where the time or throughput came from: the source of the answer's row it rests on.
    sources = {r[0]: r[3] for r in ans["rows"]}

    def from_row(*labels: str) -> str:
        src = next((sources[k] for want in labels for k in sources if k.startswith(want) and sources[k]), "")
        return f"; rate from {src}" if src else ""

    price_src = f"{C.money(per, cur)}/GPU-hour ({'see cost per hour' if price.buying else price.source})"

    def of_seconds(label: str, seconds: float, what: str, n: int = 1, rate: str = "") -> None:
        out.append(
            (
                label,
                C.cost_of_seconds(seconds, per, n),
                cur,
                f"{what} {seconds:.4g} s × {n} GPU{'s' if n > 1 else ''} × {price_src}{rate}",
            )
        )

    if q == "decode":
        batched = [
            (int(m.group(1)), v)
            for label, v in rows.items()
            if (m := re.fullmatch(r"tokens/s at batch (\d+)", label)) and isinstance(v, (int, float))
        ]
        single = rows.get("tokens/s per sequence (batch 1)")
        if str(ans.get("binds", "")).startswith("capacity") and rows.get("fits in memory") == "no":
            notes.append("does not fit: no cost per token (cost per hour of the GPUs asked for only)")
        else:
            batch, tps = batched[-1] if batched else (1, single)
            rate = from_row("compute (" if ans.get("binds") == "compute" else "memory bandwidth")
            src = f"{gpus} × {price_src} ÷ ({tps:,.1f} token/s at batch {batch} × 3600) × 1e6{rate}"
            out.append(("cost per million tokens", C.cost_per_million_tokens(tps, per, gpus), cur, src))
            if batch != 1 and single:
                out.append(
                    (
                        "cost per million tokens at batch 1",
                        C.cost_per_million_tokens(single, per, gpus),
                        cur,
                        f"{gpus} × {price_src} ÷ ({single:,.1f} token/s × 3600) × 1e6{from_row('memory bandwidth')}",
                    )
                )
    elif q == "train":
        s = rows["time in seconds"]
        out.append(
            (
                "cost of the run",
                C.cost_of_seconds(s, per, gpus),
                cur,
                f"{s / 3600:,.0f} h × {gpus} GPU{'s' if gpus > 1 else ''} × {price_src}{from_row('per-GPU peak')}",
            )
        )
    elif q == "roofline" and "time floor" in rows:
        bound = "ridge point (" if ans.get("binds") == "compute" else "memory bandwidth"
        of_seconds("cost of the operation", rows["time floor"] * 1e-6, "time floor", rate=from_row(bound))
    elif q == "transfer":
        if "time" in rows:
            of_seconds("cost of the operation", rows["time"] * 1e-3, "time", rate=from_row("link"))
        else:
            for kind in ("pinned", "pageable"):
                if f"{kind} time" in rows:
                    of_seconds(
                        "cost of the operation" + ("" if kind == "pinned" else ", pageable"),
                        rows[f"{kind} time"] * 1e-3,
                        f"{kind} time",
                        rate=from_row(f"{kind} bandwidth"),
                    )
    elif q == collective.QUESTION:
        of_seconds("cost of the operation", rows["time"] * 1e-3, "time", gpus, rate=from_row("link, per direction"))
    elif q == "launches":
        of_seconds(
            "cost of the operation",
            rows["eager, per step"] * 1e-3,
            "eager launches per step",
            rate=from_row("eager, per"),
        )
        if "graph, per step" in rows:
            of_seconds(
                "cost of the operation, graph",
                rows["graph, per step"] * 1e-3,
                "graph launches per step",
                rate=from_row("graph, per"),
            )
    notes.append(
        "costs from your price ("
        + ("rent" if not price.buying else "purchase + energy")
        + "); every cost row names its inputs' sources"
    )
    return {**ans, "rows": ans["rows"] + out, "notes": ans.get("notes", []) + notes}
