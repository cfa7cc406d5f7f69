"""`triaudit floors derive RUNS... --out FILE`: a fleet's own floors per SKU and check
(judge/derive.py), for `triaudit gate --floors FILE`. Exit 0 written, 2 bad input or an --out that
exists (refused unless --force), 3 nothing to derive from (no GPU result)."""

from __future__ import annotations

from pathlib import Path

from triaudit.commands.console import say
from triaudit.core.errors import EXIT_NOTHING_JUDGED
from triaudit.core.io.rows import INPUT, OUTPUT_FILE, PathOption, Row

IO = {
    "derive": Row(
        command="floors derive",
        paths=(PathOption("runs", "runs", INPUT), PathOption("out", "--out", OUTPUT_FILE)),
        writes="`--out` written whole",
        refuses="an input, or a file inside one; an existing `--out` unless `--force`",
        codes=(0, 2, 3, 130),
    )
}


def add_parser(sub) -> None:
    f = sub.add_parser("floors", help="floors for `gate`: derive a fleet's own from its runs")
    fs = f.add_subparsers(dest="floors_command", required=True)
    d = fs.add_parser(
        "derive",
        help="per SKU and check: median, robust spread, FAIL at max(3 sigma, 4 %%) below, WARN halfway, "
        "and the expected false-fail rate (exit 0 written, 2 bad input, 3 nothing to derive)",
    )
    d.add_argument(
        "runs", type=Path, nargs="+", help="the fleet's run folders or result files (several nights: better)"
    )
    d.add_argument(
        "--out", type=Path, required=True, help="the floors file to write (TOML); an existing one is refused"
    )
    d.add_argument("--force", action="store_true", help="replace an existing --out")
    d.add_argument("--fleet", default="", help="the fleet's name in each floor's provenance (default: the paths given)")
    d.set_defaults(func=run_derive)


def run_derive(a) -> int:
    from triaudit.core.io.outputs import replace_file
    from triaudit.judge import derive as D
    from triaudit.judge.gate_checks import fmt

    D.check_out(a.out, a.force)
    skus, notes = D.derive(a.runs)
    if not skus:
        for n in notes:
            say(f"- {n}")
        say("No floors derived: no GPU result in these runs.")
        return EXIT_NOTHING_JUDGED
    fleet = a.fleet or ", ".join(str(p) for p in a.runs)
    date = D.today_utc()
    text = D.to_toml(skus, fleet, date, D.measured_span(a.runs))
    try:
        replace_file(a.out, text)
    except OSError as exc:
        raise D.DeriveError(f"--out {a.out}: cannot be written: {exc.strerror or exc}") from None
    lines = [f"## Floors derived into {a.out}", ""]
    for s in skus:
        lines += [f"**{s.name}**: {s.gpus} GPU(s)", ""]
        lines += ["| floor | case | units | median | robust σ | FAIL | WARN | expected false-fail rate |"]
        lines += ["|---|---|---|---|---|---|---|---|"]
        for d in s.floors:
            check = d.key.split(":")[0]
            few = " (fewer than 8)" if len(d.units) < D.FEW_GPUS else ""
            lines.append(
                f"| {d.key} | {d.case} | {len(d.units)}{few} | {fmt(d.median, check)} | {fmt(d.robust_sigma, check)} | "
                f"{fmt(d.fail, check)} | {fmt(d.warn, check)} | {d.rate_text()} |"
            )
            if d.below:
                lines.append(f"| | below FAIL now: {'; '.join(d.below[:5])} | | | | | | |")
        lines += [f"- left out: {x}" for x in s.left_out] + [""]
    lines += [f"- {n}" for n in notes]
    say("\n".join(lines).rstrip())
    return 0
