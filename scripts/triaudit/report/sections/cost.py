"""`triaudit report --prices prices.toml`: what the measured throughput costs, per card, from the
user's prices (none ship with triaudit: scripts/prices.template.toml is the format, empty).

Per priced card (cost.py does the arithmetic; a used GPU-hour costs the rent, or the amortised
purchase plus the energy at the power drawn):
  $ per PFLOP/s-hour   per GPU-hour / measured PFLOP/s, per precision, GEMM ceiling burst and sustained
  $ per TB/s-hour      per GPU-hour / measured TB/s of the STREAM triad (largest size, L2 flushed),
                       burst and sustained; buying: also the purchase price per GB/s (the seeds'
                       "price per GB/s", from measured rather than datasheet bandwidth)
  $ per million decode tokens of a named model, from `triaudit plan decode --run` on the card's files
Buying's energy is at the power the very case drew (its energy counter's watts_mean), else the
card's datasheet TDP; each cell says which.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from triaudit.core import numbers as N
from triaudit.core.errors import TriauditError
from triaudit.core.specs import card_by_key, match_card
from triaudit.plan import prices as C
from triaudit.plan.models import MODELS
from triaudit.report import frames as F
from triaudit.report.section import Section
from triaudit.report.sections.energy import missing_ceilings
from triaudit.results.table import ResultSet, plain

CARD_KEYS = {"rent_per_hour", "buy_price", "years", "power_price_kwh", "utilisation"}
DECODE_WEIGHTS = ("fp16", "bf16", "fp8", "int8", "int4")


class PricesError(TriauditError):
    """A prices file that cannot be used; the message names the file and the problem."""


@dataclass
class Prices:
    path: Path
    cards: dict[str, C.Price] = field(default_factory=dict)  # key as written -> price
    currency: str = "USD"
    decode_model: str = "llama-2-7b"
    decode_weights: str = "fp16"
    tokens_per_user: float = 20.0

    def for_card(self, card_name: str) -> tuple[str, C.Price] | None:
        """The price whose key is the card's name as CUDA reports it, else whose key names the
        same datasheet card (a specs.py key such as h100-sxm)."""
        if card_name in self.cards:
            return card_name, self.cards[card_name]
        spec = match_card(card_name)
        if spec is None:
            return None
        for key, price in self.cards.items():
            try:
                if card_by_key(key).key == spec.key:
                    return key, price
            except KeyError:
                continue
        return None


def _toml():
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover - Python < 3.11
        import tomli as tomllib
    return tomllib


def _number(path: Path, where: str, v, zero_ok: bool = False) -> float:
    problem = C.number_problem(v, zero_ok)
    if problem:
        raise PricesError(f"{path}: {where} {problem}")
    return float(v)


def load_prices(path: str | Path) -> Prices:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise PricesError(f"{path}: cannot be read: {e.strerror or e}") from None
    toml = _toml()
    try:
        data = toml.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise PricesError(f"{path}: not a text file (TOML is UTF-8)") from None
    except toml.TOMLDecodeError as e:
        raise PricesError(f"{path}: not valid TOML: {e}") from None
    unknown = sorted(set(data) - {"currency", "decode", "cards"})
    if unknown:
        raise PricesError(f'{path}: unknown key(s) {", ".join(unknown)} (known: currency, [decode], [cards."<card>"])')
    prices = Prices(path)
    cur = data.get("currency", "USD")
    if not isinstance(cur, str) or not cur.strip():
        raise PricesError(f'{path}: currency must be a name such as "USD", not {cur!r}')
    prices.currency = cur.strip()
    dec = data.get("decode", {})
    if not isinstance(dec, dict):
        raise PricesError(f"{path}: decode must be a table ([decode])")
    bad = sorted(set(dec) - {"model", "weights", "tokens_per_user"})
    if bad:
        raise PricesError(f"{path}: [decode]: unknown key(s) {', '.join(bad)} (known: model, weights, tokens_per_user)")
    prices.decode_model = dec.get("model", prices.decode_model)
    if prices.decode_model not in MODELS:
        raise PricesError(f"{path}: [decode] model {prices.decode_model!r} is not one of {', '.join(sorted(MODELS))}")
    prices.decode_weights = dec.get("weights", prices.decode_weights)
    if prices.decode_weights not in DECODE_WEIGHTS:
        raise PricesError(
            f"{path}: [decode] weights {prices.decode_weights!r} is not one of {', '.join(DECODE_WEIGHTS)}"
        )
    if "tokens_per_user" in dec:
        prices.tokens_per_user = _number(path, "[decode] tokens_per_user", dec["tokens_per_user"])
    cards = data.get("cards", {})
    if not isinstance(cards, dict):
        raise PricesError(f'{path}: cards must be tables, one per card ([cards."h100-sxm"])')
    for key, entry in cards.items():
        where = f'[cards."{key}"]'
        if not isinstance(entry, dict):
            raise PricesError(f"{path}: {where} must be a table of prices, not {entry!r}")
        bad = sorted(set(entry) - CARD_KEYS)
        if bad:
            raise PricesError(
                f"{path}: {where}: unknown key(s) {', '.join(bad)} (known: {', '.join(sorted(CARD_KEYS))})"
            )
        nums = {k: _number(path, f"{where} {k}", v, zero_ok=(k == "power_price_kwh")) for k, v in entry.items()}
        rent, buy = "rent_per_hour" in nums, "buy_price" in nums
        problem = (
            "give rent_per_hour or buy_price, not both"
            if rent and buy
            else "no price: give rent_per_hour, or buy_price with years and power_price_kwh"
            if not (rent or buy)
            else "years and power_price_kwh go with buy_price, not with rent_per_hour"
            if rent and ({"years", "power_price_kwh"} & set(nums))
            else "buy_price needs years (written off over) and power_price_kwh"
            if buy and not {"years", "power_price_kwh"} <= set(nums)
            else f"utilisation is the fraction of hours in use, at most 1, not {nums['utilisation']:g}"
            if nums.get("utilisation", 1.0) > 1
            else ""
        )
        if problem:
            raise PricesError(f"{path}: {where}: {problem}")
        prices.cards[key] = C.Price(
            per_hour=nums.get("rent_per_hour"),
            purchase=nums.get("buy_price"),
            years=nums.get("years"),
            power_price_kwh=nums.get("power_price_kwh"),
            utilisation=nums.get("utilisation", 1.0),
            source=f"your price, {path.name}",
            currency=prices.currency,
        ).check(str(path))
    if not prices.cards:
        raise PricesError(
            f'{path}: no card has a price: add a [cards."<card>"] table with rent_per_hour, or '
            "buy_price, years and power_price_kwh (the template ships with none: prices are yours)"
        )
    return prices


def _describe(p: C.Price) -> str:
    use = f", {p.utilisation:.0%} of hours in use" if p.utilisation < 1 else ""
    if not p.buying:
        return f"rent: {C.money(p.per_hour, p.currency)} per GPU-hour{use}"
    return (
        f"buy: {C.money(p.purchase, p.currency)} over {p.years:g} years{use}; "
        f"energy {C.money(p.power_price_kwh, p.currency)}/kWh"
    )


def _power(p: C.Price, counters: dict, card_name: str) -> C.Power | None:
    """Buying only: the case's measured mean power, else the datasheet TDP."""
    if not p.buying:
        return None
    if "watts_mean" in counters:
        return C.Power(counters["watts_mean"][0], "measured")
    spec = match_card(card_name)
    if spec and spec.tdp_w:
        return C.Power(float(spec.tdp_w), "datasheet TDP")
    return None


def _cell(value: float, p: C.Price, power: C.Power | None, decimals: int | None = None) -> str:
    text = C.money(value, p.currency, decimals)
    if power is not None:
        text += f" (energy at {power.watts:,.0f} W, {power.source})"
    return text


def _rate_table(
    rows: pd.DataFrame,
    priced: dict,
    names: dict,
    unit: float,
    cur: str,
    recs: list,
    what: str,
    why: dict | None = None,
    name: str = "precision",
):
    """`why`: (card, name, mode) -> why the card has no such case (skipped, failed): said in its cell."""
    index: list[tuple] = []
    got: dict[tuple, str | tuple[float, C.Price, C.Power | None]] = {}  # a price's (value, price, power), or why not
    for _, r in rows.sort_values(["name", "mode"]).iterrows():
        key, p = priced[r["card"]]
        power = _power(p, r["counters"], names[r["card"]])
        k = (r["name"], r["mode"])
        if k not in index:
            index.append(k)
        if p.buying and power is None:
            got[(k, r["card"])] = "no power figure (no energy counter, no datasheet TDP)"
            continue
        per = C.hourly(p, power).total
        v = C.per_unit_hour(per, r["median"], unit)
        got[(k, r["card"])] = (v, p, power)
        recs.append(
            {
                "card": r["card"],
                "price_key": key,
                "figure": what,
                "name": r["name"],
                "mode": r["mode"],
                "value": v,
                "unit": f"{cur} per {what}",
                "per_gpu_hour": per,
                "rate": r["median"],
                "rate_case": r["case"],
                "power_w": power.watts if power else math.nan,
                "power_source": power.source if power else "",
            }
        )
    cards = sorted(priced)
    if not index:
        return pd.DataFrame()
    # One row's prices with the same decimals (core/numbers.py money_decimals).
    decimals = {
        k: N.money_decimals([g[0] for (kk, _), g in got.items() if kk == k and isinstance(g, tuple)]) for k in index
    }

    def cell(k, card) -> str:
        g = got.get((k, card))
        if g is None:
            return (why or {}).get((card, k[0], k[1]), F.NOT_RUN)
        if isinstance(g, str):
            return g
        return _cell(g[0], g[1], g[2], decimals[k])

    return pd.DataFrame(
        [{c: cell(k, c) for c in cards} for k in index],
        index=pd.MultiIndex.from_tuples(index, names=[name, "mode"]),
        columns=cards,
    )


def decode_cost(files: list[str], prices: Prices, p: C.Price) -> dict:
    """`triaudit plan decode --run FILES --model M --weights W` with the card's price: the plan's own
    rows (tokens/s, cost per million tokens), or {"error": why}."""
    from triaudit.plan import cost as plan_cost
    from triaudit.plan import model as P
    from triaudit.plan.questions import Question, answer
    from triaudit.results.gbench import LoadError

    q = Question(
        "decode",
        run=[Path(f) for f in files],
        model=prices.decode_model,
        weights=prices.decode_weights,
        tokens_per_user=prices.tokens_per_user,
        utilisation=p.utilisation,
    )
    if p.buying:
        q.price, q.years, q.power_price_kwh = p.purchase, p.years, p.power_price_kwh
    else:
        q.price_per_hour = p.per_hour
    try:
        ans = plan_cost.with_cost(q, answer(q))
    except (P.PlanError, LoadError, C.CostError) as e:
        return {"error": str(e)}
    return {
        "rows": {r[0]: r[1] for r in ans["rows"]},
        "sources": {r[0]: r[3] for r in ans["rows"]},
        "binds": ans.get("binds"),
    }


def _decode_table(df: pd.DataFrame, prices: Prices, priced: dict, recs: list) -> pd.DataFrame:
    cards = sorted(priced)
    m = MODELS[prices.decode_model]
    workload = f"{m.name}, {prices.decode_weights} weights, {prices.tokens_per_user:g} token/s per user"
    served, single = "at the batch served", "at batch 1"
    cells: dict[tuple[str, str], object] = {}  # (row, card) -> (value, text after it, price) or why
    for card in cards:
        key, p = priced[card]
        files = sorted(df.loc[(df["card"] == card) & (df["status"] == "ok"), "file"].unique())
        got = decode_cost(files, prices, p)
        if "error" in got:
            cells[(served, card)] = cells[(single, card)] = f"not known: {got['error']}"
            continue
        r, src = got["rows"], got["sources"]
        if "cost per million tokens" not in r:
            need = r.get("GPUs that would hold it")
            cells[(served, card)] = cells[(single, card)] = (
                f"does not fit one GPU{f' ({need} GPUs would hold it)' if need else ''}"
            )
            continue
        batched = [(k, v) for k, v in r.items() if k.startswith("tokens/s at batch ")]
        power = next((s for k, s in src.items() if k == "power drawn"), "")
        tail = (
            f"; energy at {r['power drawn']:,.0f} W, {power.split(':')[0]}" if p.buying and "power drawn" in r else ""
        )
        one_tps = r["tokens/s per sequence (batch 1)"]
        one = r.get("cost per million tokens at batch 1", r["cost per million tokens"] if not batched else None)
        if one is not None:
            cells[(single, card)] = (one, f" ({N.number(one_tps)} token/s{tail})", p)
            recs.append(
                {
                    "card": card,
                    "price_key": key,
                    "figure": "million decode tokens",
                    "name": prices.decode_model,
                    "mode": "batch 1",
                    "value": one,
                    "unit": f"{p.currency} per million tokens",
                    "rate": one_tps,
                    "workload": workload,
                }
            )
        if batched:
            label, tps = batched[-1]
            batch = label.removeprefix("tokens/s at batch ")
            v = r["cost per million tokens"]
            cells[(served, card)] = (v, f" (batch {batch}, {N.number(tps)} token/s{tail})", p)
            recs.append(
                {
                    "card": card,
                    "price_key": key,
                    "figure": "million decode tokens",
                    "name": prices.decode_model,
                    "mode": f"batch {batch}",
                    "value": v,
                    "unit": f"{p.currency} per million tokens",
                    "rate": tps,
                    "workload": workload,
                }
            )
        elif one is not None:
            cells[(served, card)] = "batch 1 only: no larger batch keeps the per-user rate"
    rows = [row for row in (served, single) if any(isinstance(cells.get((row, c)), tuple) for c in cards)]
    data = []
    for row in rows:
        d = N.money_decimals([g[0] for c in cards if isinstance(g := cells.get((row, c)), tuple)])
        data.append(
            {
                c: C.money(g[0], g[2].currency, d) + g[1]
                if isinstance(g := cells.get((row, c)), tuple)
                else g or F.NOT_RUN
                for c in cards
            }
        )
    t = pd.DataFrame(data, index=pd.Index(rows, name="decode"), columns=cards)
    return t


def cost_section(rs: ResultSet, prices: Prices | str | Path):
    df = rs.table
    if not isinstance(prices, Prices):
        prices = load_prices(prices)
    cur = prices.currency
    sec = Section("cost", f"Cost from your prices ({prices.path.name})")
    ok = plain(df[df["status"] == "ok"]) if not df.empty else df
    names = {}
    if not ok.empty:
        names = dict(zip(ok["card"], ok["card_name"] if "card_name" in ok else ok["card"]))
    priced = {}
    for card, name in sorted(names.items()):
        hit = prices.for_card(name)
        if hit:
            priced[card] = hit
    used = {k for k, _ in priced.values()}
    unused = [k for k in prices.cards if k not in used]
    unpriced = sorted(set(names) - set(priced))
    said = (f" Prices for {', '.join(unused)} match no card in these runs." if unused else "") + (
        f" No price for {', '.join(unpriced)}." if unpriced else ""
    )
    if not priced:
        sec.tables.append(
            (
                "No card of these runs has a price in " + str(prices.path) + "." + said,
                pd.DataFrame({"price key": list(prices.cards)}).set_index("price key"),
            )
        )
        return sec
    cards = sorted(priced)
    sec.tables.append(
        (
            f"Your prices ({prices.path}; keys match a card's name or its specs.py key).{said}",
            pd.DataFrame(
                {"price key": {c: priced[c][0] for c in cards}, "price": {c: _describe(priced[c][1]) for c in cards}}
            )
            .T[cards]
            .rename_axis("your prices"),
        )
    )
    recs: list[dict] = []
    bs = F.burst_sustained_frame(df, rs.contexts)
    bs = bs[bs["card"].isin(priced)] if not bs.empty else bs
    src = (
        f"throughput measured (the Energy section's cases); prices yours ({prices.path.name}); buying: energy at "
        "the case's measured power (energy counter), else the datasheet TDP, named in each cell"
    )
    g = bs[bs["kind"] == "gemm"] if not bs.empty else bs
    if not g.empty:
        t = _rate_table(g, priced, names, 1e15, cur, recs, "PFLOP/s-hour", missing_ceilings(df))
        if not t.empty:
            sec.tables.append(
                (
                    f"{cur} per PFLOP/s-hour of measured dense GEMM (POP/s for int8): an hour of the card ÷ "
                    f"its ceiling in PFLOP/s, burst and sustained; {src}",
                    t,
                )
            )
    s = bs[bs["kind"] == "stream"] if not bs.empty else bs
    if not s.empty:
        t = _rate_table(s, priced, names, 1e12, cur, recs, "TB/s-hour", name="type")
        buy = {c: p for c, (_, p) in priced.items() if p.buying}
        if not t.empty and buy:
            burst = s[(s["mode"] == "burst") & s["card"].isin(buy)]
            decimals = N.money_decimals(
                [buy[r["card"]].purchase / (r["median"] / 1e9) for r in burst.to_dict("records")]
            )
            for r in burst.to_dict("records"):
                v = buy[r["card"]].purchase / (r["median"] / 1e9)
                t.loc[(r["name"], "purchase price per GB/s (burst)"), r["card"]] = C.money(v, cur, decimals)
                recs.append(
                    {
                        "card": r["card"],
                        "price_key": priced[r["card"]][0],
                        "figure": "purchase per GB/s",
                        "name": r["name"],
                        "mode": "burst",
                        "value": v,
                        "unit": f"{cur} per GB/s",
                        "rate": r["median"],
                        "rate_case": r["case"],
                    }
                )
            t = t.fillna("rented: no purchase price")
        if not t.empty:
            sec.tables.append(
                (
                    f"{cur} per TB/s-hour of measured memory bandwidth (STREAM triad, largest size, L2 "
                    f"flushed): an hour of the card ÷ its TB/s; buying: also the purchase price per GB/s "
                    f"(the price-per-bandwidth comparison, on measured bandwidth); {src}",
                    t,
                )
            )
    m = MODELS[prices.decode_model]
    t = _decode_table(df, prices, priced, recs)
    if not t.empty:
        sec.tables.append(
            (
                f"{cur} per million decode tokens, {m.name} {prices.decode_weights} weights, one GPU "
                f"(triaudit plan decode --run on the card's files: measured memory bandwidth and compute); "
                f"at the batch served: the most users that fit and each get {prices.tokens_per_user:g} token/s "
                "(the summary's figure); and at batch 1",
                t,
            )
        )
    if recs:
        sec.csv = pd.DataFrame(recs)
    return sec
