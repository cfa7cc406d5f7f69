"""`triaudit gate RUN...`: a verdict per GPU and check against the floors of its SKU
(judge/gate.py); JUnit, Prometheus textfile, Slurm drain. Exit 0 every check passed (WARNs
allowed), 1 a check failed, 2 bad input, 3 something could not be tested and nothing failed."""

from __future__ import annotations

from pathlib import Path

from triaudit.commands.console import say, warn
from triaudit.core.errors import TriauditError
from triaudit.core.io.rows import APPEND, FILE, INPUT, OUTPUT_FILE, PathOption, Row

IO = Row(
    command="gate",
    paths=(
        PathOption("runs", "runs", INPUT),
        PathOption("floors", "--floors", INPUT, FILE, nonempty=True),
        PathOption("junit", "--junit", OUTPUT_FILE),
        PathOption("prom", "--prom", OUTPUT_FILE),
        PathOption("markdown", "--markdown", APPEND),
    ),
    writes="stdout; `--junit`, `--prom` replaced whole; `--markdown` appended to",
    refuses="an input, or a file inside one; a `--junit`/`--prom` file gate did not write; a FIFO or an empty "
    "file as `--floors`",
    codes=(0, 1, 2, 3, 130),
)


def add_parser(sub) -> None:
    g = sub.add_parser(
        "gate",
        help="is each GPU fit for work? PASS/WARN/FAIL/NOT TESTED per GPU and check against its SKU's floors "
        "(exit 0 passed, 1 a check failed, 2 bad input, 3 something not tested)",
    )
    g.add_argument("runs", type=Path, nargs="+", help="run folders or result files (a host's newest run is judged)")
    g.add_argument(
        "--floors",
        type=Path,
        action="append",
        default=[],
        help="a floors file (TOML; `triaudit floors derive` writes one); its entries are tried before the "
        "provisional ones shipped with triaudit; may be given more than once",
    )
    g.add_argument(
        "--host",
        default="",
        help="judge only this host's runs (its short or full name; e.g. \"$(hostname)\" in a node's health check)",
    )
    g.add_argument("--junit", type=Path, help="also write the verdicts as JUnit XML (one testsuite per node)")
    g.add_argument(
        "--prom",
        type=Path,
        help="also write them for node_exporter's textfile collector (e.g. /var/lib/node_exporter/triaudit.prom)",
    )
    g.add_argument(
        "--markdown",
        type=Path,
        help="also append the summary to this file (made if missing; e.g. $GITHUB_STEP_SUMMARY)",
    )
    g.add_argument(
        "--slurm-drain",
        action="store_true",
        help="drain a failing node with the reason (scontrol), resume a passing one that triaudit drained",
    )
    g.add_argument(
        "--slurm-node",
        default=None,
        help="the node's Slurm name when it differs from the host name the run recorded (one host only)",
    )
    g.set_defaults(func=run)


def _check_output(path: Path | None, flag: str, ours) -> None:
    """An output may replace only a file this command wrote before, never a file of someone else's
    (that it is a file, not an input nor inside one, in a folder that exists: core/io/checks.py)."""
    if path is None:
        return
    if path.exists():
        try:
            head = path.read_text(encoding="utf-8", errors="replace")[:4096]
        except OSError as exc:
            raise TriauditError(f"{flag} {path}: cannot be read: {exc.strerror or exc}") from None
        if not ours(head):
            raise TriauditError(f"{flag} {path} exists and is not a file triaudit gate wrote: refusing to replace it")


def run(a) -> int:
    from triaudit.core.io.outputs import append, replace_file
    from triaudit.judge import gate as G
    from triaudit.judge.gate_junit import junit_xml
    from triaudit.judge.gate_junit import written_by_gate as junit_ours
    from triaudit.judge.gate_prom import prom_text
    from triaudit.judge.gate_prom import written_by_gate as prom_ours

    _check_output(a.junit, "--junit", junit_ours)
    _check_output(a.prom, "--prom", prom_ours)
    result = G.gate(a.runs, a.floors, a.host)
    if a.slurm_node and len(result.nodes) > 1:
        raise TriauditError(f"--slurm-node names one node; these results hold {len(result.nodes)} hosts")
    code = G.exit_code(result)
    md = G.summary_markdown(result)
    codes = {n.host: {"FAIL": 1, "NOT TESTED": 3}.get(result.node_status(n.host), 0) for n in result.nodes}
    if a.host and not result.nodes:
        codes = {a.host: code}  # the host asked for has no run: its series says so (3), not nothing
    if a.junit:  # an OSError (permission, space) is exit 2 naming the file (commands/__init__.py)
        replace_file(a.junit, junit_xml(result.verdicts, {n.host: n.run.name for n in result.nodes}))
    if a.prom:
        replace_file(a.prom, prom_text(result.verdicts, codes))
    if a.markdown:
        append(a.markdown, md + "\n")
    say(md)
    if a.slurm_drain:
        from triaudit.fleet.drain import apply

        names = {result.nodes[0].host: a.slurm_node} if a.slurm_node and result.nodes else None
        for line in apply(result, names):
            warn(f"triaudit gate: slurm: {line}")
    return code
