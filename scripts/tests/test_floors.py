"""The floors `gate` holds GPUs against: the provisional ones shipped per SKU say where every figure
came from, and that provenance is checked here against the datasheets (core/specs.py), the
published measurements (report/published.py, docs/cards.md) and the real nccl-tests output in
tests/data/real; a floors file that lacks provenance or is malformed is refused naming the key."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from triaudit.core.errors import EXIT_USAGE
from triaudit.core.specs import card_by_key, pcie_gbps
from triaudit.judge.floors import FloorsError, FloorSet, choose_sku, load_floors, shipped_files
from triaudit.report.published import GENERIC, PUBLISHED
from triaudit.runner.profiles import PROFILES

SHIPPED_SKUS = {"a100-sxm-80", "a100-sxm-40", "h100-sxm", "h200", "l40s", "rtx-4090"}
REAL = REPO / "scripts" / "tests" / "data" / "real"


def _published(card: str, figure: str):
    for p in PUBLISHED.get(card, []) + GENERIC:
        if p.figure == figure:
            return p
    raise AssertionError(f"no published figure {figure} for {card}")


def test_one_provisional_file_per_sku_each_loads():
    files = {p.stem for p in shipped_files()}
    assert files == SHIPPED_SKUS
    fs = FloorSet.load()
    assert len(fs.shipped) == 6 and all(s.provisional for s in fs.shipped)
    assert all("PROVISIONAL" in p.read_text() for p in shipped_files())


@pytest.mark.parametrize("path", shipped_files(), ids=lambda p: p.stem)
def test_every_shipped_floor_follows_from_its_stated_provenance(path):
    [sku] = load_floors(path)
    spec = card_by_key(path.stem)
    assert sku.match["gpu_name"] == spec.pattern  # the datasheet's own pattern
    assert sku.floors
    for f in sku.floors.values():
        p = f.provenance
        if p["kind"] == "published" and "published_figure" in p:
            pub = _published(p.get("card", ""), p["published_figure"])
            time_like = f.check == "launch"  # a ceiling: the top of a published range
            scale = 1e-6 if time_like else 1e12 if f.check.startswith("gemm") else 1e9  # µs, TFLOP/s, GB/s
            assert p["figure"] == pytest.approx((pub.high if time_like else pub.low) * scale), f.key
            assert p["source"] == pub.source and p["statistic"] == pub.statistic, f.key
            expected = p["figure"] * p.get("counted", 1.0)
        elif p["kind"] == "published":  # the allreduce floor: nccl-tests' own output, in the repository
            assert p["source_url"].startswith("https://github.com/microsoft/superbenchmark/")
            assert p["source_url"] in f.describe()
            row = next(
                line.split()
                for line in (REAL / "nccl_tests_8xa100_sxm4_40gb_superbench_fixture.txt").read_text().splitlines()
                if line.split()[:1] == ["2147483648"]
            )
            assert float(row[6]) * 1e9 == pytest.approx(p["figure"])  # out-of-place busbw, GB/s
            assert f.gpus == 8 and f.case.endswith("/bytes:2147483648")
            expected = p["figure"]
        else:
            assert p["kind"] == "datasheet-fraction", f.key
            s = card_by_key(p["card"])
            field = p["datasheet_field"]
            if field == "pcie":
                datasheet = pcie_gbps(s.pcie_gen, s.pcie_width) * 1e9
            elif field == "mem_bw_gbps":
                datasheet = s.mem_bw_gbps * 1e9
            else:
                datasheet = s.tflops[field] * 1e12
            assert p["figure"] == pytest.approx(datasheet), f.key
            assert p["expected"] == pytest.approx(p["figure"] * p["fraction"], rel=1e-5)
            # The fraction is a published measurement's, as its basis says: recompute it.
            shown = [float(x) for x in re.findall(r"(\d+(?:\.\d+)?) of (\d+(?:\.\d+)?)", p["basis"])[0]]
            assert p["fraction"] == pytest.approx(shown[0] / shown[1], abs=5e-4), f.key
            expected = p["expected"]
        if f.check == "launch":
            assert f.fail == pytest.approx(expected / 0.90, rel=1e-5) and f.warn == pytest.approx(
                expected / 0.95, rel=1e-5
            )
        else:
            assert f.fail == pytest.approx(expected * 0.90, rel=1e-5), f.key
            assert f.warn == pytest.approx(expected * 0.95, rel=1e-5), f.key
        assert "provisional" in p["rule"]
        assert f.describe()


@pytest.mark.parametrize("path", shipped_files(), ids=lambda p: p.stem)
def test_every_shipped_floor_names_a_case_the_full_profile_runs(path):
    [sku] = load_floors(path)
    filters = {
        exe: next(a.split("=", 1)[1] for a in args if a.startswith("--benchmark_filter="))
        for exe, args in PROFILES["full"].items()
    }
    for f in sku.floors.values():
        exe = {"hbm": "stream", "launch": "launch", "allreduce": "allreduce"}.get(f.check)
        exe = exe or ("gemm" if f.check.startswith("gemm") else "memcpy")
        name = f.case + "/manual_time"
        assert re.search(filters[f"triaudit_{exe}"], name), (f.key, f.case)


def test_every_shipped_case_is_in_the_built_catalogue():
    build = Path(os.environ.get("TRIAUDIT_BUILD_DIR", REPO / "build" / "ci")) / "benchmarks"
    if not (build / "stream" / "triaudit_stream").exists():
        pytest.skip(f"{build} has no built executables (scripts/test.sh builds them first)")
    listed = set()
    for exe in ("stream", "gemm", "memcpy", "launch", "allreduce"):
        r = subprocess.run(
            [str(build / exe / f"triaudit_{exe}"), "--benchmark_list_tests"], capture_output=True, text=True, timeout=60
        )
        listed |= {n.removesuffix("/manual_time") for n in r.stdout.split()}
    for path in shipped_files():
        for f in load_floors(path)[0].floors.values():
            assert f.case in listed, (path.stem, f.case)


@pytest.mark.parametrize(
    "name, memory, links, sku",
    [
        ("NVIDIA H100 80GB HBM3", 85.05, 18, "H100 SXM5 80GB"),
        ("NVIDIA A100-SXM4-40GB", 42.5, 12, "A100 SXM4 40GB"),
        ("A100-SXM4-40GB", 42.5, 12, "A100 SXM4 40GB"),  # an old driver's spelling
        ("NVIDIA A100-SXM4-80GB", 85.2, 12, "A100 SXM4 80GB"),
        ("NVIDIA H200", 150.1, 18, "H200 SXM 141GB"),
        ("NVIDIA L40S", 48.3, 0, "L40S"),
        ("NVIDIA GeForce RTX 4090", 25.4, 0, "RTX 4090"),
    ],
)
def test_a_gpu_gets_the_entry_of_its_model(name, memory, links, sku):
    got, mismatches = choose_sku({"gpu_name": name, "memory_gb": memory, "nvlink_links": links}, FloorSet.load())
    assert got is not None and got.name == sku and mismatches == {}


def test_an_unknown_card_and_a_wrong_memory_size_get_no_entry():
    fs = FloorSet.load()
    assert choose_sku({"gpu_name": "NVIDIA B300", "memory_gb": 288.0}, fs) == (None, {})
    assert choose_sku({"gpu_name": "NVIDIA H100 80GB HBM3", "memory_gb": 40.0}, fs)[0] is None


def test_a_topology_that_differs_picks_the_model_and_names_the_difference():
    sku, mismatches = choose_sku(
        {"gpu_name": "NVIDIA H100 80GB HBM3", "memory_gb": 85.05, "nvlink_links": 16, "pcie_width": 8}, FloorSet.load()
    )
    assert sku.name == "H100 SXM5 80GB"
    assert mismatches == {"nvlink_links": (18, 16), "pcie_width": (16, 8)}


GOOD_FLOOR = """
schema = 1
[[sku]]
name = "synthetic card"
[sku.match]
gpu_name = "Synthetic GPU"
[sku.floors.hbm]
case = "stream/triad/fp32/cache:cold/bytes:1073741824"
fail = 1.0e12
warn = 1.1e12
[sku.floors.hbm.provenance]
kind = "policy"
basis = "a test's own floor (synthetic)"
"""


@pytest.mark.parametrize(
    "change, said",
    [
        (
            lambda t: t.replace(
                '[sku.floors.hbm.provenance]\nkind = "policy"\nbasis = "a test\'s own floor (synthetic)"\n', ""
            ),
            "provenance",
        ),
        (lambda t: t.replace('basis = "a test\'s own floor (synthetic)"', ""), "provenance (policy) lacks basis"),
        (lambda t: t.replace('kind = "policy"', 'kind = "hearsay"'), "kind is 'hearsay'"),
        (lambda t: t.replace("floors.hbm", "floors.hbw"), "unknown check 'hbw'"),
        (lambda t: t.replace("warn = 1.1e12", "warn = 0.9e12"), "warn 9e+11 must be at or above fail 1e+12"),
        (lambda t: t.replace("floors.hbm", 'floors."p2p"'), "keyed by link type"),
        (lambda t: t.replace("schema = 1", ""), "schema is None"),
        (lambda t: t.replace("fail = 1.0e12", 'fail = "fast"'), "fail is 'fast', not a positive number"),
        (lambda t: t.replace('gpu_name = "Synthetic GPU"', 'gpu_name = "Synthetic ("'), "not a regular expression"),
        (lambda t: t + "[[[", "not a TOML floors file"),
    ],
)
def test_a_bad_floors_file_is_refused_naming_the_key(tmp_path, change, said):
    path = tmp_path / "synthetic-floors.toml"
    path.write_text(change(GOOD_FLOOR))
    with pytest.raises(FloorsError) as exc:
        load_floors(path)
    assert said in str(exc.value) and str(path) in str(exc.value)
    assert exc.value.exit_code == EXIT_USAGE


def test_the_floors_example_of_docs_gate_md_loads_and_matches_an_h100(tmp_path):
    text = (REPO / "docs" / "gate.md").read_text()
    [example] = [b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if b.startswith("schema = 1")]
    path = tmp_path / "docs-example.toml"
    path.write_text(example)
    [sku] = load_floors(path)
    assert sku.name == "H100 SXM5 80GB, our pod" and not sku.provisional
    assert sorted(sku.floors) == ["hbm", "p2p:NV18"]
    assert sku.floors["hbm"].describe() == (
        "published: STREAM-type triad, public (89 % of peak), 2,970 GB/s (not stated by the source); no URL recorded"
    )
    band = sku.health["health_pcie_replays"]
    assert (band.warn, band.fail) == (1.0, 100.0)
    facts = {"gpu_name": "NVIDIA H100 80GB HBM3", "memory_gb": 79.2, "nvlink_links": 18, "pcie_generation": 5}
    facts |= {"pcie_width": 16, "power_limit_w": 700.0}
    chosen, mismatches = choose_sku(facts, FloorSet([sku], []))
    assert chosen is sku and mismatches == {}


def test_a_good_floors_file_loads(tmp_path):
    path = tmp_path / "synthetic-floors.toml"
    path.write_text(GOOD_FLOOR)
    [sku] = load_floors(path)
    assert sku.floors["hbm"].fail == 1.0e12 and sku.floors["hbm"].describe().startswith("policy: a test's own floor")


def test_an_installed_triaudit_finds_the_shipped_floors(tmp_path):
    """What setuptools puts in a wheel (build_py, as `pip install` runs it) holds the TOML files,
    and a triaudit imported from there loads them."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(REPO / "scripts" / "pyproject.toml", src)
    shutil.copytree(REPO / "scripts" / "triaudit", src / "triaudit", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "built"
    r = subprocess.run(
        [sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py", "-d", str(out)],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (out / "triaudit" / "judge" / "shipped_floors").glob("*.toml")) == sorted(
        f"{k}.toml" for k in SHIPPED_SKUS
    )
    code = "from triaudit.judge.floors import FloorSet, SHIPPED; print(SHIPPED); print(len(FloorSet.load().shipped))"
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=out,  # `python -c` puts the working folder first: not this checkout
        env=dict(os.environ, PYTHONPATH=str(out)),
    )
    assert r.returncode == 0, r.stderr
    where, count = r.stdout.split()
    assert where.startswith(str(out)) and count == "6"
