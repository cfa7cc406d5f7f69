"""The `triaudit` command: run the suite, report on runs.

Exit codes: 0 ok; 1 something failed; 2 bad usage or unreadable input; 77 no CUDA device.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import runner
from .gbench import LoadError


def cmd_run(a) -> int:
    out = runner.run_suite(a.build_dir, a.results, a.profile,
                           [x for x in a.only.split(",") if x] or None, a.extra)
    print(out.message)
    return out.exit_code


def cmd_report(a) -> int:
    from . import report
    try:
        written = report.write_report(a.paths or [a.results], a.out)
    except LoadError as exc:
        print(f"triaudit report: {exc}", file=sys.stderr)
        return 2
    except report.ReportError as exc:
        print(f"triaudit report: {exc}", file=sys.stderr)
        return 2
    for p in written:
        print(f"wrote {p}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="triaudit", description="GPU benchmark suite: run it, report on its results.")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run the built executables into results/<card>/<timestamp>-<host>/")
    r.add_argument("--build-dir", type=Path, default=Path("build/gpu"))
    r.add_argument("--results", type=Path, default=Path("results"))
    r.add_argument("--profile", default="quick", choices=sorted(runner.PROFILES))
    r.add_argument("--only", default="", help="comma-separated executables (stream, gemm, ...)")
    r.add_argument("extra", nargs="*", help="extra arguments for every executable (after --)")
    r.set_defaults(func=cmd_run)

    rep = sub.add_parser("report", help="tables (Markdown, CSV) and plots from result files or folders")
    rep.add_argument("paths", nargs="*", type=Path, help="result files or folders (default: --results)")
    rep.add_argument("--results", type=Path, default=Path("results"))
    rep.add_argument("--out", type=Path, default=Path("report"))
    rep.set_defaults(func=cmd_report)

    from . import plan_cli, doctor
    plan_cli.add_parser(sub)
    doctor.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    return a.func(a)


if __name__ == "__main__":
    sys.exit(main())
