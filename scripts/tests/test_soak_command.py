"""`triaudit soak` end to end on this GPU-less machine, with a stand-in nvidia-smi and the TEST
DOUBLE of triaudit_soak (soak_double.py: synthetic windows on a virtual clock), and once with the
real executable and every device hidden: the exit codes, the run it writes and that every reader
reads it."""

from __future__ import annotations

import json
import os
import re

import pytest
import synthetic_soak as S
from soak_double import fake_nvidia_smi_on_path, fake_soak_build

from triaudit import commands as cli
from triaudit.results.table import load_results

UUIDS = [f"GPU-5a4e0000-0000-4000-8000-00000000000{i}" for i in range(4)]
GPUS = [(i, UUIDS[i], f"00000000:{0x18 + i:02X}:00.0", S.H200) for i in range(4)]


@pytest.fixture
def node(tmp_path, monkeypatch):
    """A synthetic node: the double built, nvidia-smi listing `gpus` first on PATH."""
    for k in list(os.environ):
        if k.startswith("SYNTHETIC_") or k == "CUDA_VISIBLE_DEVICES":
            monkeypatch.delenv(k)
    monkeypatch.setenv("TRIAUDIT_PLAIN_PROGRESS", "1")
    build = fake_soak_build(tmp_path)

    def make(gpus=GPUS, **env):
        monkeypatch.setenv("PATH", f"{fake_nvidia_smi_on_path(tmp_path, gpus)}:{os.environ['PATH']}")
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        return build

    return make


def soak(build, results, *args) -> int:
    return cli.main(["soak", "--build-dir", str(build), "--results", str(results), *args])


def the_run(results):
    [run] = [p for p in results.glob("*/*-soak") if p.is_dir()]
    return run, json.loads((run / "manifest.json").read_text())


def test_a_clean_soak_exits_0_and_is_a_run_every_reader_reads(node, tmp_path, capsys):
    build, results = node(GPUS[:2]), tmp_path / "results"
    assert soak(build, results, "--duration", "2h", "--window", "10m") == 0
    out = capsys.readouterr().out
    assert "[gpu1 12/12 2h00m00s] gemm" in out and "verdict: clean" in out
    run, manifest = the_run(results)
    assert run.parent.name == "nvidia-h200" and not (results / ".incoming").exists()
    assert manifest["mode"] == "soak" and manifest["complete"] is True and manifest["soak"]["events"] == []
    assert [g["executables"][0]["json"] for g in manifest["gpus"]] == [
        "triaudit_soak.gpu0.json",
        "triaudit_soak.gpu1.json",
    ]
    data = json.loads((run / "triaudit_soak.gpu0.json").read_text())
    gemm = [e for e in data["benchmarks"] if e["run_name"].startswith("soak/gemm/")]
    assert [e["repetition_index"] for e in gemm] == list(range(12)) and {e["repetitions"] for e in gemm} == {12}
    p2p = [e for e in data["benchmarks"] if e["run_name"].startswith("soak/copy/p2p/")]
    assert len(p2p) == 12  # two GPUs: each one's peer copies
    ctx = data["context"]
    assert ctx["soak_verdict"] == "clean" and json.loads(ctx["soak_events"]) == [] and ctx["soak_windows_done"] == "12"
    assert (run / "triaudit_soak.gpu0.hashes").read_text().count('"record": "window"') == 12
    table = load_results([results]).table
    rows = table[(table["corner"] == "soak") & (table["metric"] == "flops")]
    assert len(rows) == 2 and set(rows["reps"]) == {12} and set(rows["status"]) == {"ok"}
    assert rows["median"].iloc[0] == pytest.approx(S.RATES["gemm"], rel=0.002)
    assert cli.main(["compare", str(run / "triaudit_soak.gpu0.json"), str(run / "triaudit_soak.gpu1.json")]) == 0
    assert cli.main(["outliers", str(results)]) == 3  # two GPUs: too few to call one slow
    assert cli.main(["report", str(results), "--out", str(tmp_path / "report")]) == 0
    page = (tmp_path / "report" / "report.md").read_text()
    assert "## Soak: every GPU under every load, outputs checked bit for bit" in page


def test_one_flipped_bit_at_hour_3_exits_1_naming_the_gpu_the_hour_and_the_tile(node, tmp_path, capsys):
    build = node(GPUS, SYNTHETIC_FLIP=f"{UUIDS[2]}:18:3:7")
    results = tmp_path / "results"
    assert soak(build, results, "--duration", "6h", "--window", "10m") == 1
    out = capsys.readouterr().out
    run, manifest = the_run(results)
    [e] = manifest["soak"]["events"]
    assert (e["kind"], e["gpu_uuid"], e["gpu_index"], e["window"]) == ("sdc", UUIDS[2], "2", 18)
    assert e["hour"] == pytest.approx(3.083, abs=0.001)  # the middle of window 18 of ten minutes
    assert e["tiles"] == [{"tile": 3, "row0": 32, "rows": 32, "col0": 32, "cols": 32}]
    assert "SDC on GPU 2" in out and "tile 3 (rows 32-63, cols 32-63)" in out
    ctx = json.loads((run / "triaudit_soak.gpu2.json").read_text())["context"]
    assert json.loads(ctx["soak_events"])[0]["window"] == 18 and ctx["soak_verdict"].startswith("1 event(s)")
    assert json.loads((run / "triaudit_soak.gpu0.json").read_text())["context"]["soak_verdict"] == "clean"


def test_a_four_percent_fall_with_steady_power_is_a_drift(node, tmp_path):
    build = node(GPUS[:1], SYNTHETIC_FALL=f"{UUIDS[0]}:60:0.04")
    assert soak(build, tmp_path / "r", "--duration", "2h", "--window", "1m") == 1
    _, manifest = the_run(tmp_path / "r")
    [e] = manifest["soak"]["events"]
    assert e["kind"] == "drift" and 60 <= e["window"] < 65 and e["case"] == S.GEMM_CASE
    fell = float(re.search(r"gemm fell ([0-9.]+) %", e["detail"]).group(1))
    assert 3.5 < fell < 4.5 and "power +0.0 %" in e["detail"] and "bound 3 %" in e["detail"]


def test_a_critical_xid_is_an_event(node, tmp_path):
    build = node(GPUS[:1], SYNTHETIC_XID=f"{UUIDS[0]}:4")
    assert soak(build, tmp_path / "r", "--duration", "10m", "--window", "1m") == 1
    _, manifest = the_run(tmp_path / "r")
    assert [(e["kind"], e["window"]) for e in manifest["soak"]["events"]] == [("xid", 4)]


def test_one_gpu_cuda_cannot_use_is_an_error_not_a_quiet_gap(node, tmp_path):
    build = node(GPUS[:2], SYNTHETIC_NO_GPU_UUID=UUIDS[1])
    assert soak(build, tmp_path / "r", "--duration", "10m", "--window", "1m") == 1
    _, manifest = the_run(tmp_path / "r")
    [e] = manifest["soak"]["events"]
    assert (e["kind"], e["gpu_uuid"]) == ("error", UUIDS[1]) and "ended with exit 77" in e["detail"]
    assert "no CUDA device (synthetic: no device here)" in e["detail"]
    assert manifest["complete"] is False and "GPU 1: 0 of 10 windows finished" in manifest["soak"]["notes"]


def test_hashes_written_on_another_gpu_are_not_judged_and_say_so(node, tmp_path):
    build = node(GPUS[:1], SYNTHETIC_REPORT_UUID="GPU-ffffffff-0000-4000-8000-000000000000")
    assert soak(build, tmp_path / "r", "--duration", "10m", "--window", "1m") == 1
    _, manifest = the_run(tmp_path / "r")
    [e] = manifest["soak"]["events"]
    assert e["kind"] == "error" and "not on this GPU: its hashes are not judged" in e["detail"]


def test_no_gpu_exits_77_with_a_clear_message_and_writes_nothing(node, tmp_path, capsys):
    build, results = node([], SYNTHETIC_NO_GPU="1"), tmp_path / "results"
    assert soak(build, results, "--duration", "1h") == 77
    err = capsys.readouterr().err
    assert "triaudit soak: no CUDA device (synthetic: no device here): nothing soaked, nothing written" in err
    assert not any(p for p in results.rglob("*") if p.is_file())


def test_the_real_executable_with_every_device_hidden_exits_77(tmp_path, capsys, monkeypatch):
    from conftest import _build_dir

    exe = _build_dir() / "benchmarks" / "soak" / "triaudit_soak"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # also on a machine with a GPU
    assert soak(_build_dir(), tmp_path / "results", "--duration", "1h") == 77
    err = capsys.readouterr().err
    assert err.startswith("triaudit soak: no CUDA device (") and "nothing soaked, nothing written" in err


@pytest.mark.parametrize(
    "args, said",
    [
        ([], "--duration is needed"),
        (["--duration", "1h", "--drift-bound", "120"], "--drift-bound 120: a percentage below 100"),
        (["--duration", "1h", "--gpus", "7"], "--gpus: no GPU 7"),
        (["--duration", "1h", "--gpus", "0,zero"], "'zero' is not a GPU index"),
        (["--duration", "0.5s"], "a window of 0.5 s: at least 1 s"),
        (["--duration", "30d", "--window", "1s"], "2592000 windows: at most 1,000,000; make the window longer"),
        (["--resume", "no-such-soak"], "no-such-soak: no such checkpoint (give a soak's folder"),
        (["--resume"], "--resume: no unfinished soak of"),
    ],
)
def test_bad_input_is_exit_2_naming_it(node, tmp_path, capsys, args, said):
    build = node(GPUS[:1])
    assert soak(build, tmp_path / "r", *args) == 2
    assert said in capsys.readouterr().err


@pytest.mark.parametrize("value", ["5x", "-1h", "0", "400d"])
def test_a_bad_duration_is_refused_by_the_parser(node, tmp_path, capsys, value):
    with pytest.raises(SystemExit) as e:
        soak(node(GPUS[:1]), tmp_path / "r", "--duration", value)
    assert e.value.code == 2 and "--duration" in capsys.readouterr().err


def test_a_results_path_that_is_a_file_is_refused(node, tmp_path, capsys):
    (tmp_path / "r").write_text("mine")
    assert soak(node(GPUS[:1]), tmp_path / "r", "--duration", "1h") == 2
    assert (tmp_path / "r").read_text() == "mine" and "is a file, not a folder" in capsys.readouterr().err
