"""Whole-node mode (`triaudit run --all-gpus`) with a stand-in nvidia-smi and stand-in executables
(synthetic_fleet.py), and once with the real executables on this GPU-less machine."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from synthetic_fleet import fake_build, fake_nvidia_smi

from triaudit.fleet import node_run as FR
from triaudit.results.status import read_statuses
from triaudit.runner import suite as runner

UUIDS = [f"GPU-{c * 8}-0000-4000-8000-{c * 12}" for c in "abcd"]
GPUS = [(i, UUIDS[i], f"00000000:{0x18 + i:02X}:00.0", "NVIDIA H100 80GB HBM3") for i in range(4)]


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES" and not k.startswith("SYNTHETIC_")}
    env.update(extra)
    return env


def _run(tmp_path: Path, gpus=None, env=None, smi=None, build=None, **setup):
    build = build or fake_build(tmp_path)
    smi = smi or fake_nvidia_smi(tmp_path, GPUS)
    results = tmp_path / "results"
    s = FR.Setup(build, results, "quick", gpus=gpus, **setup)
    lines: list[str] = []
    out = FR.run_all_gpus(s, lines.append, nvidia_smi=str(smi), env=env or _env())
    return out, results, lines


def _contexts(run_dir: Path) -> dict[str, dict]:
    return {f.name: json.loads(f.read_text())["context"] for f in run_dir.glob("*.json") if f.name != "manifest.json"}


def test_every_gpu_at_once_one_file_per_executable_per_gpu(tmp_path):
    out, results, _ = _run(tmp_path)
    assert out.exit_code == 0, out.message
    run_dir = out.run_dir
    assert run_dir.parent.name == "synthetic-gpu"  # filed under the card, as `triaudit run` does
    ctx = _contexts(run_dir)
    assert sorted(ctx) == sorted(
        [f"triaudit_{e}.gpu{i}.json" for e in ("stream", "gemm", "gemm_ladder") for i in range(4)]
        + ["triaudit_allreduce.node.json"]
    )
    for i in range(4):
        c = ctx[f"triaudit_stream.gpu{i}.json"]
        assert c["cuda_visible_devices"] == UUIDS[i]  # pinned by UUID, not by CUDA's own order
        assert c["gpu_index"] == str(i)
        assert c["siblings_loaded"] == "true"
        assert "--bind-numa=on" in c["argv"]
    # All at once: every GPU's first executable started before any of them ended.
    firsts = [ctx[f"triaudit_stream.gpu{i}.json"] for i in range(4)]
    assert max(c["started"] for c in firsts) < min(c["ended"] for c in firsts)
    node = ctx["triaudit_allreduce.node.json"]
    assert node["cuda_visible_devices"] == ",".join(UUIDS)
    assert node["gpu_index"] == "(unset)" and node["siblings_loaded"] == "false"
    assert "--bind-numa" not in node["argv"]

    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["complete"] is True and manifest["mode"] == "all-gpus"
    assert [(g["index"], g["uuid"], g["pci_bus_id"]) for g in manifest["gpus"]] == [(i, u, b) for i, u, b, _ in GPUS]
    assert all(e["uuid_check"] == "ok" for g in manifest["gpus"] for e in g["executables"])
    assert len(manifest["executables"]) == 13  # stream, gemm and the GEMM ladder on 4 GPUs, allreduce once

    [status] = read_statuses(results)
    assert status["state"] == "complete" and status["exit_code"] == 0
    assert status["run_dir"] == str(run_dir.relative_to(results))
    assert status["gpus_measured"] == [0, 1, 2, 3]
    assert not (results / ".incoming").exists()


def test_bind_numa_off_reaches_every_per_gpu_process(tmp_path):
    """`triaudit run --all-gpus --bind-numa off` (it was dropped: every process got --bind-numa=on)."""
    out, _, _ = _run(tmp_path, bind_numa="off")
    assert out.exit_code == 0, out.message
    ctx = _contexts(out.run_dir)
    for i in range(4):
        argv = ctx[f"triaudit_stream.gpu{i}.json"]["argv"]
        assert "--bind-numa=off" in argv and "--bind-numa=on" not in argv


def test_gpus_option_picks_some(tmp_path):
    out, _, _ = _run(tmp_path, gpus=[0, 3])
    assert out.exit_code == 0, out.message
    names = sorted(f.name for f in out.run_dir.glob("triaudit_stream.*.json"))
    assert names == ["triaudit_stream.gpu0.json", "triaudit_stream.gpu3.json"]
    node = _contexts(out.run_dir)["triaudit_allreduce.node.json"]
    assert node["cuda_visible_devices"] == f"{UUIDS[0]},{UUIDS[3]}"


def test_unknown_gpu_index_is_refused_and_recorded(tmp_path):
    out, results, _ = _run(tmp_path, gpus=[7])
    assert out.exit_code == 2
    assert "--gpus: no GPU 7" in out.message and "visible: 0, 1, 2, 3" in out.message
    [status] = read_statuses(results)
    assert status["state"] == "bad setup" and status["exit_code"] == 2


def test_inherited_cuda_visible_devices_restricts(tmp_path):
    out, _, _ = _run(tmp_path, env=_env(CUDA_VISIBLE_DEVICES=f"2,{UUIDS[1][:10]}"))
    assert out.exit_code == 0, out.message
    assert sorted(f.name for f in out.run_dir.glob("triaudit_stream.*.json")) == [
        "triaudit_stream.gpu1.json",
        "triaudit_stream.gpu2.json",
    ]
    bad, _, _ = _run(tmp_path / "b", env=_env(CUDA_VISIBLE_DEVICES="5"))
    assert bad.exit_code == 2 and "'5' names no GPU nvidia-smi lists" in bad.message


def test_no_gpu_records_the_host_and_never_overwrites(tmp_path):
    build = fake_build(tmp_path)
    for _ in range(2):
        out, results, _ = _run(
            tmp_path, build=build, smi=tmp_path / "no-such-nvidia-smi", env=_env(SYNTHETIC_NO_GPU="1")
        )
        assert out.exit_code == 77 and out.run_dir is None
        assert "no CUDA device (synthetic: no device here)" in out.message
        assert "nvidia-smi not found" in out.message
    statuses = read_statuses(results)
    assert len(statuses) == 2 and len({s["status_file"] for s in statuses}) == 2
    assert all(s["state"] == "no CUDA device" and s["exit_code"] == 77 for s in statuses)
    assert sorted(p.name for p in results.iterdir()) == ["hosts"]  # nothing else written


def test_empty_cuda_visible_devices_means_no_gpu(tmp_path):
    out, results, _ = _run(tmp_path, env=_env(CUDA_VISIBLE_DEVICES=""))
    assert out.exit_code == 77
    assert "CUDA_VISIBLE_DEVICES is set and empty" in out.message
    assert read_statuses(results)[0]["state"] == "no CUDA device"


def test_one_failing_gpu_is_named(tmp_path):
    out, results, _ = _run(tmp_path, env=_env(SYNTHETIC_FAIL_UUID=UUIDS[2]))
    assert out.exit_code == 1
    assert "triaudit_stream (gpu2) exit 1" in out.message and "gpu1" not in out.message
    assert (out.run_dir / "triaudit_stream.gpu2.json").exists()  # what it wrote is kept
    assert read_statuses(results)[0]["state"] == "failed"


def test_result_naming_another_gpu_is_a_failure(tmp_path):
    out, _, _ = _run(tmp_path, gpus=[1], env=_env(SYNTHETIC_REPORT_UUID=UUIDS[0]))
    assert out.exit_code == 1
    assert f"MISMATCH: the context names {UUIDS[0]}, expected {UUIDS[1]}" in out.message


def test_two_runs_in_the_same_second_get_two_folders(tmp_path):
    build, smi = fake_build(tmp_path), fake_nvidia_smi(tmp_path, GPUS[:1])
    a, _, _ = _run(tmp_path, build=build, smi=smi, env=_env(SYNTHETIC_SLEEP_S="0"))
    b, results, _ = _run(tmp_path, build=build, smi=smi, env=_env(SYNTHETIC_SLEEP_S="0"))
    assert a.exit_code == b.exit_code == 0
    assert a.run_dir != b.run_dir and a.run_dir.exists() and b.run_dir.exists()
    assert len(read_statuses(results)) == 2


def test_budget_spent_leaves_the_rest_not_started(tmp_path):
    out, _, _ = _run(tmp_path, budget_s=FR.runner.MIN_START_S + 0.3, env=_env(SYNTHETIC_SLEEP_S="0.6"))
    assert out.exit_code == 1
    manifest = json.loads((out.run_dir / "manifest.json").read_text())
    assert manifest["complete"] is False
    assert "triaudit_gemm (gpu0)" in manifest["not_started"] and "triaudit_allreduce" in manifest["not_started"]


def test_real_executables_without_gpu_record_cudas_reason(tmp_path, stream_exe, no_gpu_json):
    """The built suite on this GPU-less machine: nvidia-smi finds nothing, CUDA says why, exit 77."""
    build = stream_exe.parents[2]
    # Devices hidden as the no_gpu_json fixture hides them: the same answer on a machine with a GPU.
    out, results, _ = _run(
        tmp_path, build=build, smi=tmp_path / "no-such-nvidia-smi", only=["stream"], env=_env(CUDA_VISIBLE_DEVICES="")
    )
    assert out.exit_code == 77, out.message
    [status] = read_statuses(results)
    assert status["state"] == "no CUDA device"
    said = json.loads(no_gpu_json.read_text())["context"]["gpu_unavailable_reason"]
    assert status["reason"] == f"no CUDA device ({said})"  # the executable's own words, whole


@pytest.mark.parametrize(
    "text, problem",
    [("0,x", "'x' is not a GPU index"), ("1,1", "GPU 1 named twice"), ("-1", "'-1' is not a GPU index")],
)
def test_bad_gpu_list(text, problem):
    with pytest.raises(FR.SetupError, match=problem):
        FR.parse_gpu_list(text)


def test_nvidia_smi_lines():
    gpus = FR.parse_nvidia_smi(
        "0, GPU-a, 00000000:18:00.0, NVIDIA H100 80GB HBM3\n1, GPU-b, 00000000:2A:00.0, NVIDIA H100, custom\n\n"
    )
    assert [(g.index, g.uuid, g.pci_bus_id, g.name) for g in gpus] == [
        (0, "GPU-a", "00000000:18:00.0", "NVIDIA H100 80GB HBM3"),
        (1, "GPU-b", "00000000:2A:00.0", "NVIDIA H100, custom"),
    ]
    with pytest.raises(FR.SetupError, match="not index, uuid, pci.bus_id, name"):
        FR.parse_nvidia_smi("No devices were found\n")


def test_cli_all_gpus(tmp_path, stream_exe, capsys, monkeypatch):
    from triaudit import commands as cli

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # every device hidden, also on a machine with a GPU
    build = stream_exe.parents[2]
    assert cli.main(["run", "--gpus", "0", "--build-dir", str(build), "--results", str(tmp_path)]) == 2
    assert "--gpus picks GPUs for --all-gpus" in capsys.readouterr().err
    assert (
        cli.main(["run", "--all-gpus", "--gpus", "0,zero", "--build-dir", str(build), "--results", str(tmp_path)]) == 2
    )
    assert "'zero' is not a GPU index" in capsys.readouterr().err
    code = cli.main(["run", "--all-gpus", "--only", "stream", "--build-dir", str(build), "--results", str(tmp_path)])
    assert code == 77
    assert "no CUDA device" in capsys.readouterr().out
    assert [s["state"] for s in read_statuses(tmp_path)] == ["no CUDA device"]


def test_sigterm_keeps_the_partial_run_and_records_it(tmp_path):
    """A Slurm time limit or scancel arrives as SIGTERM: every GPU's process is stopped, what was
    measured is kept (marked incomplete) and the host's status says interrupted."""
    import signal
    import subprocess
    import sys
    import time

    from conftest import REPO

    build = fake_build(tmp_path)
    smi = fake_nvidia_smi(tmp_path, GPUS[:2])
    bindir = tmp_path / "synthetic-bin"
    bindir.mkdir()
    (bindir / "nvidia-smi").symlink_to(smi)
    env = _env(
        PATH=f"{bindir}:{os.environ['PATH']}",
        PYTHONPATH=str(REPO / "scripts"),
        SYNTHETIC_SLEEP_S="0.1",
        SYNTHETIC_SLOW_EXE="triaudit_gemm",
    )
    results = tmp_path / "results"
    p = subprocess.Popen(
        [sys.executable, "-m", "triaudit", "run", "--all-gpus", "--build-dir", str(build), "--results", str(results)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(list(results.rglob("triaudit_gemm.gpu*.log"))) < 2:
            time.sleep(0.1)
        time.sleep(0.3)
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, out
    [status] = read_statuses(results)
    assert status["state"] == "interrupted" and status["run_dir"]
    run_dir = results / status["run_dir"]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["complete"] is False
    assert sorted(f.name for f in run_dir.glob("triaudit_stream.gpu*.json")) == [
        "triaudit_stream.gpu0.json",
        "triaudit_stream.gpu1.json",
    ]
    assert "triaudit_allreduce" in manifest["not_started"]


def test_fleet_modules_need_no_third_party_package():
    """What runs on the nodes (fleet_run, slurm_job) and the parsers of `run`, `slurm` and `outliers`
    import no pandas/matplotlib/numpy: nodes have only their system python3."""
    import subprocess
    import sys

    from conftest import REPO

    code = (
        "import sys\n"
        "for m in ('pandas', 'matplotlib', 'numpy'): sys.modules[m] = None  # any import of them fails\n"
        "from triaudit import commands as cli\n"
        "from triaudit.fleet import node_run, slurm_job, slurm\n"
        "from triaudit.results import status\n"
        "cli.build_parser().parse_args(['run', '--all-gpus', '--gpus', '0,3'])\n"
        "cli.build_parser().parse_args(['slurm', 'collect', '12'])\n"
        "cli.build_parser().parse_args(['outliers', 'x'])\n"
        "print('ok')\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(REPO / "scripts")),
    )
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


def test_no_device_reason_keeps_nested_parentheses():
    # The line triaudit_stream prints on this machine (no driver), as of the lead's loader change.
    line = (
        "triaudit_stream: no CUDA device (no NVIDIA driver found (libcuda.so.1 not loadable)): every case is "
        "reported as skipped; exit code 77"
    )
    assert runner.no_device_reason(line) == "no CUDA device (no NVIDIA driver found (libcuda.so.1 not loadable))"
    assert (
        runner.no_device_reason("x: no CUDA device (cudaErrorNoDevice: no CUDA-capable device is detected): y")
        == "no CUDA device (cudaErrorNoDevice: no CUDA-capable device is detected)"
    )
    assert runner.no_device_reason("nothing said") == "no CUDA device"


def test_plain_run_says_the_whole_no_device_reason(tmp_path, stream_exe, no_gpu_json, monkeypatch):
    """`triaudit run` (runner.py) reads the same line: its message must keep the reason whole too."""
    from triaudit.runner import suite as runner

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    out = runner.run_suite(stream_exe.parents[2], tmp_path, "quick", ["stream"], log=lambda m: None)
    said = json.loads(no_gpu_json.read_text())["context"]["gpu_unavailable_reason"]
    assert out.exit_code == 77
    assert out.message == f"no CUDA device ({said}): nothing measured, nothing written"


def test_a_hang_on_one_gpu_is_stopped_at_its_time_model_limit(tmp_path, monkeypatch):
    """No --timeout-s, no --budget-s (triaudit.sbatch's default): each executable still has the
    time model's limit, so a hung GEMM does not hold the chain until the scheduler kills the job."""
    asked = []

    def limit(step, cases, args, gpu_name, gpus, descriptions=None):
        asked.append((step, gpu_name, gpus))
        return 2.0, "synthetic: the time model's estimate x 3 + 30 s"

    monkeypatch.setattr(FR.runner, "step_limit", limit)
    out, _, _ = _run(tmp_path, gpus=[0], env=_env(SYNTHETIC_SLOW_EXE="triaudit_gemm", SYNTHETIC_SLEEP_S="0"))
    manifest = json.loads((out.run_dir / "manifest.json").read_text())
    entries = [e for g in manifest["gpus"] for e in g["executables"]]
    gemm = next(e for e in entries if e["step"] == "triaudit_gemm")
    assert gemm["limit_s"] == 2.0 and gemm["seconds"] < 20
    assert ("triaudit_gemm", "NVIDIA H100 80GB HBM3", 1) in asked
    # The chain went on after the hang: the stream case before it and the allreduce after it ran.
    assert any(e["step"] == "triaudit_stream" and e["exit_code"] == 0 for e in entries)
    assert any(n["step"] == "triaudit_allreduce" for n in manifest.get("node_level", {}).get("executables", []))
