"""A soak stopped by a reboot or a signal resumes from its checkpoint (soak/checkpoint.py) and
its series goes on without a window twice; with the TEST DOUBLE of triaudit_soak
(soak_double.py) and synthetic segments (not measurements)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import synthetic_soak as S
from soak_double import fake_nvidia_smi_on_path, fake_soak_build

from triaudit import commands as cli
from triaudit.soak import checkpoint as C
from triaudit.soak import session
from triaudit.soak.merge import merge
from triaudit.soak.plan import SoakGpu

UUID = "GPU-5a4e0000-0000-4000-8000-00000000000a"
GPU = SoakGpu(0, UUID, "00000000:18:00.0", S.H200)


def checkpoint(windows=6, gpus=(GPU,)) -> C.Checkpoint:
    return C.Checkpoint(
        "node", "node", "20260101T000000Z", 1_767_225_600.0, windows * 600.0, 600.0, windows, 3.0, "b", [], list(gpus)
    )


@pytest.mark.parametrize(
    "done, plan",
    [(set(), (0, 6)), ({0, 1, 2}, (3, 3)), ({0, 1, 3}, (4, 2)), ({2}, (3, 3))],
)
def test_the_next_segment_starts_after_the_last_finished_window(done, plan):
    assert C.next_segment(checkpoint(), {UUID: done}) == {UUID: plan}


def test_a_gpu_with_every_window_done_runs_no_more():
    other = SoakGpu(1, "GPU-other", "00000000:19:00.0", S.H200)
    assert C.next_segment(checkpoint(gpus=(GPU, other)), {UUID: set(range(6)), "GPU-other": {0}}) == {
        "GPU-other": (1, 5)
    }


def _segment_file(path, first, windows, start=1_767_225_600.0):
    entries = [
        S.entry(S.CASES[k], w, start + 600 * (w + 1), start, S.RATES[k])
        for w in range(first, first + windows)
        for k in ("gemm", "triad")
    ]
    path.write_text(json.dumps({"context": S.context(UUID, 0), "benchmarks": entries}))
    return path


def test_merged_segments_hold_each_window_once_as_a_repetition(tmp_path):
    a = _segment_file(tmp_path / "s0.synthetic.json", 0, 3)
    b = _segment_file(tmp_path / "s1.synthetic.json", 2, 4)  # window 2 again: a segment that overlaps
    m = merge([(0, a), (2, b)])
    gemm = [e for e in m.entries if e["run_name"].startswith("soak/gemm/")]
    assert [e["repetition_index"] for e in gemm] == [0, 1, 2, 3, 4, 5] and {e["repetitions"] for e in gemm} == {6}
    assert m.windows[S.GEMM_CASE] == [0, 1, 2, 3, 4, 5]
    assert any("window 2 was already written by an earlier segment: kept once" in n for n in m.notes)


@pytest.fixture
def env(tmp_path, monkeypatch):
    for k in list(os.environ):
        if k.startswith("SYNTHETIC_") or k == "CUDA_VISIBLE_DEVICES":
            monkeypatch.delenv(k)
    monkeypatch.setenv("TRIAUDIT_PLAIN_PROGRESS", "1")
    monkeypatch.setenv(
        "PATH", f"{fake_nvidia_smi_on_path(tmp_path, [(0, UUID, GPU.pci_bus_id, S.H200)])}:{os.environ['PATH']}"
    )
    monkeypatch.setenv("SYNTHETIC_ARGV_LOG", str(tmp_path / "argv.jsonl"))
    return tmp_path


def _rebooted(tmp_path):
    """A soak whose node lost power after 3 of its 6 windows: its checkpoint says segment 0 is
    running, the double left its result file .partial and 3 windows in its hash log."""
    build, results = fake_soak_build(tmp_path), tmp_path / "results"
    folder, ck = session.new_soak(results, build, [GPU], 3600, 600, 3.0, [], "node")
    ck.segments.append(C.Segment(0, C.utc_stamp(), {UUID: 0}, {UUID: 6}, {UUID: None}))
    ck.save(folder)
    json_path = C.segment_paths(folder, GPU, 0)[0]
    cmd = session.process_command(session.find_executable(build), json_path, ck, 0, 6, False)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=UUID, SYNTHETIC_STOP_AFTER="3")
    assert subprocess.run(cmd, env=env, capture_output=True, timeout=60).returncode == 137
    assert json_path.with_name(json_path.name + ".partial").exists() and not json_path.exists()
    return build, results, folder, ck


@pytest.mark.parametrize("how", ["folder", "auto"])
def test_resume_after_a_reboot_continues_the_series_without_duplicating(env, monkeypatch, how):
    monkeypatch.setattr("triaudit.fleet.node_run.node_name", lambda: "node")
    build, results, folder, ck = _rebooted(env)
    # auto: as scripts/slurm/soak.sbatch runs it again after a requeue, with its options again
    args = [str(folder)] if how == "folder" else ["--results", str(results), "--duration", "1h", "--window", "10m"]
    assert cli.main(["soak", "--resume", *args, "--results", str(results)]) == 0
    calls = [json.loads(line) for line in (env / "argv.jsonl").read_text().splitlines()]
    assert len(calls) == 2
    resumed = calls[1]
    assert "--first-window=3" in resumed and "--windows=3" in resumed
    assert f"--soak-start-unix={ck.start_unix:.3f}" in resumed  # the same clock: elapsed time goes on
    [run] = list(results.glob("nvidia-h200/*-soak"))
    data = json.loads((run / "triaudit_soak.gpu0.json").read_text())
    for case in (S.GEMM_CASE, S.TRIAD_CASE):
        reps = [e["repetition_index"] for e in data["benchmarks"] if e["run_name"].startswith(case)]
        assert reps == [0, 1, 2, 3, 4, 5], case
    assert data["context"]["soak_segments"] == "2" and data["context"]["soak_windows_done"] == "6"
    text = (run / "triaudit_soak.gpu0.hashes").read_text()
    assert text.count('"record": "reference"') == 2 and text.count('"record": "window"') == 6
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["complete"] is True and manifest["soak"]["segments"] == 2 and manifest["soak"]["events"] == []
    assert C.Checkpoint.load(run).finished is True
    assert (run / ".segments" / "triaudit_soak.gpu0.s0.json").exists()  # the .partial, made whole
    assert cli.main(["soak", "--resume", str(run)]) == 2  # finished: nothing to resume


def test_resume_refuses_another_duration_and_other_arguments(env, capsys):
    build, results, folder, _ = _rebooted(env)
    assert cli.main(["soak", "--resume", str(folder), "--duration", "2h", "--results", str(results)]) == 2
    assert "the soak being resumed runs 1h; leave it out" in capsys.readouterr().err
    assert cli.main(["soak", "--resume", str(folder), "--results", str(results), "--", "--gemm-level=5"]) == 2
    assert "--gemm-level=5: the soak being resumed runs with no arguments" in capsys.readouterr().err


def test_sigterm_keeps_the_soak_resumable_and_says_how(env):
    from conftest import REPO

    build, results = fake_soak_build(env), env / "results"
    child_env = dict(os.environ, PYTHONPATH=str(REPO / "scripts"), SYNTHETIC_WINDOW_SLEEP_S="0.4")
    cmd = [
        sys.executable,
        "-m",
        "triaudit",
        "soak",
        "--duration",
        "1h",
        "--window",
        "10m",
        "--build-dir",
        str(build),
        "--results",
        str(results),
    ]
    p = subprocess.Popen(cmd, env=child_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        logs = list((results / ".incoming").glob("soak-*/.segments/*.hashes"))
        if logs and logs[0].read_text().count('"record": "window"') >= 2:
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "Traceback" not in err and "triaudit soak --resume" in err
    [folder] = list((results / ".incoming").glob("soak-*"))
    ck = C.Checkpoint.load(folder)
    assert not ck.finished and ck.segments[0].exit_codes == {UUID: None}
    done = C.windows_done(folder, ck)[UUID]
    assert 2 <= len(done) < 6
    assert cli.main(["soak", "--resume", str(folder), "--results", str(results)]) == 0
    [run] = list(results.glob("nvidia-h200/*-soak"))
    data = json.loads((run / "triaudit_soak.gpu0.json").read_text())
    reps = [e["repetition_index"] for e in data["benchmarks"] if e["run_name"].startswith(S.GEMM_CASE)]
    assert reps == sorted(set(reps)) and reps[-1] == 5 and len(reps) >= 5  # on, once each; a cut window may be a gap


def test_a_long_soak_runs_one_process_after_another_each_window_once(env, monkeypatch):
    from triaudit.soak import plan

    monkeypatch.setattr(plan, "MAX_WINDOWS_PER_PROCESS", 4)
    build, results = fake_soak_build(env), env / "results"
    assert (
        cli.main(["soak", "--duration", "10m", "--window", "1m", "--build-dir", str(build), "--results", str(results)])
        == 0
    )
    calls = [json.loads(line) for line in (env / "argv.jsonl").read_text().splitlines()]
    assert [(c[1], c[2]) for c in calls] == [
        ("--windows=4", "--first-window=0"),
        ("--windows=4", "--first-window=4"),
        ("--windows=2", "--first-window=8"),
    ]
    [run] = list(results.glob("nvidia-h200/*-soak"))
    data = json.loads((run / "triaudit_soak.gpu0.json").read_text())
    reps = [e["repetition_index"] for e in data["benchmarks"] if e["run_name"].startswith(S.GEMM_CASE)]
    assert reps == list(range(10)) and data["context"]["soak_segments"] == "3"
    assert (run / "triaudit_soak.gpu0.hashes").read_text().count('"record": "reference"') == 3


def test_a_gpu_whose_process_stopped_short_is_not_restarted(env, monkeypatch):
    from triaudit.soak import plan

    monkeypatch.setattr(plan, "MAX_WINDOWS_PER_PROCESS", 4)
    monkeypatch.setenv("SYNTHETIC_STOP_AFTER", "2")
    build, results = fake_soak_build(env), env / "results"
    assert (
        cli.main(["soak", "--duration", "10m", "--window", "1m", "--build-dir", str(build), "--results", str(results)])
        == 1
    )
    assert len((env / "argv.jsonl").read_text().splitlines()) == 1
    [run] = list(results.glob("nvidia-h200/*-soak"))
    manifest = json.loads((run / "manifest.json").read_text())
    [e] = manifest["soak"]["events"]
    assert e["kind"] == "error" and "ended with exit 137" in e["detail"] and manifest["complete"] is False
