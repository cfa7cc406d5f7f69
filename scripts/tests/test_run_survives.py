"""What `triaudit run` keeps when an executable is killed, hangs or fails (the integrity issue), with
stand-in executables (synthetic: made-up numbers, not measurements) that write their result file
the way the real ones do (benchmarks/common/result_file.hpp: each finished case appended to
<file>.partial, renamed to <file> when whole)."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from triaudit import commands as cli
from triaudit.runner import child
from triaudit.runner import suite as runner

FAKE = r"""#!{python}
# Synthetic stand-in for a triaudit executable (test fixture, not a measurement).
import json, os, signal, subprocess, sys, time
name = os.path.basename(sys.argv[0])
cases = [f"stream/copy/fp32/cache:cold/bytes:{{1 << (20 + i)}}" for i in range(4)]
if "--benchmark_list_tests" in sys.argv:
    print("\n".join(cases)); sys.exit(0)
env = lambda k: os.environ.get(f"SYNTHETIC_{{name.upper()}}_{{k}}", "")
if env("SAY"):
    print(env("SAY"), file=sys.stderr); sys.exit(int(env("EXIT") or 2))
if env("NO_DEVICE"):
    print(name + ": no CUDA device (synthetic: none here): every case is reported as skipped; exit code 77")
    sys.exit(77)
out = next(a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--benchmark_out="))
partial = out + ".partial"
f = open(partial, "w")
def write(text):
    f.write(text); f.flush(); os.fsync(f.fileno())
write('{{\n  "context": {{"gpu_available": "true", "gpu_name": "Synthetic GPU", "executable": "%s", "synthetic": "true"}},\n  "benchmarks": [\n' % name)
def case(i):
    return json.dumps({{"name": cases[i] + "/manual_time", "run_name": cases[i] + "/manual_time", "run_type": "iteration",
                       "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 1, "real_time": 10.0,
                       "cpu_time": 10.0, "time_unit": "us", "bytes_per_second": 2.0e11 * (1 + i),
                       "bytes_per_op": 2.0 * (1 << (20 + i))}})
done = int(env("DONE") or 4)
for i in range(done):
    write(("" if i == 0 else ",\n") + "    " + case(i))
    print(cases[i] + "/manual_time 10.0 us", flush=True)
if env("HANG"):
    kid = subprocess.Popen(["sleep", "300"])  # a child of its own, as the NCCL-choice probe is
    open(env("HANG"), "w").write(str(kid.pid))
    def term(sig, frame):
        print("synthetic: SIGTERM received", flush=True); sys.exit(143)
    signal.signal(signal.SIGTERM, signal.SIG_IGN if env("IGNORE_TERM") else term)
    write(",\n    " + case(done)[: 40])  # the case running when it is stopped: half written
    while True:
        time.sleep(1)
write("\n  ]\n}}\n"); f.close()
os.rename(partial, out)
sys.exit(0)
"""


def _build(root: Path, names=("triaudit_stream", "triaudit_gemm")) -> Path:
    build = root / "synthetic-build"
    for n in names:
        p = build / "benchmarks" / n.removeprefix("triaudit_") / n
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(FAKE.format(python=sys.executable))
        p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return build


@pytest.fixture
def quick_grace(monkeypatch):
    monkeypatch.setattr(child, "GRACE_S", 1.0)


def _run(tmp_path, monkeypatch, only, timeout_s=None, **env):
    for k, v in env.items():
        monkeypatch.setenv(f"SYNTHETIC_{k}", v)
    lines: list[str] = []
    out = runner.run_suite(
        _build(tmp_path),
        tmp_path / "results",
        "quick",
        only=only,
        log=lines.append,
        timeout_s=timeout_s,
        nvidia_smi=str(tmp_path / "no-nvidia-smi"),
    )
    return out, lines


def _alive(pid: int) -> bool:
    """Whether pid still runs (a zombie, killed and waiting for its reaper, does not), after up to 2 s."""
    for _ in range(20):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        if state == "Z":
            return False
        time.sleep(0.1)
    return True


def test_a_killed_executable_keeps_its_finished_cases_and_its_children_go(tmp_path, monkeypatch, quick_grace):
    pidfile = tmp_path / "child.pid"
    t0 = time.monotonic()
    out, lines = _run(
        tmp_path, monkeypatch, ["stream"], timeout_s=3, TRIAUDIT_STREAM_DONE="2", TRIAUDIT_STREAM_HANG=str(pidfile)
    )
    assert time.monotonic() - t0 < 30
    assert out.exit_code == 1 and out.run_dir is not None, out.message
    assert "finished cases of triaudit_stream kept" in out.message
    data = json.loads((out.run_dir / "triaudit_stream.json").read_text())
    assert [b["name"] for b in data["benchmarks"]] == [
        "stream/copy/fp32/cache:cold/bytes:1048576/manual_time",
        "stream/copy/fp32/cache:cold/bytes:2097152/manual_time",
    ]
    assert "2 whole benchmark entries kept" in data["context"]["triaudit_salvaged"]
    assert not (out.run_dir / "triaudit_stream.json.partial").exists()
    [entry] = json.loads((out.run_dir / "manifest.json").read_text())["executables"]
    assert entry["exit_code"] == 124 and entry["salvaged"] and entry["limit_s"] == 3
    log = (out.run_dir / "triaudit_stream.log").read_text()
    assert "SIGTERM received" in log  # asked first, not killed outright
    assert not _alive(int(pidfile.read_text()))  # its child went with it
    # report reads the kept cases and says where they came from
    rep = tmp_path / "rep"
    assert cli.main(["report", str(out.run_dir), "--include-incomplete", "--out", str(rep)]) == 0


def test_one_that_ignores_sigterm_is_killed_after_the_grace(tmp_path, monkeypatch, quick_grace):
    pidfile = tmp_path / "child.pid"
    out, _ = _run(
        tmp_path,
        monkeypatch,
        ["stream"],
        timeout_s=2,
        TRIAUDIT_STREAM_DONE="1",
        TRIAUDIT_STREAM_HANG=str(pidfile),
        TRIAUDIT_STREAM_IGNORE_TERM="1",
    )
    data = json.loads((out.run_dir / "triaudit_stream.json").read_text())
    assert len(data["benchmarks"]) == 1
    assert "SIGTERM, then SIGKILL" in (out.run_dir / "triaudit_stream.log").read_text()
    assert not _alive(int(pidfile.read_text()))


def test_a_hang_does_not_starve_the_corner_after_it(tmp_path, monkeypatch, quick_grace):
    out, lines = _run(
        tmp_path,
        monkeypatch,
        ["stream", "gemm"],
        timeout_s=3,
        TRIAUDIT_STREAM_DONE="1",
        TRIAUDIT_STREAM_HANG=str(tmp_path / "pid"),
    )
    gemm = json.loads((out.run_dir / "triaudit_gemm.json").read_text())
    assert len(gemm["benchmarks"]) == 4 and "triaudit_salvaged" not in gemm["context"]
    assert [e["step"] for e in json.loads((out.run_dir / "manifest.json").read_text())["executables"]] == [
        "triaudit_stream",
        "triaudit_gemm",
        "triaudit_gemm_ladder",
    ]


def test_the_executables_own_message_is_passed_on_and_its_log_kept(tmp_path, monkeypatch):
    said = "triaudit_stream: bad command line: --ops=bogus: not one of copy, scale, add, triad, dot"
    out, _ = _run(tmp_path, monkeypatch, ["stream"], TRIAUDIT_STREAM_SAY=said)
    assert out.exit_code == 1 and out.run_dir is None
    assert said in out.message and "exit codes [2]" in out.message
    kept = next((tmp_path / "results" / ".incoming").iterdir())
    assert said in (kept / "triaudit_stream.log").read_text()  # the log is never deleted
    assert [e["exit_code"] for e in json.loads((kept / "manifest.json").read_text())["executables"]] == [2]


def test_no_device_anywhere_writes_nothing_and_says_so(tmp_path, monkeypatch):
    out, _ = _run(tmp_path, monkeypatch, ["stream"], TRIAUDIT_STREAM_NO_DEVICE="1")
    assert out.exit_code == 77 and "nothing measured, nothing written" in out.message
    assert not any((tmp_path / "results").rglob("*.json"))


@pytest.mark.parametrize("kind", ["file", "under a file"])
def test_results_that_cannot_hold_runs_is_a_message(tmp_path, kind):
    results = tmp_path / "results"
    results.write_text("not a folder")
    if kind == "under a file":
        results = results / "runs"  # cannot be created (NotADirectoryError, whoever runs it)
    out = runner.run_suite(_build(tmp_path), results, "quick", only=["stream"], log=lambda m: None)
    assert out.exit_code == 2 and "--results" in out.message and str(results) in out.message
    assert "Traceback" not in out.message


def test_salvage_leaves_a_partial_without_a_whole_context(tmp_path):
    p = tmp_path / "x.json.partial"
    p.write_text('{\n  "context": {"gpu_na')
    assert "no whole context" in child.salvage(tmp_path / "x.json", "exit 137")
    assert p.exists() and not (tmp_path / "x.json").exists()
    assert child.salvage(tmp_path / "y.json", "exit 0") == ""  # nothing to do


def test_last_words_prefer_the_executables_explanation(tmp_path):
    log = tmp_path / "a.log"
    log.write_text("$ exe --x\nsome line\nexe: bad command line: --x=1: out of range\nexit\n")
    assert child.last_words(log) == "exe: bad command line: --x=1: out of range"


def _truncated_file(path: Path, whole: int) -> Path:
    """A Google Benchmark file cut off inside its (whole + 1)-th entry, as a SIGKILL leaves one
    written by the library itself (synthetic numbers)."""
    entries = [
        {
            "name": f"stream/triad/fp32/cache:cold/bytes:{1 << (20 + i)}/manual_time",
            "run_type": "iteration",
            "repetitions": 1,
            "repetition_index": 0,
            "iterations": 1,
            "real_time": 10.0,
            "cpu_time": 10.0,
            "time_unit": "us",
            "bytes_per_second": 1.0e12,
        }
        for i in range(whole + 1)
    ]
    text = json.dumps(
        {"context": {"gpu_available": "true", "gpu_name": "Synthetic GPU", "synthetic": "true"}, "benchmarks": entries},
        indent=2,
    )
    cut = text.rindex('"name"')  # inside the last entry
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text[:cut])
    return path


def test_report_and_compare_read_a_truncated_file_up_to_its_last_whole_case(tmp_path, capsys):
    a = _truncated_file(tmp_path / "a" / "stream_truncated_synthetic.json", 2)
    b = _truncated_file(tmp_path / "b" / "stream_truncated_synthetic.json", 3)
    rep = tmp_path / "rep"
    assert cli.main(["report", str(a), "--out", str(rep)]) == 0
    md = (rep / "report.md").read_text()
    assert "stream_truncated_synthetic.json" in md and "2 whole benchmark entries read" in md
    capsys.readouterr()
    cli.main(["compare", str(a), str(b)])
    out = capsys.readouterr()
    text = out.out + out.err
    assert "2 whole benchmark entries read" in text and "3 whole benchmark entries read" in text


def test_a_closed_pipe_keeps_runs_verdict(tmp_path):
    """`triaudit run | head -1` on a machine without a GPU exited 0: the print of its last line into
    the closed pipe ended the command as if nothing were wrong."""
    import subprocess

    build = _build(tmp_path)
    env = dict(os.environ, SYNTHETIC_TRIAUDIT_STREAM_NO_DEVICE="1")
    script = (
        f"{sys.executable} -m triaudit run --only stream --build-dir {build} --results {tmp_path / 'r'} | head -c 1 "
        "> /dev/null; echo ${PIPESTATUS[0]}"
    )
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert p.stdout.strip() == "77", p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("flag", ["--benchmark_out={out}", "--benchmark_out_format=csv", "--force"])
def test_run_refuses_the_flags_it_owns_after_the_double_dash(tmp_path, capsys, flag):
    """`run -- --benchmark_out=F` made each executable write F (skipped cases without a GPU; the
    measurements, with one) while run said "nothing measured, nothing written"."""
    out = tmp_path / "mine.json"
    code = cli.main(["run", "--results", str(tmp_path / "results"), "--", flag.format(out=out)])
    assert code == 2
    assert "writes each executable's result file itself" in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "results").exists()
