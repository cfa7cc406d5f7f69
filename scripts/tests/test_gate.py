"""`triaudit gate` on synthetic whole-node runs (synthetic_gate.py: made-up numbers): a verdict per
GPU and check, never a silent PASS, the environment and health checks, the exit codes."""

from __future__ import annotations

import pytest
from synthetic_gate import A100_40, ALLREDUCE_HEALTHY, HEALTHY, L40S, P2P_HEALTHY, node_run, synthetic_floors

from triaudit import commands as cli
from triaudit.judge import gate as G
from triaudit.judge.gate_checks import FAIL, NOT_TESTED, PASS, WARN


def _gate(tmp_path, floors=True, **node):
    run = node_run(tmp_path / "runs", **node)
    return G.gate([run], [synthetic_floors(tmp_path)] if floors else [])


def _one(result, check, gpu="", link=""):
    [v] = [v for v in result.verdicts if v.check == check and v.gpu == gpu and v.link == link]
    return v


def test_a_healthy_node_passes_every_check(tmp_path):
    r = _gate(tmp_path)
    assert G.exit_code(r) == 0
    assert len(r.verdicts) == 8 * 14 + 2  # 7 figures + 6 environment checks + health per GPU; p2p, allreduce
    assert {v.status for v in r.verdicts} == {PASS}
    hbm = _one(r, "hbm", "3")
    assert hbm.measured == pytest.approx(3.05e12, rel=0.01) and hbm.fail == pytest.approx(3.05e12 * 0.9)
    assert hbm.uuid == "GPU-5e7e7e7e-0000-0003-0000-000000000000" and hbm.host == "synthetic-node-0"
    assert "Every one of 114 check(s) passed." in G.summary_markdown(r)


def test_the_shipped_floors_leave_untested_what_they_have_no_floor_for(tmp_path):
    r = _gate(tmp_path, floors=False)
    assert G.exit_code(r) == 3
    untested = sorted(v.check for v in r.verdicts if v.status == NOT_TESTED)
    assert untested == ["allreduce"] + ["d2d"] * 8 + ["p2p"]
    assert _one(r, "d2d", "0").message == "H100 SXM5 80GB (h100-sxm.toml, provisional) has no d2d floor"
    assert {v.status for v in r.verdicts if v.check in ("hbm", "gemm_bf16", "gemm_fp8", "h2d", "d2h", "launch")} == {
        PASS
    }
    p2p = [v for v in r.verdicts if v.check == "p2p"]
    assert len(p2p) == 1 and p2p[0].link == "NV18" and "no p2p:NV18 floor" in p2p[0].message
    assert "published: STREAM-type triad, public (89 % of peak), 2,970 GB/s" in _one(r, "hbm", "0").floor_source


@pytest.mark.parametrize("check", ["hbm", "gemm_bf16", "gemm_fp8", "h2d", "d2h", "launch"])
@pytest.mark.parametrize("below, status", [(0.12, FAIL), (0.07, WARN), (0.02, PASS)])
def test_a_gpu_below_the_shipped_floor_fails_or_warns(tmp_path, check, below, status):
    """Against the H100's provisional floors (expected figure E: FAIL under 0.90 E, WARN under 0.95 E)."""
    expected = {
        "hbm": 2970e9,
        "gemm_bf16": 794.5e12,
        "gemm_fp8": 1402.6e12,
        "h2d": 55.4e9,
        "d2h": 55.2e9,
        "launch": 4e-6,
    }
    target = expected[check] * (1 - below) if check != "launch" else expected[check] / (1 - below)
    factor = target / HEALTHY[check][2]
    factor = 1 / factor if check == "launch" else factor
    r = _gate(tmp_path, floors=False, scale={(5, check): factor}, noise=0.0)
    v = _one(r, check, "5")
    assert v.status == status, v.message
    assert v.measured == pytest.approx(target, rel=1e-9)
    assert G.exit_code(r) == (1 if status == FAIL else 3)
    others = [x for x in r.verdicts if x.check == check and x.gpu != "5"]
    assert {x.status for x in others} == {PASS}


def test_ten_percent_slow_on_any_check_fails(tmp_path):
    """The synthetic floors sit 10 % under the healthy figure: 11 % slow fails, on every check."""
    scale = {(i, c): 0.89 for i, c in enumerate(HEALTHY)}  # a time: 1 / 0.89 as long
    r = _gate(tmp_path, scale=scale, noise=0.0, p2p_scale={(1, 6): 0.89}, allreduce=ALLREDUCE_HEALTHY * 0.89)
    failed = sorted((v.check, v.gpu) for v in r.verdicts if v.status == FAIL)
    assert failed == sorted([(c, str(i)) for i, c in enumerate(HEALTHY)] + [("p2p", "1"), ("allreduce", "")])
    assert G.exit_code(r) == 1


def test_a_missing_a_skipped_and_an_errored_case_are_not_tested_never_passed(tmp_path):
    r = _gate(
        tmp_path,
        missing={(1, "hbm")},
        errors={
            (2, "gemm_bf16"): "skipped: needs 3 GiB of device memory",
            (3, "h2d"): "verification failed: 12 of 1024 words wrong",
        },
    )
    assert G.exit_code(r) == 3
    assert _one(r, "hbm", "1").status == NOT_TESTED
    assert _one(r, "hbm", "1").message == "stream/triad/fp32/cache:cold/bytes:1073741824 is not in the run"
    assert _one(r, "gemm_bf16", "2").status == NOT_TESTED
    assert "skipped: needs 3 GiB of device memory" in _one(r, "gemm_bf16", "2").message
    assert _one(r, "h2d", "3").status == NOT_TESTED
    assert "error: verification failed: 12 of 1024 words wrong" in _one(r, "h2d", "3").message
    assert sum(v.status == NOT_TESTED for v in r.verdicts) == 3


@pytest.mark.parametrize(
    "env, check, status, said",
    [
        ({"nvlink_active_links": "16"}, "nvlink", FAIL, "16 of 18 NVLinks up (synthetic H100)"),
        ({"pcie_width_current": "8"}, "pcie", FAIL, "x8 of x16: host copies get a share"),
        ({"pcie_width_current": "8", "pcie_width_max": "8"}, "pcie", FAIL, "x8 maximum, synthetic H100 expects x16"),
        ({"pcie_generation_current": "1"}, "pcie", PASS, "(Gen1 when an executable started: links train down at idle)"),
        ({"ecc": "off"}, "ecc", FAIL, "ECC off; synthetic H100 runs with it on"),
        ({"cuda_driver_version": "11.8"}, "driver", FAIL, "the driver is too old for this CUDA major version"),
        ({"cuda_driver_version": "12.2"}, "driver", WARN, "minor-version compatibility"),
        ({"power_limit_enforced_w": "500"}, "power", WARN, "enforced limit 500 W, below its default 700 W"),
        ({"nvlink_active_links": "unknown (NVML: not supported)"}, "nvlink", NOT_TESTED, "NVLink links not recorded"),
        ({"pcie_width_current": "unknown (NVML: not supported)"}, "pcie", NOT_TESTED, "PCIe link not recorded"),
        ({"power_limit_enforced_w": ""}, "power", NOT_TESTED, "enforced power limit not recorded"),
    ],
)
def test_environment_checks_read_the_run_context(tmp_path, env, check, status, said):
    r = _gate(tmp_path, env={4: env})
    v = _one(r, check, "4")
    assert v.status == status and said in v.message, v.message
    assert {x.status for x in r.verdicts if x.check == check and x.gpu != "4"} == {PASS}


@pytest.mark.parametrize(
    "counters, status, said",
    [
        ({"throttled": 1.0}, FAIL, "hardware or thermal slowdown or power brake in 7 of 7 case(s)"),
        ({"clock_low": 1.0}, WARN, "mean busy SM clock below 75 % of the rated boost in 7 of 7 case(s)"),
    ],
)
def test_a_throttled_gpu_fails_its_clocks_check(tmp_path, counters, status, said):
    r = _gate(tmp_path, counters={6: counters})
    v = _one(r, "clocks", "6")
    assert v.status == status and said in v.message


def test_health_uncorrected_ecc_and_a_health_error_fail_corrected_errors_warn(tmp_path):
    r = _gate(
        tmp_path,
        counters={
            1: {"health_ecc_uncorrected": 1.0},
            2: {"health_ecc_corrected": 3.0},
            3: {"health_remap_pending": 1.0},
            5: {"health_nvlink_links_down": 1.0},
        },
        errors={(4, "hbm"): "health: XID 79 (GPU has fallen off the bus) during the case"},
    )
    assert _one(r, "health", "1").status == FAIL and "uncorrected ECC errors: 7" in _one(r, "health", "1").message
    assert (
        _one(r, "health", "2").status == WARN
        and "corrected ECC errors: 21 (WARN from 1)" in _one(r, "health", "2").message
    )
    assert _one(r, "health", "3").status == FAIL and "a row remap pending" in _one(r, "health", "3").message
    assert _one(r, "health", "5").status == FAIL and "NVLink links that went down" in _one(r, "health", "5").message
    v4 = _one(r, "health", "4")
    assert v4.status == FAIL and "XID 79 (GPU has fallen off the bus)" in v4.message
    assert _one(r, "hbm", "4").status == NOT_TESTED  # its figure is not a measurement
    assert _one(r, "health", "0").status == PASS and _one(r, "health", "0").counts["health_ecc_uncorrected"] == 0
    assert G.exit_code(r) == 1


def test_no_health_counter_is_not_tested(tmp_path):
    run = node_run(tmp_path / "runs", gpus=1, with_health=False)
    r = G.gate([run], [synthetic_floors(tmp_path)])
    v = _one(r, "health", "0")
    assert v.status == NOT_TESTED and v.message == "no health counter in the run's cases"


def test_the_slowest_pair_of_a_link_type_is_judged_and_named(tmp_path):
    r = _gate(tmp_path, p2p_scale={(2, 5): 0.85, (6, 1): 0.97})
    v = _one(r, "p2p", "2", "NV18")
    assert v.status == FAIL and v.peer == "5"
    assert v.uuid.endswith("-0002-0000-000000000000") and v.peer_uuid.endswith("-0005-0000-000000000000")
    assert v.measured == pytest.approx(P2P_HEALTHY * 0.85, rel=0.01)
    assert "slowest of 56 pair(s) measured at 536870912 B" in v.message


def test_an_allreduce_floor_for_8_gpus_does_not_judge_4(tmp_path):
    r = _gate(tmp_path, gpus=4)
    v = _one(r, "allreduce")
    assert v.status == NOT_TESTED and "over 4 GPU(s); the floor is for 8" in v.message


def test_a_known_topology_is_expected_not_failed(tmp_path):
    """A PCIe-only box of the same model has its own entry: no NVLink and PCIe links between the GPUs."""
    floors = synthetic_floors(
        tmp_path, entries=[("synthetic H100 NVSwitch", 18, "NV18"), ("synthetic H100 PCIe-only box", 0, "SYS")]
    )
    run = node_run(tmp_path / "runs", link="SYS")
    r = G.gate([run], [floors])
    assert G.exit_code(r) == 0, G.summary_markdown(r)
    assert _one(r, "nvlink", "0").message == "no NVLink, as expected"
    assert _one(r, "nvlink", "0").sku.startswith("synthetic H100 PCIe-only box")
    [p2p] = [v for v in r.verdicts if v.check == "p2p"]
    assert p2p.link == "SYS" and p2p.status == PASS
    # The same box against the NVSwitch entry alone: its links are missing.
    r2 = G.gate([run], [synthetic_floors(tmp_path, name="nvswitch-only-synthetic.toml")])
    assert {v.status for v in r2.verdicts if v.check == "nvlink"} == {FAIL}


def test_a_pcie_only_card_with_the_shipped_floors_expects_no_nvlink(tmp_path):
    run = node_run(
        tmp_path / "runs",
        gpus=1,
        card=L40S,
        env={
            0: {
                "nvlink_active_links": "none reported",
                "pcie_generation_max": "4",
                "pcie_generation_current": "4",
                "power_limit_enforced_w": "350",
                "power_limit_default_w": "350",
            }
        },
    )
    r = G.gate([run])
    v = _one(r, "nvlink", "0")
    assert v.status == PASS and v.message == "no NVLink, as expected" and v.sku == "L40S (l40s.toml, provisional)"
    assert _one(r, "pcie", "0").status == PASS


def test_a_check_the_sku_lacks_is_listed_as_not_applicable(tmp_path):
    run = node_run(
        tmp_path / "runs",
        gpus=1,
        card=A100_40,
        missing={(0, "gemm_fp8")},
        env={
            0: {
                "nvlink_active_links": "12",
                "pcie_generation_max": "4",
                "pcie_generation_current": "4",
                "power_limit_enforced_w": "400",
                "power_limit_default_w": "400",
            }
        },
    )
    r = G.gate([run])
    assert not [v for v in r.verdicts if v.check == "gemm_fp8"]
    assert r.not_applicable == [
        "synthetic-node-0 GPU 0: gemm_fp8: no FP8 Tensor Cores on compute capability 8.0 (core/specs.py lists no FP8 rate)"
    ]
    assert "Not applicable:" in G.summary_markdown(r)


def test_a_gpu_no_floors_entry_knows_is_not_tested(tmp_path):
    run = node_run(tmp_path / "runs", gpus=1, card="NVIDIA Synthetic X1")
    r = G.gate([run])
    v = _one(r, "hbm", "0")
    assert v.status == NOT_TESTED and "no floors entry matches it; derive them from a fleet" in v.message
    assert G.exit_code(r) == 3


def test_the_newest_run_of_a_host_is_judged(tmp_path):
    node_run(tmp_path / "runs", stamp="20260101T000000Z", scale={(0, "hbm"): 0.5})
    node_run(tmp_path / "runs", stamp="20260102T000000Z")
    r = G.gate([tmp_path / "runs"], [synthetic_floors(tmp_path)])
    assert G.exit_code(r) == 0
    assert r.nodes[0].run.name == "20260102T000000Z-synthetic-node-0"
    assert any("1 older run(s) left out (20260101T000000Z-synthetic-node-0)" in n for n in r.notes)


def test_no_gpu_measured_is_not_tested(no_gpu_json, capsys):
    assert cli.main(["gate", str(no_gpu_json)]) == 3
    out = capsys.readouterr().out
    assert "**NOT TESTED**: no GPU of these results was measured" in out and "no GPU measured" in out


def test_bad_input_is_exit_2_naming_it(tmp_path, capsys):
    assert cli.main(["gate", str(tmp_path / "nothing-here")]) == 2
    assert "nothing-here: no such file or directory" in capsys.readouterr().err
    run = node_run(tmp_path / "runs", gpus=1)
    bad = tmp_path / "bad-synthetic.toml"
    bad.write_text(
        'schema = 1\n[[sku]]\nname = "x"\n[sku.match]\ngpu_name = "H100"\n[sku.floors.hbm]\ncase = "c"\nfail = 1.0\nwarn = 2.0\n'
    )
    assert cli.main(["gate", str(run), "--floors", str(bad)]) == 2
    assert "sku 'x'.floors.hbm.provenance must be a table" in capsys.readouterr().err


def test_outputs_replace_only_what_gate_wrote(tmp_path, capsys):
    run = node_run(tmp_path / "runs", gpus=1)
    floors = synthetic_floors(tmp_path)
    foreign = tmp_path / "results.xml"
    foreign.write_text("<testsuites name='someone else'/>")
    assert cli.main(["gate", str(run), "--floors", floors, "--junit", str(foreign)]) == 2
    assert "exists and is not a file triaudit gate wrote: refusing to replace it" in capsys.readouterr().err
    assert foreign.read_text() == "<testsuites name='someone else'/>"
    junit, prom, md = tmp_path / "gate.xml", tmp_path / "gate.prom", tmp_path / "summary.md"
    md.write_text("earlier step\n")
    for _ in range(2):  # the second run replaces the files the first wrote
        assert (
            cli.main(
                [
                    "gate",
                    str(run),
                    "--floors",
                    floors,
                    "--junit",
                    str(junit),
                    "--prom",
                    str(prom),
                    "--markdown",
                    str(md),
                ]
            )
            == 0
        )
    assert junit.read_text().count("<testsuites") == 1 and prom.read_text().count("# TYPE triaudit_check_status") == 1
    assert md.read_text().startswith("earlier step\n") and md.read_text().count("## triaudit gate") == 2
    assert cli.main(["gate", str(run), "--floors", floors, "--prom", floors]) == 2
    assert "refusing to write over an input" in capsys.readouterr().err
    assert not list(tmp_path.glob(".*.tmp"))


def test_host_judges_that_host_alone(tmp_path, capsys):
    node_run(tmp_path / "runs", host="synthetic-node-0", gpus=1, scale={(0, "hbm"): 0.5})
    node_run(tmp_path / "runs", host="synthetic-node-1", gpus=1)
    floors = synthetic_floors(tmp_path)
    assert cli.main(["gate", str(tmp_path / "runs"), "--floors", floors]) == 1
    assert cli.main(["gate", str(tmp_path / "runs"), "--floors", floors, "--host", "synthetic-node-1"]) == 0
    assert "synthetic-node-0" not in capsys.readouterr().out.split("## triaudit gate")[-1]
    assert cli.main(["gate", str(tmp_path / "runs"), "--floors", floors, "--host", "synthetic-node-1.example.org"]) == 0
    assert cli.main(["gate", str(tmp_path / "runs"), "--floors", floors, "--host", "synthetic-node-7"]) == 3
    assert "no run of host synthetic-node-7 in these results" in capsys.readouterr().out
    prom = tmp_path / "triaudit.prom"
    assert (
        cli.main(
            ["gate", str(tmp_path / "runs"), "--floors", floors, "--host", "synthetic-node-7", "--prom", str(prom)]
        )
        == 3
    )
    assert 'triaudit_gate_exit_code{Hostname="synthetic-node-7"} 3.0' in prom.read_text().splitlines()


@pytest.mark.parametrize(
    "a, b, same",
    [
        ("node-1", "node-1", True),
        ("node-1", "node-1.example.org", True),
        ("NODE-1.example.org.", "node-1", True),
        ("node-1.a.org", "node-1.b.org", False),
        ("node-1", "node-10", False),
        ("10.0.0.1", "10.0.0.2", False),
        ("10", "10.0.0.2", False),
    ],
)
def test_same_host_short_and_full_names(a, b, same):
    assert G.same_host(a, b) is same
    assert G.same_host(b, a) is same
