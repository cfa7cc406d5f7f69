"""`triaudit figures RESULTS... [--json]`: each card's headline figures, as the report's summary, `plan
--run` and the gate quote them (results/figures.py), for scripts and dashboards. Per card its newest
complete run, as the report chooses it. Exit 0 figures found; 2 bad input; 3 no headline figure in
the results."""

from __future__ import annotations

import json
import math
from pathlib import Path

from triaudit.commands.console import say
from triaudit.core import numbers as N
from triaudit.core.errors import EXIT_NOTHING_JUDGED, EXIT_OK, TriauditError
from triaudit.core.io.rows import INPUT, PathOption, Row

IO = Row(
    command="figures",
    paths=(PathOption("results", "results", INPUT),),
    writes="stdout only (`--json`: strict JSON)",
    refuses="a FIFO or a missing path as an input",
    codes=(0, 2, 3, 130),
)


def _number(v) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def records(results: list[Path], include_incomplete: bool = False) -> tuple[list[dict], list[str]]:
    """The headline figures of the newest complete run of each card under `results`, one dict each
    (base units, and as shown), and notes on what was left out."""
    from triaudit.results import runs as R
    from triaudit.results.figures import headline_figures
    from triaudit.store.source import open_source

    source = open_source(results)  # the results store's runs where one indexes the paths, else the JSON
    if not source.runs:
        raise TriauditError(f"no result files under {', '.join(map(str, results))}")
    loaded = source.load()
    df = loaded.table
    notes = list(source.skipped) + source.notes()
    if not df.empty and not include_incomplete:
        partial = sorted(set(df.loc[~df["complete"].astype(bool), "run"].astype(str)))
        if partial:
            notes.append(f"incomplete runs left out (--include-incomplete takes them): {', '.join(partial)}")
            df = df[df["complete"].astype(bool)]
    df, shown, left_out = R.select(df, loaded.runs, loaded.contexts)
    notes += left_out
    figs = headline_figures(df, loaded.contexts)
    out = []
    for r in figs.to_dict("records"):
        median, scale = float(r["median"]), float(r["scale"])
        spread = _number(r.get("spread_pct"))
        fraction = _number(r.get("fraction"))
        out.append(
            {
                "card": str(r["card"]),
                "key": str(r["key"]),
                "account": str(r["account"]),
                "label": str(r["label"]),
                "counter": str(r["counter"]),
                "value": median,
                "shown": N.figure(median, scale, spread, fraction),
                "min": _number(r.get("min")),
                "max": _number(r.get("max")),
                "spread_pct": spread,
                "repetitions": int(r["reps"]) if _number(r.get("reps")) is not None else None,
                "files": int(r["files"]),
                "fraction_of_datasheet": fraction,
                "watts": _number(r.get("watts")),
                "gpus": int(r["ranks"]) if _number(r.get("ranks")) is not None else None,
                "link": str(r.get("link") or "") or None,
                "case": str(r["case"]),
                "run": str(r["run"]),
                "file": str(r["file"]),
                "provenance": str(r.get("provenance") or "") or None,
                "runs": shown.get(str(r["card"]), []),
            }
        )
    return out, notes


def render(figs: list[dict]) -> str:
    lines: list[str] = []
    for card in sorted({f["card"] for f in figs}):
        mine = [f for f in figs if f["card"] == card]
        runs = mine[0]["runs"]
        lines.append(f"{card}" + (f" ({'; '.join(runs)})" if runs else ""))
        width = max(len(f["label"]) for f in mine)
        for f in mine:
            lines.append(f"  {f['account']:<9}  {f['label']:<{width}}  {f['shown']:<24}  {f['case']}")
    return "\n".join(lines)


def run(a) -> int:
    figs, notes = records(a.results, a.include_incomplete)
    if a.json:
        say(json.dumps({"figures": figs, "notes": notes}, indent=2, allow_nan=False))
    else:
        say(render(figs) if figs else "no headline figure in these results")
        for n in notes:
            say(f"note: {n}")
    return EXIT_OK if figs else EXIT_NOTHING_JUDGED


def add_parser(sub) -> None:
    p = sub.add_parser(
        "figures",
        help="each card's headline figures, as the summary, plan --run and the gate quote them "
        "(exit 0 found, 2 bad input, 3 none)",
        description=__doc__,
    )
    p.add_argument("results", type=Path, nargs="+", help="result files or folders")
    p.add_argument("--json", action="store_true", help="machine-readable output (base units, and as shown)")
    p.add_argument("--include-incomplete", action="store_true", help="also take runs marked incomplete")
    p.set_defaults(func=run)
