"""`nvidia-smi topo -m` / `-mp` / `-p2p` and `nvidia-smi nvlink -s` parsing and judgement.

Real dumps are read from data/real/ beside these tests (its SOURCES.md lists the facts asserted here);
files and strings named "synthetic" are written by hand in nvidia-smi's shapes for what the real
ones lack (spaces for tabs, old drivers, mixed NVLink, the P2P capability matrix, link states)."""

import json
import re
from pathlib import Path

import pytest

from triaudit import commands as cli
from triaudit.doctor import topology as T

REPO = Path(__file__).resolve().parents[2]
REAL = Path(__file__).parent / "data" / "real"  # real published outputs, sources in SOURCES.md
DATA = Path(__file__).parent / "data" / "interconnect"


def real(name: str) -> T.Topology:
    return T.parse_topo((REAL / name).read_text(), name)


def synthetic(name: str) -> T.Topology:
    assert "synthetic" in name
    return T.parse_topo((DATA / name).read_text(), name)


# --- real dumps ----------------------------------------------------------------------------------


def test_dgx_a100_old_header_with_nic_names():
    t = real("topo_dgx_a100.txt")
    assert t.kind == "m" and t.gpus == list(range(8))
    assert {t.link(a, b) for a, b in t.gpu_pairs()} == {"NV12"}
    assert t.cells[("GPU0", "mlx5_0")] == "PXB" and t.cells[("GPU0", "mlx5_2")] == "SYS"
    assert t.cells[("mlx5_4", "mlx5_5")] == "PIX"
    assert t.affinity["GPU0"] == {"CPU Affinity": "48-63,176-191", "NUMA Affinity": "3"}
    assert not t.nic_legend and "NV#" in t.legend
    f = T.judge_topology(t)
    assert not f.problems and not f.warnings
    assert "CPUs 48-63,176-191; NUMA node 3; nearest NIC mlx5_0, mlx5_1 (PXB)" in f.rows["GPU0"]


def test_dgx1_mp_dump_is_pcie_paths_only_not_no_nvlink():
    t = real("topo_dgx1_pcie_paths_mp.txt")
    assert t.kind == "mp"
    assert (t.link(0, 1), t.link(0, 2), t.link(0, 4)) == ("PIX", "PHB", "SYS")
    assert not any(T.nvlink_count(t.link(a, b)) for a, b in t.gpu_pairs())
    assert t.affinity["GPU4"]["CPU Affinity"] == "20-39,60-79"
    f = T.judge_topology(t)
    assert not f.warnings and not f.problems  # a DGX-1 has NVLink: -mp just does not show it
    assert "PCIe paths only" in f.notes[0] and "topo -m" in f.notes[0]
    assert "PCIe paths only" in f.rows["source"]


def test_hgx_h200_new_header_nic_legend_and_gpu_numa_id():
    t = real("topo_hgx_h200_12nic.txt")
    assert t.kind == "m" and {t.link(a, b) for a, b in t.gpu_pairs()} == {"NV18"}
    assert t.cells[("GPU0", "NIC0")] == "PXB" and t.cells[("NIC1", "NIC2")] == "PIX"
    assert t.affinity["GPU4"] == {"CPU Affinity": "56-111,168-223", "NUMA Affinity": "1", "GPU NUMA ID": "N/A"}
    assert t.nic_legend["NIC11"] == "mlx5_11"
    f = T.judge_topology(t)
    assert not f.warnings
    assert "nearest NIC mlx5_0 (PXB)" in f.rows["GPU0"] and "nearest NIC mlx5_11 (PXB)" in f.rows["GPU7"]


def test_four_a100_nv4():
    t = real("topo_4x_a100_sxm4_nv4.txt")
    assert {t.link(a, b) for a, b in t.gpu_pairs()} == {"NV4"}
    assert t.cells[("GPU1", "mlx5_0")] == "PIX"
    assert [t.affinity[f"GPU{i}"]["NUMA Affinity"] for i in range(4)] == ["1", "0", "3", "2"]
    assert not T.judge_topology(t).warnings


def test_workstation_without_nvlink_warns_with_worst_path():
    t = real("topo_5gpu_workstation_pcie_sys_phb_node.txt")
    assert all(t.link(0, j) == "SYS" for j in range(1, 5))
    assert (t.link(1, 2), t.link(1, 3)) == ("PHB", "NODE")
    assert [t.affinity[f"GPU{i}"]["NUMA Affinity"] for i in range(5)] == ["1", "0", "0", "0", "0"]
    f = T.judge_topology(t)
    assert len(f.warnings) == 1
    assert "no NVLink between any of the 5 GPUs" in f.warnings[0] and "worst path SYS" in f.warnings[0]


@pytest.mark.parametrize(
    "name,code,cpus",
    [("topo_2x_rtx5090_phb.txt", "PHB", "0-63"), ("topo_2x_rtx2080ti_pix_autodl.txt", "PIX", "24-47,72-95")],
)
def test_two_consumer_cards(name, code, cpus):
    t = real(name)
    assert t.link(0, 1) == code and t.affinity["GPU0"]["CPU Affinity"] == cpus
    assert "no NVLink between any of the 2 GPUs" in T.judge_topology(t).warnings[0]


# --- synthetic variants --------------------------------------------------------------------------


@pytest.mark.parametrize("tabsize", [8, 4])
def test_synthetic_spaces_instead_of_tabs_read_the_same(tabsize):
    # Tabs expanded at tab stops, as a terminal or web page does; "mlx5_10" + a tab leaves one space.
    text = (REAL / "topo_dgx_a100.txt").read_text()
    spaced = text.expandtabs(tabsize)
    assert "\t" not in spaced and "mlx5_10 mlx5_11" in spaced
    a, b = T.parse_topo(text), T.parse_topo(spaced, "synthetic spaces")
    assert a.cells == b.cells and a.affinity == b.affinity and a.devices == b.devices


def test_synthetic_spaces_file_two_bridges_warns_names_pairs_and_no_ring():
    t = synthetic("topo_synthetic_4gpu_two_nvlink_bridges_spaces.txt")
    assert (t.link(0, 1), t.link(2, 3), t.link(1, 2)) == ("NV4", "NV4", "SYS")
    assert t.affinity["GPU2"] == {"CPU Affinity": "16-31,48-63", "NUMA Affinity": "1", "GPU NUMA ID": "N/A"}
    w = T.judge_topology(t).warnings
    assert len(w) == 1 and "4 of 6 GPU pairs have no NVLink" in w[0]
    assert "GPU0-GPU2 (SYS)" in w[0] and "GPU1-GPU3 (SYS)" in w[0] and "GPU0-GPU1" not in w[0]
    assert "no ring over NVLink alone exists" in w[0]


def test_synthetic_dgx1_cube_mesh_has_an_nvlink_ring():
    t = synthetic("topo_synthetic_dgx1_v100_nvlink_cube_mesh.txt")
    assert t.kind == "m" and t.link(0, 3) == "NV2" and t.link(0, 5) == "SYS"
    w = T.judge_topology(t).warnings
    assert "12 of 28 GPU pairs have no NVLink" in w[0] and "no ring" not in w[0]
    assert T.nvlink_ring_exists(t.gpus, lambda a, b: bool(T.nvlink_count(t.link(a, b))))


def test_synthetic_old_driver_soc_and_no_numa_column():
    t = synthetic("topo_synthetic_old_driver_soc.txt")
    assert t.link(0, 2) == "SOC" and t.cells[("GPU0", "mlx4_0")] == "PHB"
    assert t.affinity["GPU2"] == {"CPU Affinity": "12-23,36-47"}
    assert "worst path SOC" in T.judge_topology(t).warnings[0]


def test_synthetic_p2p_capability_matrix_with_leading_spaces():
    t = synthetic("topo_synthetic_p2p_capability_ns.txt")
    assert t.kind == "p2p" and t.link(0, 1) == "NS"
    f = T.judge_topology(t)
    assert "GPU0-GPU1 (not supported)" in f.warnings[0]
    assert "not the link matrix" in f.notes[0]


def test_synthetic_nvswitch_gpu_with_fewer_links():
    text = (REAL / "topo_hgx_h200_12nic.txt").read_text()
    lines = text.split("\n")
    # GPU3's row and column say NV17 (one of its 18 links lost).
    header = lines[0].split("\t")
    col = header.index("GPU3")
    fixed = []
    for ln in lines:
        cells = ln.split("\t")
        if cells[0] == "GPU3":
            cells = [c.replace("NV18", "NV17") for c in cells]
        elif cells[0].startswith("GPU") and len(cells) > col:
            cells[col] = cells[col].replace("NV18", "NV17")
        fixed.append("\t".join(cells))
    t = T.parse_topo("\n".join(fixed), "synthetic degraded")
    assert t.link(3, 5) == "NV17" and t.link(0, 1) == "NV18"
    w = T.judge_topology(t).warnings
    assert len(w) == 1 and "most GPU pairs have NV18" in w[0] and "GPU0-GPU3 (NV17)" in w[0] and "GPU0-GPU1" not in w[0]


def test_synthetic_legend_cut_off():
    mp = (REAL / "topo_dgx1_pcie_paths_mp.txt").read_text().split("Legend:")[0]
    t = T.parse_topo(mp, "synthetic cut")
    assert t.kind == "unknown"
    assert "cannot tell `topo -m` from `topo -mp`" in T.judge_topology(t).warnings[0]
    m = (REAL / "topo_dgx_a100.txt").read_text().split("Legend:")[0]
    assert T.parse_topo(m).kind == "m"  # NV entries say it is -m without the Legend


def test_synthetic_one_gpu():
    t = T.parse_topo("\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-31\t0\n", "synthetic one")
    assert t.gpus == [0] and t.affinity["GPU0"]["CPU Affinity"] == "0-31"
    assert T.judge_topology(t).notes == ["one GPU: no GPU-to-GPU link to check"]


def test_lines_before_the_header_are_skipped():
    text = "root@host:~# nvidia-smi topo -m\n" + (REAL / "topo_2x_rtx5090_phb.txt").read_text()
    assert T.parse_topo(text).link(0, 1) == "PHB"


@pytest.mark.parametrize(
    "text,message",
    [
        ("", "no matrix header"),
        ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", "no matrix header"),
        ("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-7\n", "rows missing for GPU1"),
        ("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \nGPU1\tNV4\t X \t0-7\n", "row GPU0 (line 2) has 1 cells"),
        ("\tGPU0\tGPU1\nGPU0\tNV4\t X\nGPU1\tNV4\t X\n", "own cell is 'NV4'"),
        ("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPUX\tNV4\t X\n", "starts with 'GPUX'"),
    ],
)
def test_bad_dumps_are_refused_with_the_reason(text, message):
    with pytest.raises(T.TopologyError, match=re.escape(message)):
        T.parse_topo(text, "synthetic bad")


# --- NVLink states -------------------------------------------------------------------------------


def _status(gpus: dict) -> str:
    """Synthetic `nvidia-smi nvlink -s` text in the shape NVIDIA prints (Azure/azhpc-diagnostics#73)."""
    out = []
    for g, links in gpus.items():
        out.append(f"GPU {g}: NVIDIA A100-SXM4-80GB (UUID: GPU-synthetic-{g})")
        if links == "all inactive":
            out.append("NVML: Unable to retrieve NVLink information as all links are inActive")
            continue
        out += [f"\t Link {k}: {v}" for k, v in enumerate(links)]
    return "\n".join(out) + "\n"


def test_synthetic_links_down_on_one_gpu_are_a_problem():
    up = ["25 GB/s"] * 12
    part = ["25 GB/s"] * 3 + ["<inactive>"] + ["25 GB/s"] + ["<inactive>"] + ["25 GB/s"] * 6
    s = T.parse_nvlink_status(_status({0: up, 1: part}))
    assert s[0].active == 12 and s[1].down == [3, 5] and s[1].total == 12 and s[1].links[0] == 25.0
    f = T.judge_nvlink(s)
    assert f.rows["GPU1"] == "10/12 links up at 25 GB/s; down: 3, 5"
    assert (
        len(f.problems) == 1 and "GPU1 (NVIDIA A100-SXM4-80GB): NVLink link(s) 3, 5 down, 10 of 12 up" in f.problems[0]
    )


def test_synthetic_all_links_inactive_on_one_gpu_while_others_are_up():
    s = T.parse_nvlink_status(_status({0: ["26.562 GB/s"] * 18, 1: "all inactive"}))
    assert s[0].links[17] == 26.562 and s[1].all_inactive
    f = T.judge_nvlink(s)
    assert f.rows["GPU1"] == "all links inactive (NVML)"
    assert "GPU1 (NVIDIA A100-SXM4-80GB): every NVLink link is down" in f.problems[0]


def test_synthetic_no_link_up_anywhere_is_a_note_not_a_problem():
    f = T.judge_nvlink(T.parse_nvlink_status(_status({0: ["<inactive>"] * 12, 1: ["<inactive>"] * 12})))
    assert not f.problems and "without an NVLink bridge" in f.notes[0]


def test_synthetic_gpus_without_nvlink():
    f = T.judge_nvlink(T.parse_nvlink_status("GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-synthetic)\n"))
    assert f.rows == {"GPU0": "no NVLink reported"} and not f.problems and not f.notes


# --- through the CLI -----------------------------------------------------------------------------


def test_doctor_topo_file_without_gpu_judges_the_dump(capsys, tmp_path):
    code = cli.main(
        [
            "doctor",
            "--build-dir",
            str(tmp_path),
            "--json",
            "--topo-file",
            str(REAL / "topo_5gpu_workstation_pcie_sys_phb_node.txt"),
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["exit_code"] == 0  # a warning, no problem; no GPU here does not make it 77
    assert out["sections"]["topology"]["GPU1"].split()[:5] == ["SYS", "X", "PHB", "NODE", "NODE"]
    assert any("no NVLink between any of the 5 GPUs" in w for w in out["warnings"])


def test_doctor_topo_file_mp_says_pcie_paths_only(capsys, tmp_path):
    code = cli.main(["doctor", "--build-dir", str(tmp_path), "--topo-file", str(REAL / "topo_dgx1_pcie_paths_mp.txt")])
    text = capsys.readouterr().out
    assert code == 0
    assert "PCIe paths only" in text and "no NVLink between" not in text
    assert "no problems found in the given dumps" in text


@pytest.mark.parametrize(
    "content,message", [(None, "cannot be read"), ("", "empty file"), ("hello\n", "no matrix header")]
)
def test_doctor_bad_topo_file_exit_2_naming_it(capsys, tmp_path, content, message):
    f = tmp_path / "topo.txt"
    if content is not None:
        f.write_text(content)
    code = cli.main(["doctor", "--build-dir", str(tmp_path), "--topo-file", str(f)])
    err = capsys.readouterr().err
    assert code == 2 and f"--topo-file {f}" in err and message in err and "Traceback" not in err
