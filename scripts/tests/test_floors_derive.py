"""`triaudit floors derive` on synthetic fleets (synthetic_gate.py: made-up numbers): noise only,
a slow GPU, mixed SKUs, too few GPUs, a GPU of another topology; the floors it writes are read by
the gate's own loader, and an existing --out is never overwritten unless --force."""

from __future__ import annotations

import random
import zlib

import pytest
from synthetic_gate import A100_40, ALLREDUCE_HEALTHY, HEALTHY, node_run

from triaudit import commands as cli
from triaudit.judge import derive as D
from triaudit.judge import gate as G
from triaudit.judge.floors import load_floors
from triaudit.judge.gate_checks import FAIL

A100_ENV = {"nvlink_active_links": "12", "pcie_generation_max": "4", "pcie_generation_current": "4"}


def fleet(
    root,
    nodes=4,
    gpus=8,
    spread=0.007,
    noise=0.005,
    seed=7,
    slow=None,
    card=None,
    prefix="synthetic-node",
    stamp="20260101T000000Z",
    env=None,
    family=0,
    slow_pairs=None,
    slow_allreduce=None,
):
    """nodes x gpus GPUs, each GPU `spread` (sigma) off the healthy figure on every check, fixed per
    GPU by `seed` (the same GPUs measured again with another stamp keep their figures); repetitions
    `noise` (sigma); slow {(node, gpu, check): fraction}, slow_pairs {(node, src, dst): fraction},
    slow_allreduce {node: fraction}."""
    rng = random.Random(seed)
    for n in range(nodes):
        scale = {}
        for i in range(gpus):
            for check in HEALTHY:
                scale[(i, check)] = (1 + rng.gauss(0, spread)) * (1 - (slow or {}).get((n, i, check), 0.0))
        p2p = {(s, d): 1 + rng.gauss(0, spread) for s in range(gpus) for d in range(gpus) if s != d}
        for (node, s, d), fraction in (slow_pairs or {}).items():
            if node == n:
                p2p[(s, d)] *= 1 - fraction
        extra = {"card": card} if card else {}
        node_run(
            root,
            host=f"{prefix}-{n}",
            gpus=gpus,
            scale=scale,
            p2p_scale=p2p,
            noise=noise,
            seed=zlib.crc32(f"{seed}-{n}-{stamp}".encode()),
            stamp=stamp,
            env=env or {},
            family=family,
            allreduce=ALLREDUCE_HEALTHY * (1 + rng.gauss(0, spread)) * (1 - (slow_allreduce or {}).get(n, 0.0)),
            **extra,
        )
    return root


def _derive(tmp_path, *paths, out="floors.toml", extra=()):
    target = tmp_path / out
    code = cli.main(["floors", "derive", *map(str, paths), "--out", str(target), "--fleet", "synthetic-fleet", *extra])
    return code, target


def test_noise_only_floors_state_a_false_fail_rate_below_a_tenth_of_a_percent(tmp_path):
    runs = fleet(tmp_path / "fleet")
    code, out = _derive(tmp_path, runs)
    assert code == 0
    [sku] = load_floors(out)  # the gate's own loader reads what derive wrote
    assert sku.name == "NVIDIA H100 80GB HBM3 · 18 NVLinks · PCIe Gen5 x16 · 700 W" and not sku.provisional
    assert sorted(sku.floors) == sorted([*HEALTHY, "p2p:NV18", "allreduce"])
    for key, f in sku.floors.items():
        p = f.provenance
        assert p["kind"] == "derived" and p["fleet"] == "synthetic-fleet" and p["measured"] == "20260101T000000Z"
        assert p["gpus"] == (4 if key in ("p2p:NV18", "allreduce") else 32)
        assert "per check (within-run repetition noise of" in f.false_fail_rate
        text = out.read_text()
        assert "false_fail_rate_per_check" in text
    assert sku.floors["hbm"].describe().startswith("derived from 32 GPUs of fleet synthetic-fleet on ")
    assert sku.floors["p2p:NV18"].describe().startswith("derived from 4 nodes of fleet synthetic-fleet on ")
    rates = load_rates(out)
    assert rates and all(r < 1e-3 for r in rates.values()), rates
    hbm = sku.floors["hbm"]
    median = hbm.provenance["median"]
    assert hbm.fail == pytest.approx(median * (1 - hbm.provenance["margin"]))
    assert hbm.warn == pytest.approx(median * (1 - hbm.provenance["margin"] / 2))
    assert hbm.provenance["margin"] == pytest.approx(max(3 * hbm.provenance["robust_sigma"] / median, 0.04))
    launch = sku.floors["launch"]
    assert launch.fail > launch.warn > launch.provenance["median"]  # a time: the floor is a ceiling
    # Re-measuring the same healthy GPUs (new repetition noise) fails nothing: 10 nights of 32 GPUs.
    fails = 0
    for night in range(10):
        again = fleet(tmp_path / f"night-{night}", stamp=f"202601{night + 2:02d}T000000Z")
        r = G.gate([again], [out])
        fails += sum(v.status == FAIL for v in r.verdicts)
        assert G.exit_code(r) in (0,), G.summary_markdown(r)
    assert fails == 0


def load_rates(path) -> dict:
    from triaudit.judge.floors import _toml

    data = _toml().loads(path.read_text())
    return {
        k: f["false_fail_rate_per_check"]
        for k, f in data["sku"][0]["floors"].items()
        if "false_fail_rate_per_check" in f
    }


def test_a_gpu_ten_percent_slow_fails_where_a_25_percent_margin_would_pass_it(tmp_path):
    runs = fleet(tmp_path / "fleet", slow={(2, 5, "hbm"): 0.10})
    code, out = _derive(tmp_path, runs)
    assert code == 0
    [sku] = load_floors(out)
    hbm = sku.floors["hbm"]
    # The slow GPU does not move the robust statistics: the floor is the healthy fleet's.
    assert hbm.provenance["median"] == pytest.approx(HEALTHY["hbm"][2], rel=0.01)
    assert "1 below this floor now: synthetic-node-2 GPU 5:" in hbm.provenance["note"]
    r = G.gate([runs], [out])
    failed = [(v.host, v.gpu, v.check) for v in r.verdicts if v.status == FAIL]
    assert failed == [("synthetic-node-2", "5", "hbm")]
    slow = next(v for v in r.verdicts if v.status == FAIL)
    assert slow.measured > 0.75 * hbm.provenance["median"]  # DCGM's 25 % margin passes it
    assert G.exit_code(r) == 1


def test_a_gpu_ten_percent_slow_on_any_check_fails_the_fleets_own_floors(tmp_path):
    """Floors derived from a healthy synthetic fleet; the next night one GPU is 10 % slow on each
    check (a time: 1 / 0.9 as long), one pair 10 % slow on p2p, one node on allreduce: each of them
    fails, nothing else does."""
    code, out = _derive(tmp_path, fleet(tmp_path / "fleet"))
    assert code == 0
    slow = {(1, i, check): 0.10 for i, check in enumerate(HEALTHY)}
    night = fleet(
        tmp_path / "night",
        stamp="20260102T000000Z",
        slow=slow,
        slow_pairs={(2, 3, 4): 0.10},
        slow_allreduce={3: 0.10},
    )
    r = G.gate([night], [out])
    failed = sorted((v.host, v.gpu, v.check) for v in r.verdicts if v.status == FAIL)
    expected = [(f"synthetic-node-{n}", str(i), check) for (n, i, check) in slow]
    expected += [("synthetic-node-2", "3", "p2p"), ("synthetic-node-3", "", "allreduce")]
    assert failed == sorted(expected), G.summary_markdown(r)
    assert G.exit_code(r) == 1


def test_mixed_skus_get_a_floors_entry_each(tmp_path):
    runs = tmp_path / "fleet"
    fleet(runs, nodes=2)
    fleet(
        runs, nodes=2, card=A100_40, prefix="synthetic-a100-node", env={i: A100_ENV for i in range(8)}, seed=3, family=1
    )
    code, out = _derive(tmp_path, runs)
    assert code == 0
    skus = load_floors(out)
    assert sorted(s.name for s in skus) == [
        "NVIDIA A100-SXM4-40GB · 12 NVLinks · PCIe Gen4 x16 · 700 W",
        "NVIDIA H100 80GB HBM3 · 18 NVLinks · PCIe Gen5 x16 · 700 W",
    ]
    r = G.gate([runs], [out])
    assert G.exit_code(r) == 0, G.summary_markdown(r)
    for v in r.verdicts:
        expected = "A100" if v.host.startswith("synthetic-a100") else "H100"
        assert expected in v.sku, (v.host, v.sku)


def test_floors_from_fewer_than_8_gpus_say_so(tmp_path):
    runs = fleet(tmp_path / "fleet", nodes=1, gpus=4)
    code, out = _derive(tmp_path, runs)
    assert code == 0
    [sku] = load_floors(out)
    for key, f in sku.floors.items():
        units = "nodes" if key in ("p2p:NV18", "allreduce") else "GPUs"
        n = 1 if units == "nodes" else 4
        assert f"derived from {n} {units} (fewer than 8): the spread is uncertain" in f.provenance["note"]


def test_a_gpu_of_another_topology_is_left_out_and_then_fails_its_check(tmp_path):
    runs = tmp_path / "fleet"
    fleet(runs, nodes=2)
    node_run(runs, host="synthetic-node-9", gpus=2, env={1: {"nvlink_active_links": "16"}})
    code, out = _derive(tmp_path, runs)
    assert code == 0
    [sku] = load_floors(out)
    assert "1 GPU(s) left out, their topology differs: synthetic-node-9 GPU 1" in sku.note
    assert "nvlink_links 16 (the model's mode: 18)" in sku.note
    r = G.gate([runs], [out])
    [bad] = [v for v in r.verdicts if v.status == FAIL]
    assert (bad.host, bad.gpu, bad.check, bad.message) == (
        "synthetic-node-9",
        "1",
        "nvlink",
        f"16 of 18 NVLinks up ({sku.name})",
    )


def test_an_existing_out_is_refused_unless_force(tmp_path, capsys):
    runs = fleet(tmp_path / "fleet", nodes=1, gpus=2)
    out = tmp_path / "floors.toml"
    out.write_text("# someone's floors\n")
    code, _ = _derive(tmp_path, runs)
    assert code == 2 and out.read_text() == "# someone's floors\n"
    assert f"--out {out} exists: refusing to overwrite it (--force replaces it)" in capsys.readouterr().err
    code, _ = _derive(tmp_path, runs, extra=("--force",))
    assert code == 0 and load_floors(out) and not list(tmp_path.glob(".*.tmp"))
    # An input is never the output, --force or not.
    result = next(runs.rglob("triaudit_stream.gpu0.synthetic.json"))
    before = result.read_bytes()
    code, _ = _derive(tmp_path, runs, out=str(result.relative_to(tmp_path)), extra=("--force",))
    assert code == 2 and result.read_bytes() == before
    assert "refusing to write over an input" in capsys.readouterr().err


def test_nothing_to_derive_from(tmp_path, no_gpu_json):
    code, out = _derive(tmp_path, no_gpu_json)
    assert code == 3 and not out.exists()


def test_the_floor_rule_on_known_figures():
    units = [D.Unit(f"g{i}", v, 0.001, 5) for i, v in enumerate([100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 60.0])]
    d = D.floor_from("hbm", "stream/triad/fp32/cache:cold/bytes:1073741824", units)
    assert d.median == 100.0
    assert d.robust_sigma == pytest.approx(1.4826 * 0.5)  # MAD 0.5: the 60 does not move it
    assert d.margin == 0.04 and d.fail == pytest.approx(96.0) and d.warn == pytest.approx(98.0)
    assert d.below == ["g6: 0.00 GB/s"] and d.false_fail_rate is not None and d.false_fail_rate < 1e-9
    wide = [D.Unit(f"g{i}", v, 0.01, 5) for i, v in enumerate([100.0, 104.0, 96.0, 102.0, 98.0])]
    d = D.floor_from("hbm", "c", wide)
    assert d.margin == pytest.approx(3 * 1.4826 * 2 / 100)  # 3 sigma is wider than 4 %
