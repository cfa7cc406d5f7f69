"""The `triaudit` command: run the suite, report on runs.

Exit codes: 0 ok; 1 something failed; 2 bad usage or unreadable input; 77 no CUDA device.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from triaudit.core import argtypes
from triaudit.core.builddir import git_commit
from triaudit.results.gbench import LoadError
from triaudit.runner import profiles
from triaudit.runner import suite as runner


def cmd_run(a) -> int:
    from triaudit.core.builddir import find_build_dir

    bad = (
        profiles.check_only([x for x in a.only.split(",") if x])
        or runner.check_seconds("--budget-s", a.budget_s)
        or runner.check_seconds("--timeout-s", a.timeout_s)
    )
    if bad:
        print(f"triaudit run: {bad}", file=sys.stderr)
        return 2
    if a.dry_run:
        if a.gpu_count < 1:
            print(f"triaudit run: --gpu-count {a.gpu_count}: at least 1", file=sys.stderr)
            return 2
        out = runner.dry_run(
            a.build_dir, a.profile, a.card, [x for x in a.only.split(",") if x] or None, a.extra, a.gpu_count
        )
        print(
            out.message if out.exit_code == 0 else f"triaudit run: {out.message}",
            file=sys.stdout if out.exit_code == 0 else sys.stderr,
        )
        return out.exit_code
    a.build_dir, found = find_build_dir(a.build_dir)
    if a.build_dir is None:
        print(f"triaudit run: {found}", file=sys.stderr)
        return 2
    if found:
        print(found)
    if a.all_gpus or a.gpus:
        from triaudit.fleet import node_run as fleet_run  # whole-node mode (standard library only, like runner)

        if not a.all_gpus:
            print("triaudit run: --gpus picks GPUs for --all-gpus; add --all-gpus", file=sys.stderr)
            return 2
        return fleet_run.run_from_args(a)
    out = runner.run_suite(
        a.build_dir,
        a.results,
        a.profile,
        [x for x in a.only.split(",") if x] or None,
        a.extra,
        timeout_s=a.timeout_s,
        budget_s=a.budget_s,
        bind_numa=a.bind_numa,
    )
    print(out.message)
    return out.exit_code


def cmd_report(a) -> int:
    from triaudit.results import reading as R

    R.keep_freed_memory()
    with R.collector_paused():  # the reading processes inherit it
        prices, prices_error = None, ()
        if a.prices is not None:  # read before anything is written: a bad file writes no report
            from triaudit.report.sections.cost import PricesError, load_prices

            prices_error = PricesError
            try:
                prices = load_prices(a.prices)
            except PricesError as exc:  # the prices file, named, and what is wrong in it
                print(f"triaudit report: --prices {exc}", file=sys.stderr)
                return 2
        try:
            # The files are read from now on, while the rest of the report (pandas) is loaded.
            files = R.Reading.start(a.paths or [a.results])
        except LoadError as exc:
            print(f"triaudit report: {exc}", file=sys.stderr)
            return 2
        try:
            from triaudit.report import page as report

            try:
                written = report.write_report(
                    a.paths or [a.results],
                    a.out,
                    a.include_incomplete,
                    all_runs=a.all_runs,
                    prices=prices,
                    notes=tuple(a.note or ()),
                    reading=files,
                )
            except prices_error as exc:
                print(f"triaudit report: --prices {exc}", file=sys.stderr)
                return 2
            except (LoadError, report.ReportError) as exc:
                print(f"triaudit report: {exc}", file=sys.stderr)
                return 2
        finally:
            files.close()
        for p in written:
            say(f"wrote {p}")
        if _ENTRY:  # before the collector is back: its first pass would walk every figure's artists
            _leave(0)
    return 0


def cmd_compare(a) -> int:
    from triaudit.judge import compare as C
    from triaudit.results.reading import scan_paths

    try:
        if not 0 <= a.max_untested_change:
            raise C.CompareError(f"--max-untested-change {a.max_untested_change}: must be 0 or more (0.10 = 10 %)")
        result = C.compare(
            a.baseline,
            a.new,
            a.alpha,
            a.min_effect,
            a.min_repetitions,
            a.allow_different,
            a.allow_incomplete,
            a.max_untested_change,
            a.allow_algo_change,
        )
    except (C.CompareError, LoadError) as exc:
        print(f"triaudit compare: {exc}", file=sys.stderr)
        return 2
    md = C.summary_markdown(result, str(a.baseline), str(a.new), result.attrs.get("problems", []))
    if a.markdown:
        inputs = {p.resolve() for p in (a.baseline, a.new)} | {f.resolve() for f in scan_paths([a.baseline, a.new])[0]}
        if a.markdown.resolve() in inputs:
            print(f"triaudit compare: refusing to write over an input: {a.markdown}", file=sys.stderr)
            return 2
        try:
            a.markdown.write_text(md + "\n", encoding="utf-8")
        except OSError as exc:
            print(
                f"triaudit compare: --markdown {a.markdown}: cannot be written: {exc.strerror or exc}", file=sys.stderr
            )
            return 2
    code = C.exit_code(result)
    say(md)
    return code


def cmd_history(a) -> int:
    from triaudit.judge import compare as C

    try:
        written, table = C.history(a.runs, a.out, a.cases, a.alpha, a.min_effect, a.min_repetitions)
    except C.NothingToJudge as exc:
        print(f"triaudit history: {exc}", file=sys.stderr)
        return C.EXIT_NOTHING_JUDGED
    except (C.CompareError, LoadError) as exc:
        print(f"triaudit history: {exc}", file=sys.stderr)
        return 2
    slower = table[table["verdict"] == "slower"]
    for p in written:
        say(f"wrote {p}")
    for _, r in slower.iterrows():
        say(f"regression: {r['case']} in {r['run']}")
    return 1 if not slower.empty else 0


def cmd_export(a) -> int:
    from triaudit.results import export as E

    try:
        written, said = E.export(a.paths, a.format, a.out)
    except (E.ExportError, LoadError) as exc:
        print(f"triaudit export: {exc}", file=sys.stderr)
        return 2
    for line in said:
        say(line)
    for p in written:
        say(f"wrote {p}")
    return 0


def cmd_import(a) -> int:
    from triaudit.peers.importer import run_import

    command = "triaudit import " + " ".join([a.tool, *map(str, a.files)] + (["--card", a.card] if a.card else []))
    return run_import(a.tool, a.files, a.results, a.card, a.buffer_size, command)


def say(text: str) -> None:
    """print() for results: a reader that went away (`| head`) ends the output, not the command
    with a traceback; the exit code still says what was found."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        _silence_stdout()


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _stat_args(p) -> None:
    p.add_argument(
        "--alpha", type=argtypes.probability, default=0.05, help="significance level of the Mann-Whitney U test"
    )
    p.add_argument(
        "--min-effect",
        type=argtypes.non_negative,
        default=0.02,
        help="smallest relative change that counts (0.02 = 2%%)",
    )
    p.add_argument("--min-repetitions", type=argtypes.count, default=4, help="fewer repetitions than this: 'uncertain'")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="triaudit", description="GPU benchmark suite: run it, report on its results.")
    from triaudit import __version__
    from triaudit.results.gbench import SCHEMA_VERSION

    p.add_argument(
        "--version",
        action="version",
        version=f"triaudit {__version__} (commit {git_commit()}, JSON schema {SCHEMA_VERSION})",
    )
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run the built executables into results/<card>/<timestamp>-<host>/")
    r.add_argument(
        "--build-dir",
        type=Path,
        default=None,
        help="the build folder (default: build/gpu, else build/ci, here or in this checkout)",
    )
    r.add_argument(
        "--results", type=Path, default=Path("results"), help="results folder (runs go to <results>/<card>/)"
    )
    r.add_argument(
        "--profile",
        default="quick",
        choices=sorted(profiles.PROFILES),
        help="quick: the nightly minute; full: the ~5-minute set; exhaustive: every case (all 5 repetitions)",
    )
    r.add_argument("--only", default="", help="comma-separated executables (stream, gemm, ...)")
    r.add_argument(
        "--timeout-s", type=float, default=None, help="kill an executable running longer than this (exit 124)"
    )
    r.add_argument(
        "--budget-s",
        type=float,
        default=None,
        help="seconds for the whole run: each executable gets what is left; none starts with under 20 s",
    )
    r.add_argument(
        "--all-gpus", action="store_true", help="every GPU of this host at once, one process per GPU (fleet_run.py)"
    )
    r.add_argument("--gpus", default="", help="with --all-gpus: GPU indices as nvidia-smi numbers them, e.g. 0,3")
    r.add_argument(
        "--bind-numa",
        default="on",
        choices=["on", "off"],
        help="bind each executable's CPUs and memory to its GPU's NUMA node (nvbandwidth does; default on)",
    )
    r.add_argument(
        "--dry-run",
        action="store_true",
        help="print the estimated wall time per executable for the profile on a card; run nothing",
    )
    r.add_argument("--card", default=None, help="with --dry-run: the card's key in specs.py (default: the local GPU)")
    r.add_argument("--gpu-count", type=int, default=1, help="with --dry-run: GPUs on the machine (p2p, allreduce)")
    r.add_argument("extra", nargs="*", help="extra arguments for every executable (after --)")
    r.set_defaults(func=cmd_run)

    rep = sub.add_parser("report", help="tables (Markdown, CSV) and plots from result files or folders")
    rep.add_argument("paths", nargs="*", type=Path, help="result files or folders (default: --results)")
    rep.add_argument(
        "--results", type=Path, default=Path("results"), help="results folder read when no paths are given"
    )
    rep.add_argument(
        "--out",
        type=Path,
        default=Path("report"),
        help="folder for report.md, report.html, the CSV tables and PNG plots (made if missing)",
    )
    rep.add_argument("--include-incomplete", action="store_true", help="include interrupted runs (left out by default)")
    rep.add_argument(
        "--note",
        action="append",
        metavar="TEXT",
        help="a line for the top of the report (repeatable), e.g. why this machine measured nothing",
    )
    rep.add_argument(
        "--all-runs",
        action="store_true",
        help="every run its own column (default: each card's newest complete run, named under each table)",
    )
    rep.add_argument(
        "--prices",
        type=Path,
        default=None,
        metavar="PRICES.toml",
        help="your prices per card (rent or buy; format: scripts/prices.template.toml): adds cost tables",
    )
    rep.set_defaults(func=cmd_report)

    c = sub.add_parser(
        "compare",
        help="verdict per case between two runs: exit 0 no regression, 1 regression, "
        "2 bad input, 3 nothing could be judged",
    )
    c.add_argument("baseline", type=Path, help="the baseline run (a run folder or result files)")
    c.add_argument("new", type=Path, help="the run to judge against it")
    _stat_args(c)
    c.add_argument(
        "--max-untested-change",
        type=float,
        default=0.10,
        help="a slowdown larger than this that too few repetitions could not test fails the gate (0.10 = 10%%)",
    )
    c.add_argument(
        "--allow-algo-change",
        action="store_true",
        help="judge GEMM cases whose cuBLASLt algorithm changed like the others (still listed)",
    )
    c.add_argument("--allow-different", action="store_true", help="compare different GPU models, drivers or clocks")
    c.add_argument("--allow-incomplete", action="store_true", help="compare interrupted runs")
    c.add_argument("--markdown", type=Path, help="also write the summary here (e.g. $GITHUB_STEP_SUMMARY)")
    c.set_defaults(func=cmd_compare)

    h = sub.add_parser("history", help="trend plots of a series of runs of one machine, regressions marked")
    h.add_argument("runs", type=Path, nargs="+", help="run folders of one card, ordered by name (timestamp)")
    h.add_argument("--out", type=Path, default=Path("history"), help="folder for history.png and history.csv")
    h.add_argument("--cases", default="", help="regular expression selecting cases")
    _stat_args(h)
    h.set_defaults(func=cmd_history)

    ex = sub.add_parser(
        "export",
        help="a run's figures for dashboards: Bencher Metric Format or "
        "github-action-benchmark (customBiggerIsBetter / customSmallerIsBetter)",
    )
    ex.add_argument("paths", nargs="+", type=Path, help="a run folder (or result files) of one card")
    ex.add_argument(
        "--format", required=True, choices=["bmf", "github-action-benchmark"], help="the dashboard's format"
    )
    ex.add_argument(
        "--out",
        type=Path,
        default=Path("export"),
        help="folder for bmf.json, or bigger_is_better.json and smaller_is_better.json",
    )
    ex.set_defaults(func=cmd_export)

    im = sub.add_parser(
        "import",
        help="read peer tools' outputs (nccl-tests, nvbandwidth, babelstream, mamf-finder) "
        "into a new run folder under --results/<card>/",
    )
    im.add_argument("tool", help="nccl-tests, nvbandwidth, babelstream or mamf-finder")
    im.add_argument("files", type=Path, nargs="+", help="the tool's output files (text or JSON/CSV as it wrote them)")
    im.add_argument("--card", help="the GPU name as CUDA reports it, when the output does not say (or to override)")
    im.add_argument("--results", type=Path, required=True, help="results folder (the run goes into <results>/<card>/)")
    im.add_argument("--buffer-size", help="nvbandwidth's copy size (-b), which it does not print, e.g. 512MiB")
    im.set_defaults(func=cmd_import)

    from triaudit.commands import plan as plan_cli
    from triaudit.doctor import checks as doctor

    plan_cli.add_parser(sub)
    doctor.add_parser(sub)
    from triaudit.commands import outliers as outliers_cli
    from triaudit.fleet import slurm

    outliers_cli.add_parser(sub)
    slurm.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    try:
        return a.func(a)
    except BrokenPipeError:  # the reader of our output went away (| head): not an error of ours
        _silence_stdout()
        return 0


# Set by entry(): this process is the command line, not a caller of main() that goes on.
_ENTRY = False


def _leave(code: int) -> None:
    """Ends the process now, its output flushed: no teardown. Freeing a large report's objects one
    by one (and a last collection over its figures) took a third of a second, for nothing."""
    import os

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        pass  # the reader went away: nothing more to deliver
    os._exit(code)


def entry() -> None:
    """The command line (the `triaudit` command, `python -m triaudit`)."""
    global _ENTRY
    _ENTRY = True
    sys.exit(main())


if __name__ == "__main__":
    entry()
