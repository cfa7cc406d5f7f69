"""NCCL's path from NCCL_DEBUG=INFO logs: transport per channel, P2P over NVLink or not, and the
warnings (exit 1) when NVLink exists but NCCL chose SHM, the network or PCIe.

Real logs are read from data/real/ beside these tests (facts from its SOURCES.md); the
nccl_info_synthetic_* files and the strings below are written by hand in the line shapes of NCCL's
own format strings (src/transport/*.cc) for what the real logs lack (SHM, NET/IB, NVLS, CollNet,
old releases)."""

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from triaudit import commands as cli
from triaudit.doctor import interconnect as I
from triaudit.doctor import nccl_log as N
from triaudit.doctor import topology as T

REPO = Path(__file__).resolve().parents[2]
REAL = Path(__file__).parent / "data" / "real"  # real published outputs, sources in SOURCES.md
DATA = Path(__file__).parent / "data" / "interconnect"
A100_LOG = REAL / "nccl_info_p2p_nvlink_2xa100_sxm4.txt"
SOCKET_LOG = REAL / "nccl_info_net_socket_2node_16rank.txt"


def two_gpu_topo(code: str) -> T.Topology:
    """Synthetic 2-GPU `topo -m` with the given link between them."""
    return T.parse_topo(
        f"\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t{code}\t0-63\t0\nGPU1\t{code}\t X \t0-63\t0\n"
        "\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n",
        f"synthetic 2-GPU {code}",
    )


def synthetic_log(name: str) -> N.NcclLog:
    assert "synthetic" in name
    return I.load_nccl_log(DATA / name)


# --- real logs -----------------------------------------------------------------------------------


def test_real_a100_pair_p2p_direct_pointer_read_on_24_channels():
    log = I.load_nccl_log(A100_LOG)
    assert log.version == "2.20.5" and log.nranks == 2 and log.nnodes == 1
    assert len(log.connections) == 48
    assert {c.via for c in log.connections} == {"P2P/direct pointer/read"}
    assert {c.kind for c in log.connections} == {"P2P/direct pointer"}
    assert sorted({c.channel for c in log.connections}) == list(range(24))
    assert log.summary == {"coll": 24, "collnet": 0, "nvls": 0}
    assert log.no_ib_device and log.networks == ["Socket"]
    assert (log.ranks[0].nvml_dev, log.ranks[0].bus_id, log.ranks[1].bus_id) == (0, "a4000", "a9000")
    # The nccl-tests table in the same file (data rows at column 0) is not mistaken for anything.
    assert not log.warns and not log.graphs


def test_real_a100_pair_over_nvlink_when_the_matrix_says_nv12():
    f = I.judge_nccl(I.load_nccl_log(A100_LOG), two_gpu_topo("NV12"))
    assert f.rows["GPU0 -> GPU1"] == "P2P/direct pointer/read, channel(s) 0-23, over NVLink (NV12)"
    assert f.rows["GPU1 -> GPU0"] == "P2P/direct pointer/read, channel(s) 0-23, over NVLink (NV12)"
    assert f.rows["channels"] == "24 coll, 0 CollNet, 0 NVLS"
    assert not f.problems and not f.warnings and "P2P runs over NVLink" in f.notes


def test_real_a100_log_on_a_pcie_only_pair_is_pcie_and_no_problem():
    f = I.judge_nccl(I.load_nccl_log(A100_LOG), two_gpu_topo("PHB"))
    assert "over PCIe (PHB" in f.rows["GPU0 -> GPU1"]
    assert not f.problems  # no NVLink on that machine: nothing better was available


def test_real_a100_log_without_topology_says_what_is_unknown():
    f = I.judge_nccl(I.load_nccl_log(A100_LOG))
    assert f.rows["GPU0 -> GPU1"] == "P2P/direct pointer/read, channel(s) 0-23"
    assert "cannot be told whether P2P runs over NVLink" in f.notes[-1]


def test_real_two_node_socket_log():
    log = I.load_nccl_log(SOCKET_LOG)
    assert log.nranks == 16 and log.version is None
    vias = {(c.src_rank, c.dst_rank, c.direction): c.via for c in log.connections}
    assert vias[(9, 0, "receive")] == "NET/Socket/0" and vias[(0, 8, "send")] == "NET/Socket/0"
    assert vias[(0, 7, "")] == "P2P/IPC/read" and vias[(0, 1, "")] == "P2P/IPC/read"
    assert (log.ranks[7].bus_id, log.ranks[7].host) == ("cf000", "lsp-ws1")
    f = I.judge_nccl(log)
    assert f.rows["rank 0 -> rank 8 [send] (other node)"] == "NET/Socket/0, channel(s) 0-1"
    assert f.rows["rank 9 -> rank 0 [receive] (other node)"] == "NET/Socket/0, channel(s) 0-1"
    assert f.rows["GPU0 -> GPU7"] == "P2P/IPC/read, channel(s) 0-1"
    assert not f.problems
    assert any("TCP sockets (NET/Socket)" in w and "NET/IB found no device" in w for w in f.warnings)
    # NCCL 2.12-era lines name bus ids; without nvidia-smi's bus ids CUDA's order is assumed, and said.
    assert any("assumed to follow nvidia-smi's order" in n for n in f.notes)


def test_real_socket_log_mapped_by_bus_id():
    bus = {"4b000": 0, "51000": 1, "cf000": 7}  # as nvidia-smi's pci.bus_id would give them
    f = I.judge_nccl(I.load_nccl_log(SOCKET_LOG), None, bus)
    assert "GPU0 -> GPU7" in f.rows and not any("assumed" in n for n in f.notes)


def test_real_nccl_tests_table_with_one_stray_info_line():
    f = I.judge_nccl(I.load_nccl_log(REAL / "nccl_tests_8xa100_sxm4_40gb_superbench_fixture.txt"))
    assert any("no connection line" in w for w in f.warnings) and not f.problems


# --- synthetic logs ------------------------------------------------------------------------------


def test_synthetic_shm_between_nvlinked_gpus_is_a_problem_with_the_fixes():
    log = synthetic_log("nccl_info_synthetic_shm_p2p_disabled_2gpu.txt")
    assert {c.via for c in log.connections} == {"SHM/direct/direct"} and log.env == {"NCCL_P2P_DISABLE": "1"}
    f = I.judge_nccl(log, two_gpu_topo("NV12"))
    assert f.rows["GPU0 -> GPU1"] == "SHM/direct/direct, channel(s) 0-1, through host memory"
    assert f.rows["environment"] == "NCCL_P2P_DISABLE=1"
    assert len(f.problems) == 1
    p = f.problems[0]
    assert p.startswith("NCCL chose SHM (through host memory) for GPU0-GPU1 (NV12) though NVLink connects them")
    assert "NCCL_P2P_LEVEL=NVL" in p and "ACS" in p and "IOMMU" in p and "NCCL_P2P_DISABLE" in p
    assert f.rows["channels"] == "2 coll, 0 NVLS"  # 2.21 prints the coll count as collnet: left out


def test_synthetic_shm_without_nvlink_is_a_warning_only():
    f = I.judge_nccl(synthetic_log("nccl_info_synthetic_shm_p2p_disabled_2gpu.txt"), two_gpu_topo("PIX"))
    assert not f.problems and "SHM) between GPU0-GPU1" in f.warnings[0]


def test_synthetic_nvls_on_nvswitch_with_the_real_h200_matrix():
    log = synthetic_log("nccl_info_synthetic_nvls_8gpu_nvswitch.txt")
    assert log.nvls_support == {d: True for d in range(8)} and log.summary["nvls"] == 16
    assert {c.kind for c in log.connections} == {"P2P/CUMEM"}
    f = I.judge_nccl(log, T.parse_topo((REAL / "topo_hgx_h200_12nic.txt").read_text(), "h200"))
    assert f.rows["GPU7 -> GPU0"] == "P2P/CUMEM/read, channel(s) 0-15, over NVLink (NV18)"
    assert f.rows["NVLS"].startswith("multicast available on dev 0-7; 16 NVLS channel(s) set up")
    assert "ring: 16 channel(s), intra-node NVL, inter-node PIX" in f.rows["graph search"]
    assert f.rows["channels"] == "32 coll, 16 NVLS"
    assert not f.problems and not f.warnings


def test_synthetic_two_nodes_net_ib_gdrdma_and_collnet():
    log = synthetic_log("nccl_info_synthetic_net_ib_collnet_2node.txt")
    assert log.nnodes == 2 and log.networks == ["IB"] and log.nvls_support == {0: False}
    assert sum(c.transport == "COLLNET" for c in log.connections) == 4
    f = I.judge_nccl(log)
    assert (
        f.rows["rank 1 -> rank 2 [send] (other node)"] == "NET/IB/0/GDRDMA, channel(s) 0; NET/IB/1/GDRDMA, channel(s) 1"
    )
    assert f.rows["CollNet rank 0 [send]"].startswith("COLLNET/SHARP/0/GDRDMA, channel(s) 0")
    assert f.rows["GPU0 -> GPU1"] == "P2P/IPC/read, channel(s) 0-1"
    assert "CollNet (in-network reduction, e.g. SHARP) is in use" in f.notes
    assert not f.problems and not f.warnings
    no_gdr = N.parse_nccl_log(
        (DATA / "nccl_info_synthetic_net_ib_collnet_2node.txt").read_text().replace("/GDRDMA", "")
    )
    assert any("GPUDirect RDMA is not used" in w for w in I.judge_nccl(no_gdr).warnings)


def test_synthetic_dgx1_ring_over_sys_though_an_nvlink_ring_exists():
    log = synthetic_log("nccl_info_synthetic_dgx1_ring_over_sys.txt")
    assert N.bracket_is_bus_id(log, 0, "6000") and log.ranks[4].bus_id == "85000"
    topo = T.parse_topo((DATA / "topo_synthetic_dgx1_v100_nvlink_cube_mesh.txt").read_text(), "dgx1")
    f = I.judge_nccl(log, topo)
    assert f.rows["GPU0 -> GPU5"].startswith("P2P/IPC, channel(s) 0-1, over PCIe (SYS")
    assert f.rows["GPU5 -> GPU4"] == "P2P/IPC, channel(s) 0-1, over NVLink (NV1)"
    assert len(f.problems) == 2
    assert f.problems[0].startswith(
        "NCCL chose P2P over PCIe for GPU0-GPU5 (SYS), GPU3-GPU6 (SYS) though a ring over NVLink alone exists"
    )
    assert "NCCL's topology search settled on SYS paths" in f.problems[1]
    assert "NCCL_P2P_LEVEL=NVL" in f.problems[0] and "NCCL_P2P_LEVEL" not in f.problems[1]  # fixes named once


def test_synthetic_pcie_hops_that_no_nvlink_ring_avoids_are_a_note():
    topo = T.parse_topo((DATA / "topo_synthetic_4gpu_two_nvlink_bridges_spaces.txt").read_text(), "bridges")
    lines = ["NCCL version 2.22.3+cuda12.6"] + [
        f"synthetic:1:1 [{a}] NCCL INFO Channel {ch:02d}/0 : {a}[{a}] -> {b}[{b}] via P2P/CUMEM"
        for ch in range(2)
        for a, b in ((0, 1), (1, 2), (2, 3), (3, 0))
    ]
    f = I.judge_nccl(N.parse_nccl_log("\n".join(lines), "synthetic"), topo)
    assert not f.problems
    assert any(
        n.startswith("GPU0-GPU3 (SYS), GPU1-GPU2 (SYS): no NVLink between these GPUs and no ring over NVLink")
        for n in f.notes
    )


def test_synthetic_network_between_gpus_of_one_node_is_a_problem():
    text = (
        (DATA / "nccl_info_synthetic_shm_p2p_disabled_2gpu.txt")
        .read_text()
        .replace("via SHM/direct/direct", "[send] via NET/Socket/0")
    )
    f = I.judge_nccl(N.parse_nccl_log(text, "synthetic net"), two_gpu_topo("NV12"))
    assert f.rows["GPU0 -> GPU1"].startswith("NET/Socket/0, channel(s) 0-1, through the network card")
    assert f.problems[0].startswith("NCCL chose NET/Socket (the network card) for GPU0-GPU1 (NV12)")
    g = I.judge_nccl(N.parse_nccl_log(text, "synthetic net"), two_gpu_topo("PHB"))
    assert "between GPUs of one node" in g.problems[0]


def test_synthetic_old_ring_lines_and_indirect_p2p():
    log = synthetic_log("nccl_info_synthetic_old_ring_lines.txt")
    assert [(c.src_rank, c.dst_rank, c.kind) for c in log.connections[:4]] == [
        (0, 1, "P2P/IPC"),
        (1, 2, "P2P/IPC"),
        (2, 3, "P2P/IPC"),
        (3, 0, "P2P/IPC"),
    ]
    ind = log.connections[4]
    assert (ind.kind, ind.via_rank, ind.conn_index) == ("P2P/indirect", 1, None)
    f = I.judge_nccl(log, T.parse_topo((REAL / "topo_4x_a100_sxm4_nv4.txt").read_text(), "nv4"))
    assert f.rows["GPU0 -> GPU2"] == "P2P/indirect/1[1], channel(s) 1, through an intermediate GPU"
    assert f.rows["GPU0 -> GPU1"] == "P2P/IPC, channel(s) 0, over NVLink (NV4)"


def test_line_prefixes_and_bus_ids():
    log = N.parse_nccl_log(
        "[rank3]: 2026-01-01 host:1:2 [3] NCCL INFO Channel 05/1 : 3[3] -> 4[4] via P2P/MNNVL/read\n"
        "NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0(1)/GDRDMA(PCI)/Shared\n"
        "NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/AWS Libfabric/0/GDRDMA\n"
    )
    assert [(c.channel, c.conn_index, c.kind, c.host) for c in log.connections] == [
        (5, 1, "P2P/MNNVL", "host"),
        (0, 0, "NET/IB", ""),
        (0, 0, "NET/AWS Libfabric", ""),
    ]
    assert N.normal_bus_id("00000000:4B:00.0") == N.normal_bus_id("0000:4b:00.0") == "4b000"
    assert N.ranges([0, 1, 2, 5, 7, 8]) == "0-2, 5, 7-8"


# --- doctor: files, exit codes, the live run ----------------------------------------------------


def test_doctor_files_exit_1_on_shm_over_nvlink(capsys, tmp_path):
    topo = tmp_path / "topo_synthetic_nv12.txt"
    topo.write_text(
        "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV12\t0-63\nGPU1\tNV12\t X \t0-63\n\nLegend:\n\n  NV#  = NVLinks\n"
    )
    code = cli.main(
        [
            "doctor",
            "--build-dir",
            str(tmp_path),
            "--json",
            "--topo-file",
            str(topo),
            "--nccl-log",
            str(DATA / "nccl_info_synthetic_shm_p2p_disabled_2gpu.txt"),
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["exit_code"] == 1
    assert out["sections"]["nccl path"]["GPU0 -> GPU1"].startswith("SHM/direct/direct")
    assert any("though NVLink connects them" in p for p in out["problems"])


def test_doctor_real_files_exit_0(capsys, tmp_path):
    code = cli.main(
        [
            "doctor",
            "--build-dir",
            str(tmp_path),
            "--topo-file",
            str(REAL / "topo_hgx_h200_12nic.txt"),
            "--nccl-log",
            str(DATA / "nccl_info_synthetic_nvls_8gpu_nvswitch.txt"),
        ]
    )
    assert code == 0
    assert "over NVLink (NV18)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "content,message", [(None, "cannot be read"), ("", "empty file"), ("just text\n", "no `NCCL INFO` line")]
)
def test_doctor_bad_nccl_log_exit_2(capsys, tmp_path, content, message):
    f = tmp_path / "nccl.log"
    if content is not None:
        f.write_text(content)
    code = cli.main(["doctor", "--build-dir", str(tmp_path), "--nccl-log", str(f)])
    err = capsys.readouterr().err
    assert code == 2 and f"--nccl-log {f}" in err and message in err and "Traceback" not in err


def test_live_run_command_uses_the_built_allreduce(stream_exe):
    cmd, what = I.find_allreduce(stream_exe.parents[2])
    assert what.endswith("triaudit_allreduce")
    if not Path(what).exists():
        pytest.skip("triaudit_allreduce not built (no NCCL)")
    # The real executable accepts the command and selects exactly one case: 1 MiB, fp32, NCCL's choice.
    listed = subprocess.run(
        [*cmd, "--benchmark_list_tests"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, CUDA_VISIBLE_DEVICES=""),
    )
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == ["allreduce/out_of_place/fp32/algo:auto/bytes:1048576/manual_time"]


def test_live_run_sets_nccl_debug_and_reads_the_output(tmp_path):
    # A stand-in for triaudit_allreduce that prints the real A100 log and the NCCL variables it got.
    exe = tmp_path / "benchmarks" / "allreduce" / "triaudit_allreduce"
    exe.parent.mkdir(parents=True)
    exe.write_text(
        f"#!/bin/sh\ncat '{A100_LOG}'\necho \"NCCL_DEBUG=$NCCL_DEBUG SUBSYS=$NCCL_DEBUG_SUBSYS ARGS=$*\" >&2\n"
    )
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    text, how = I.run_allreduce(tmp_path, 2)
    assert "NCCL_DEBUG=INFO SUBSYS=INIT,GRAPH,ENV" in text and "--gpus" not in text
    assert how.endswith("over 2 GPUs with NCCL_DEBUG=INFO (exit 0)")
    smi = [{"index": "0", "pci.bus_id": "00000000:A4:00.0"}, {"index": "1", "pci.bus_id": "00000000:A9:00.0"}]
    f = I.check(
        tmp_path,
        topo_file=None,
        nccl_log_file=None,
        live=True,
        smi_gpus=smi,
        nvlink_text="",
        run_nccl=True,
        visible_gpus=2,
    )
    assert f.rows["nccl path"]["GPU0 -> GPU1"] == "P2P/direct pointer/read, channel(s) 0-23"
    assert f.rows["nccl path"]["source"].startswith(str(exe))


def test_live_run_with_one_gpu_or_nothing_built(tmp_path):
    f = I.check(tmp_path, live=True, smi_gpus=[{"index": "0"}], run_nccl=True, visible_gpus=1)
    assert f.rows["nccl path"] == {"not checked": "one GPU visible: no GPU-to-GPU path"}
    env = dict(os.environ)
    try:
        os.environ["PATH"] = str(tmp_path)  # no all_reduce_perf either
        g = I.check(tmp_path, live=True, smi_gpus=[{"index": "0"}, {"index": "1"}], run_nccl=True, visible_gpus=2)
    finally:
        os.environ.clear()
        os.environ.update(env)
    assert "NCCL's path not checked" in g.rows["nccl path"]["not checked"]


def test_synthetic_pairs_outside_the_matrix_are_not_judged():
    # An 8-GPU log against a 2-GPU matrix: only GPU0-GPU1 can be judged.
    f = I.judge_nccl(synthetic_log("nccl_info_synthetic_nvls_8gpu_nvswitch.txt"), two_gpu_topo("NV12"))
    assert not f.problems
    assert f.rows["GPU0 -> GPU1"].endswith("over NVLink (NV12)")
    assert f.rows["GPU1 -> GPU2"].endswith("GPU1/GPU2 not in synthetic 2-GPU NV12")
    assert any(n.startswith("GPU0-GPU7, GPU1-GPU2, GPU2-GPU3") and "not judged" in n for n in f.notes)


def test_synthetic_shm_on_linked_and_unlinked_pairs_get_their_own_reasons():
    topo = T.parse_topo((DATA / "topo_synthetic_dgx1_v100_nvlink_cube_mesh.txt").read_text(), "dgx1")
    # SHM between 0-1 (NVLinked) and 0-5 (SYS), P2P elsewhere; all 8 GPUs in the communicator, so a ring
    # over NVLink alone exists (0-1-5-4-7-6-2-3).
    lines = [
        f"h:1:1 [0] NCCL INFO Channel 00 : {a}[{a}] -> {b}[{b}] via SHM/direct/direct" for a, b in ((0, 1), (0, 5))
    ]
    lines += [
        f"h:1:1 [0] NCCL INFO Channel 00/0 : {a}[{a}] -> {b}[{b}] via P2P/IPC"
        for a, b in ((1, 5), (5, 4), (4, 7), (7, 6), (6, 2), (2, 3), (3, 0))
    ]
    f = I.judge_nccl(N.parse_nccl_log("\n".join(lines), "synthetic"), topo)
    assert len(f.problems) == 2
    assert f.problems[0].startswith(
        "NCCL chose SHM (through host memory) for GPU0-GPU1 (NV1) though NVLink connects them"
    )
    assert f.problems[1].startswith(
        "NCCL chose SHM (through host memory) for GPU0-GPU5 though a ring over NVLink alone"
    )
