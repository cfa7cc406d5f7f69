"""Every NCCL collective of the registry (corners/<name>.py, one call of collective_corner) is whole end
to end without a line of its own anywhere else: its executable is built and lists its cases, every
profile's arguments are accepted and select cases, its busbw factor is the one its C++ description
states (nccl-tests' getBw), nccl-tests' tables of it land under it, and a run of it (synthetic figures)
reaches the summary, the gate, the report and `figures`."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import synthetic
from conftest import REPO

from triaudit import commands as cli
from triaudit import corners as registry
from triaudit.judge.gate_checks import CHECKS
from triaudit.peers.nccl_common import corner_of
from triaudit.report.sections import all_sections
from triaudit.report.sections.summary.headline import headlines
from triaudit.results.table import load_results
from triaudit.runner import profiles
from triaudit.runner.timemodel import list_cases

COLLECTIVES = registry.collectives()


def test_every_collective_cmake_builds_has_its_corner():
    cmake = (REPO / "benchmarks" / "collectives" / "CMakeLists.txt").read_text()
    built = set(re.findall(r"^triaudit_collective\(([a-z0-9_]+)\)", cmake, re.M))
    assert built >= {"allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast"}
    assert {c.name for c in COLLECTIVES} == built


@pytest.fixture(scope="module")
def build_dir(stream_exe):
    return stream_exe.parents[2]


@pytest.mark.parametrize("corner", COLLECTIVES, ids=lambda c: c.name)
def test_built_listed_and_every_profile_selects_cases(corner, build_dir):
    exe = build_dir / "benchmarks" / corner.name / corner.executable
    assert exe.is_file(), exe
    for step in corner.steps:
        for profile in registry.base.PROFILE_NAMES:
            names = list_cases(exe, profiles.profile_args(profile, step.name))  # refused arguments raise
            assert names and all(n.startswith(corner.name + "/") for n in names), (profile, names[:3])
        quick = [n.removesuffix("/manual_time") for n in list_cases(exe, profiles.profile_args("quick", step.name))]
        assert any(re.fullmatch(r".*/bytes:\d+", n) for n in quick)


def _formula(corner) -> str:
    src = (REPO / "benchmarks" / "collectives" / f"{corner.name}.cpp").read_text()
    return re.search(r'bus_factor_formula = "([^"]+)"', src).group(1)


@pytest.mark.parametrize("corner", COLLECTIVES, ids=lambda c: c.name)
def test_the_bus_factor_is_the_cpp_descriptions(corner):
    formula = _formula(corner)
    python_expr = re.sub(r"(\d)\(", r"\1*(", formula)  # "2(n-1)/n" -> "2*(n-1)/n"
    for n in (2, 3, 8):
        assert corner.bus_factor(n) == pytest.approx(eval(python_expr, {}, {"n": n})), (formula, n)


@pytest.mark.parametrize("corner", COLLECTIVES, ids=lambda c: c.name)
def test_nccl_tests_names_land_under_the_corner(corner):
    names = next(p.names for p in corner.peers if p.tool == "nccl-tests")
    for name in names:
        assert corner_of(name) == corner.name
        assert corner_of(name.replace("_", "")) == corner.name


def _synthetic_run(tmp_path, corner, ranks=2):
    """A node-level result of the collective over `ranks` GPUs: made-up busbw, not a measurement."""
    catalogue = subprocess.run(
        [str(REPO / "build" / "ci" / "benchmarks" / corner.name / corner.executable), "--benchmark_list_tests"],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.split()
    cases = [n.removesuffix("/manual_time") for n in catalogue if "/out_of_place/fp32/" in n][-3:]
    entries = []
    for r in range(3):
        for i, case in enumerate(cases):
            busbw = 100e9 * (i + 1)
            entries.append(synthetic._entry(case, 1e-3, r, 3, busbw=busbw, algbw=busbw / 2, ranks=float(ranks)))
    ctx = synthetic.synthetic_context("NVIDIA H200") | {
        "executable": corner.executable,
        f"{corner.name}_ranks": str(ranks),
        f"{corner.name}_gpus_per_node": str(ranks),
    }
    run = tmp_path / "results" / "nvidia-h200" / "20260101T000000Z-synthetic"
    synthetic.write(run / f"{corner.executable}_synthetic.json", {"context": ctx, "benchmarks": entries})
    (run / "manifest.json").write_text(json.dumps({"complete": True}))
    return run, cases[-1]


@pytest.mark.parametrize("corner", COLLECTIVES, ids=lambda c: c.name)
def test_a_run_reaches_the_summary_the_gate_the_report_and_figures(corner, tmp_path, capsys):
    run, largest = _synthetic_run(tmp_path, corner)
    rs = load_results([run])
    h = headlines(rs)
    value = h.value(corner.name, "NVIDIA H200")
    assert value is not None and value.case == largest and value.gpus == 2
    assert corner.name in CHECKS and CHECKS[corner.name].scope == "node"
    secs = {s.key: s for s in all_sections(rs)}
    assert secs[corner.name].tables and corner.collective in secs[corner.name].title
    assert cli.main(["figures", str(run), "--json"]) == 0
    figs = [f for f in json.loads(capsys.readouterr().out)["figures"] if f["key"] == corner.name]
    assert len(figs) == 1 and figs[0]["case"] == largest and figs[0]["value"] == value.median
