"""Report sections of the interconnect corner (p2p_report.py) on synthetic results: made-up
numbers in the exact JSON shape the issue-15 contract gives for triaudit_p2p and
triaudit_allreduce --scaling. Every file written here has "synthetic" in its name."""

import math

import pandas as pd
import pytest
from synthetic import _entry, skipped_entry, synthetic_context, write

from triaudit.corners import corner_named
from triaudit.report.sections import collective as C
from triaudit.report.sections import p2p as P
from triaudit.results.table import load_results

MiB = 2**20


@pytest.fixture(autouse=True)
def close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def p2p_result(
    card: str,
    n: int,
    link: dict,
    gbps,
    sizes=(4 * MiB, 512 * MiB),
    reps: int = 3,
    access=None,
    tests=(("ce", "uni"), ("ce", "bidir"), ("sm_read", "uni")),
) -> dict:
    """gbps(test, i, j) -> GB/s at the largest size (the smaller size gets half)."""
    ctx = synthetic_context(card)
    ctx.update({"executable": "triaudit_p2p", "p2p_gpu_count": str(n)})
    for i in range(n):
        ctx.update(
            {
                f"gpu_{i}_name": card,
                f"gpu_{i}_numa_node": str(i // 2),
                f"gpu_{i}_cpu_affinity": f"{i * 8}-{i * 8 + 7}",
                f"gpu_{i}_nvlink_links": "12/12",
            }
        )
        for j in range(n):
            if i != j:
                ctx[f"p2p_link_{i}_{j}"] = link[(min(i, j), max(i, j))]
                ctx[f"p2p_access_{i}_{j}"] = (access or {}).get((i, j), "yes")
    b = []
    for op, var in tests:
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                for size in sizes:
                    name = f"p2p/{op}/{var}/src:{i}/dst:{j}/bytes:{size}"
                    for r in range(reps):
                        g = gbps(f"{op} {var}", i, j) * (1 if size == max(sizes) else 0.5) * (1 + 0.01 * (r - 1))
                        extra = {"bytes_per_second_total": 2 * g * 1e9} if var == "bidir" else {}
                        b.append(_entry(name, size / (g * 1e9), r, reps, bytes_per_second=g * 1e9, **extra))
    for i in range(n):
        for j in range(n):
            if i != j:
                for r in range(reps):
                    b.append(_entry(f"p2p/latency/ce/src:{i}/dst:{j}/bytes:4", 2.5e-6, r, reps, seconds_per_op=2.5e-6))
    return {"context": ctx, "benchmarks": b}


NV4 = {(a, b): "NV4" for a in range(4) for b in range(a + 1, 4)}


def a100_gbps(test, i, j):
    base = {"ce uni": 80.0, "ce bidir": 75.0, "sm_read uni": 85.0}[test]
    return 50.0 if (i, j) == (2, 3) and test == "ce uni" else base


@pytest.fixture
def p2p_df(tmp_path):
    write(tmp_path / "a100" / "triaudit_p2p_synthetic.json", p2p_result("NVIDIA A100-SXM4-40GB", 4, NV4, a100_gbps))
    pcie = {(0, 1): "PHB"}
    write(
        tmp_path / "pcie" / "triaudit_p2p_synthetic.json",
        p2p_result(
            "NVIDIA RTX 4090",
            2,
            pcie,
            lambda t, i, j: 25.0,
            tests=(("staged", "uni"), ("ce", "uni")),
            access={(0, 1): "no (NVML: chipset not supported)", (1, 0): "no (NVML: chipset not supported)"},
        ),
    )
    one = p2p_result("NVIDIA H200", 1, {}, lambda t, i, j: 0.0)
    one["benchmarks"] = [skipped_entry("p2p/ce/uni/src:0/dst:1/bytes:536870912", "one GPU: no peer to copy to")]
    write(tmp_path / "one" / "triaudit_p2p_synthetic.json", one)
    return load_results([tmp_path])


def test_synthetic_matrix_table_with_sum_line_and_low_pair_marked(p2p_df):
    sec = P.p2p_section(p2p_df)
    tables = dict(sec.tables)
    cap = next(c for c in tables if c.startswith("NVIDIA A100-SXM4-40GB: ce uni ("))
    assert "512 MiB copies" in cap and "SUM = all pairs" in cap
    t = tables[cap]
    assert t.loc["GPU0", "GPU1"] == "80.0" and t.loc["GPU1", "GPU1"] == "—"
    assert t.loc["GPU2", "GPU3"] == "50.0*"  # 50 < 0.8 x 80, the NV4 median
    assert t.loc["GPU2", "total"] == "210"  # 80 + 80 + 50, three significant digits (core/numbers.py)
    assert t.loc["SUM", "GPU3"] == "210"
    assert t.loc["SUM", "total"] == "930"  # 11 pairs x 80 + 50: nvbandwidth's SUM
    bidir = tables[next(c for c in tables if c.startswith("NVIDIA A100-SXM4-40GB: ce bidir"))]
    assert "per direction, both directions running" in next(c for c in tables if "ce bidir" in c)
    assert bidir.loc["GPU3", "GPU0"] == "75.0" and bidir.loc["SUM", "total"] == "900"


def test_synthetic_low_pairs_listed_by_link_type(p2p_df):
    sec = P.p2p_section(p2p_df)
    low = dict(sec.tables)["Pairs below 80 % of the median of their link type (same run, same test)"]
    assert len(low) == 1
    (run, test, src, dst), row = next(low.iterrows())
    assert (run, test, src, dst) == ("NVIDIA A100-SXM4-40GB", "ce uni", 2, 3)
    assert (row["link"], row["GB/s"], row["median of link type"], row["% of median"]) == ("NV4", 50.0, 80.0, 62.0)


def test_flag_low_needs_company_of_the_same_link_type():
    rows = pd.DataFrame(
        {"file": ["f"] * 3, "test": ["ce uni"] * 3, "link": ["NV4", "NV4", "PHB"], "median": [80e9, 30e9, 10e9]}
    )
    low = P.flag_low(rows)
    # A PHB pair alone is compared with nothing; the NV4 median of (80, 30) is 55, and 30 < 44.
    assert low["low"].tolist() == [False, True, False]


def test_synthetic_links_and_access_from_the_context(p2p_df):
    tables = dict(P.p2p_section(p2p_df).tables)
    a100 = tables["NVIDIA A100-SXM4-40GB: links and peer access between the GPUs (from the run's context)"]
    assert (
        a100.loc["GPU0", "GPU3"] == "NV4"
        and a100.loc["GPU2", "NUMA / CPUs / NVLink"] == "NUMA 1, CPUs 16-23, NVLink 12/12 up"
    )
    pcie = tables["NVIDIA RTX 4090: links and peer access between the GPUs (from the run's context)"]
    assert pcie.loc["GPU0", "GPU1"] == "PHB (peer access no (NVML: chipset not supported))"
    staged = tables[next(c for c in tables if c.startswith("NVIDIA RTX 4090: staged uni"))]
    assert staged.loc["GPU1", "GPU0"] == "25.0"


def test_synthetic_heatmaps_share_one_fixed_colour_scale(p2p_df):
    sec = P.p2p_section(p2p_df)
    stems = [s for s, _, _ in sec.figures]
    assert stems == ["p2p_heatmap_ce_uni", "p2p_heatmap_ce_bidir", "p2p_heatmap_sm_read_uni", "p2p_heatmap_staged_uni"]
    fig = dict((s, f) for s, _, f in sec.figures)["p2p_heatmap_ce_uni"]
    images = [im for ax in fig.axes for im in ax.images]
    assert len(images) == 2  # A100 and 4090 side by side
    assert {(im.norm.vmin, im.norm.vmax) for im in images} == {(1.0, 1000.0)}
    a100 = images[0].get_array().filled(math.nan)
    assert a100[0][1] == pytest.approx(80.0) and a100[2][3] == pytest.approx(50.0) and math.isnan(a100[1][1])
    # the low pair is boxed in red
    assert any(
        getattr(p, "get_edgecolor", lambda: None)()[:3] == (1.0, 0.0, 0.0) for ax in fig.axes for p in ax.patches
    )


def test_synthetic_latency_and_skips(p2p_df):
    # The synthetic runs name the small copies as schema 1 did (p2p/latency/...): read as p2p/small_copy/.
    sec = P.p2p_section(p2p_df)
    lat = dict(sec.tables)[
        "NVIDIA A100-SXM4-40GB: time per copy, ce, 4 B copies back to back (µs; row = source, column = destination)"
    ]
    assert lat.loc["GPU0", "GPU1"] == "2.50" and lat.loc["GPU3", "GPU3"] == "—"
    assert any("NVIDIA H200: 1 case(s) skipped" in n and "one GPU: no peer to copy to" in n for n in sec.notes)
    assert set(sec.csv["test"]) == {"ce uni", "ce bidir", "sm_read uni", "staged uni"}


# --- allreduce scaling ---------------------------------------------------------------------------


def scaling_result(
    card: str,
    link: str,
    busbw: dict,
    sizes=(8 * MiB, 1024 * MiB),
    reps: int = 3,
    types=("fp32",),
    algo="ring",
    count="gpus",
) -> dict:
    """busbw[g] in GB/s at the largest size (the smaller size gets a quarter)."""
    ctx = synthetic_context(card)
    ctx.update({"executable": "triaudit_allreduce", "allreduce_gpus_visible": str(max(busbw)), "allreduce_link": link})
    b = []
    for typ in types:
        for g, bw in busbw.items():
            for size in sizes:
                for r in range(reps):
                    bus = bw * (1 if size == max(sizes) else 0.25) * (1 + 0.01 * (r - 1)) * 1e9
                    # one rank: a local reduction, 20 us or memory speed (~1 TB/s), whichever is longer
                    alg = bus * g / (2 * (g - 1)) if g > 1 else size / max(20e-6, size / 1e12)
                    t = size / alg
                    b.append(
                        _entry(
                            f"allreduce/scaling/{typ}/algo:{algo}/{count}:{g}/bytes:{size}",
                            t,
                            r,
                            reps,
                            algbw=alg,
                            busbw=bus if g > 1 else 0.0,
                            **{count: float(g)},
                        )
                    )
    return {"context": ctx, "benchmarks": b}


@pytest.fixture
def scaling_df(tmp_path):
    write(
        tmp_path / "h200" / "triaudit_allreduce_synthetic.json",
        scaling_result("NVIDIA H200", "NV18", {1: 0.0, 2: 360.0, 4: 350.0, 8: 340.0}),
    )
    write(
        tmp_path / "pcie" / "triaudit_allreduce_synthetic.json",
        scaling_result("NVIDIA RTX 4090", "PCIe", {1: 0.0, 2: 20.0, 4: 12.0}, count="ranks"),
    )
    return load_results([tmp_path])


def test_synthetic_scaling_table_efficiency_and_link_model(scaling_df):
    sec = C.scaling_section(scaling_df, corner_named("allreduce"))
    ((cap, t),) = sec.tables
    assert "efficiency = busbw ÷ busbw at the fewest GPUs" in cap
    h = t.xs("NVIDIA H200", level="card").reset_index().set_index("GPUs")
    assert list(h.index) == [1, 2, 4, 8]
    assert h.loc[8, "busbw GB/s"] == "340" and h.loc[8, "size"] == "1024 MiB"  # core/numbers.py
    assert h.loc[8, "efficiency"] == "94 % of 2 GPUs"  # 340 / 360
    assert h.loc[8, "of link model"] == "76 %"  # 340 / 450 (H200 NVLink, per direction)
    assert h.loc[1, "efficiency"] == "one GPU: no bus" and h.loc[1, "busbw GB/s"] == "0"  # said, not blank
    assert float(h.loc[8, "algbw GB/s"]) == pytest.approx(340 * 8 / 14, abs=0.5)
    assert "NVLink 450 GB/s per direction" in h.loc[2, "link model"]
    g = t.xs("NVIDIA RTX 4090", level="card").reset_index().set_index("GPUs")  # ranks:<r> under MPI
    assert g.loc[4, "efficiency"] == "60 % of 2 GPUs" and g.loc[4, "of link model"] == "38 %"  # 12 / 32 (Gen4 x16)


def test_synthetic_scaling_figure_one_line_per_card(scaling_df):
    sec = C.scaling_section(scaling_df, corner_named("allreduce"))
    ((stem, _, fig),) = sec.figures
    assert stem == "allreduce_scaling"
    ax = fig.axes[0]
    lines = [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 2]
    assert sorted(list(ln.get_xdata()) for ln in lines) == [[1, 2, 4], [1, 2, 4, 8]]
    h200 = next(ln for ln in lines if len(ln.get_xdata()) == 4)
    assert list(h200.get_ydata()) == pytest.approx([0.0, 360.0, 350.0, 340.0])
    assert any(list(ln.get_ydata()) == [450.0, 450.0] for ln in ax.get_lines())  # the dashed link model


def test_largest_size_common_to_every_count(tmp_path):
    data = scaling_result("NVIDIA H200", "NV18", {2: 360.0, 4: 350.0})
    # 4 GPUs could not fit the largest size: the table falls back to the largest size both measured.
    data["benchmarks"] = [
        e for e in data["benchmarks"] if not ("gpus:4/" in e["name"] and "bytes:1073741824" in e["name"])
    ]
    write(tmp_path / "triaudit_allreduce_synthetic.json", data)
    ((_, t),) = C.scaling_section(load_results([tmp_path]), corner_named("allreduce")).tables
    assert set(t["size"]) == {"8 MiB"}


def test_no_interconnect_results_no_section_content(tmp_path):
    from synthetic import synthetic_stream_result

    write(tmp_path / "s_synthetic.json", synthetic_stream_result("NVIDIA H200", 4000))
    for s in P.sections(load_results([tmp_path])):
        assert not s.tables and not s.figures and not s.notes


def test_synthetic_full_report_renders_the_interconnect_sections(tmp_path):
    from triaudit.report import page as report

    runs = tmp_path / "results"
    write(runs / "a100" / "triaudit_p2p_synthetic.json", p2p_result("NVIDIA A100-SXM4-40GB", 4, NV4, a100_gbps))
    write(
        runs / "h200" / "triaudit_allreduce_synthetic.json",
        scaling_result("NVIDIA H200", "NV18", {1: 0.0, 2: 360.0, 4: 350.0, 8: 340.0}),
    )
    written = {p.name for p in report.write_report([runs], tmp_path / "report")}
    assert {"p2p.csv", "allreduce_scaling.csv", "p2p_heatmap_ce_uni.png", "allreduce_scaling.png"} <= written
    md = (tmp_path / "report" / "report.md").read_text()
    assert "## Movement: GPU to GPU" in md and "## Movement: allreduce scaling over GPU counts" in md
    assert "| GPU2 | 80.0 | 80.0 | — | 50.0* | 210 |" in md
    assert "94 % of 2 GPUs" in md
