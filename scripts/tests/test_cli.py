import json
import stat
import sys
from pathlib import Path

from synthetic import synthetic_stream_result, write

from triaudit import commands as cli
from triaudit.core import builddir
from triaudit.runner import suite as runner


def test_report_writes_tables_and_plot(tmp_path):
    write(
        tmp_path / "results" / "synthetic-card" / "r1" / "synthetic_stream.json",
        synthetic_stream_result("Synthetic Card A", hbm_gbps=4000),
    )
    out = tmp_path / "report"
    assert cli.main(["report", str(tmp_path / "results"), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "Synthetic Card A" in md and "HBM" in md
    assert (out / "stream.csv").read_text().startswith("op,type,cache,bytes")
    png = (out / "stream_bandwidth.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10000


def test_report_refuses_malformed_input_naming_it(tmp_path, capsys):
    bad = tmp_path / "results" / "x" / "truncated_synthetic.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"benchmarks": [')
    assert cli.main(["report", str(tmp_path / "results"), "--out", str(tmp_path / "rep")]) == 2
    assert "truncated_synthetic.json" in capsys.readouterr().err


def test_report_never_writes_over_an_input(tmp_path, capsys):
    # A result file (synthetic content) that sits where the report would write its CSV.
    clash = tmp_path / "out" / "stream.csv"
    clash.parent.mkdir()
    clash.write_text(json.dumps(synthetic_stream_result("Synthetic", 1000)))
    assert cli.main(["report", str(clash), "--out", str(tmp_path / "out")]) == 2
    assert "refusing to write" in capsys.readouterr().err
    assert json.loads(clash.read_text())["context"]["synthetic"]


def test_report_on_no_gpu_output(no_gpu_json, tmp_path):
    assert cli.main(["report", str(no_gpu_json), "--out", str(tmp_path / "r")]) == 0
    md = (tmp_path / "r" / "report.md").read_text()
    assert "Nothing was measured: every result file was written on a machine without a usable GPU" in md
    # No corner section repeating that nothing was measured: only other people's published figures.
    assert [line for line in md.splitlines() if line.startswith("## ")] == [
        "## Published measurements of four cards (other people's, not ours)"
    ]
    assert not (tmp_path / "r" / "stream_bandwidth.png").exists()


def test_run_without_gpu_measures_nothing_and_writes_nothing(stream_exe, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    build = stream_exe.parents[2]
    out = runner.run_suite(build, tmp_path / "results", "quick", only=["stream"], log=lambda *_: None)
    assert out.exit_code == 77
    assert "no CUDA device" in out.message and "nothing measured" in out.message
    assert not any((tmp_path / "results").rglob("*.json"))


def _fake_exe(build: Path, body: str) -> Path:
    """A stand-in executable (a Python script) writing synthetic JSON where --benchmark_out says."""
    exe = build / "benchmarks" / "stream" / "triaudit_stream"
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text(f"#!{sys.executable}\n" + body)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


FAKE_OK = f"""
import json, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from synthetic import synthetic_stream_result
if "--benchmark_list_tests" in sys.argv:
    print("stream/copy/fp32/cache:hot/bytes:1024"); sys.exit(0)
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--benchmark_out="))
json.dump(synthetic_stream_result("Synthetic Card A", 4000), open(out, "w"))
print("stream/copy/fp32/cache:hot/bytes:1024/manual_time 1 us 1 us 100")
"""


def test_run_writes_a_new_folder_each_time_with_manifest(tmp_path):
    build = tmp_path / "build"
    _fake_exe(build, FAKE_OK)
    results = tmp_path / "results"
    first = runner.run_suite(build, results, "quick", log=lambda *_: None)
    second = runner.run_suite(build, results, "quick", log=lambda *_: None)
    assert first.exit_code == 0 and second.exit_code == 0
    assert first.run_dir != second.run_dir
    assert first.run_dir.parent.name == "synthetic-card-a" == second.run_dir.parent.name
    m = json.loads((first.run_dir / "manifest.json").read_text())
    assert m["complete"] is True and m["profile"] == "quick" and m["card"] == "Synthetic Card A"
    assert m["executables"][0]["exit_code"] == 0
    assert "--benchmark_repetitions=5" in m["executables"][0]["command"]
    assert (first.run_dir / "triaudit_stream.json").exists() and (first.run_dir / "triaudit_stream.log").exists()
    assert not (results / ".incoming").exists()


def test_run_records_the_commit_of_the_code_that_ran_not_of_the_current_folder(tmp_path, monkeypatch):
    build = tmp_path / "build"
    _fake_exe(build, FAKE_OK)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # not a git checkout: the old code recorded "unknown" here
    out = runner.run_suite(build, tmp_path / "results", "quick", log=lambda *_: None)
    m = json.loads((out.run_dir / "manifest.json").read_text())
    assert m["git_commit"] == runner.git_commit(builddir.REPO)
    if (builddir.REPO / ".git").exists():
        assert m["git_commit"] != "unknown"


def test_run_reports_a_failing_executable(tmp_path):
    build = tmp_path / "build"
    _fake_exe(build, FAKE_OK + "\nsys.exit(1)\n")
    out = runner.run_suite(build, tmp_path / "results", "quick", log=lambda *_: None)
    assert out.exit_code == 1 and "failed: triaudit_stream" in out.message


def test_run_refuses_missing_build_and_unknown_profile(tmp_path):
    assert runner.run_suite(tmp_path / "nope", tmp_path / "r").exit_code == 2
    assert runner.run_suite(tmp_path, tmp_path / "r", profile="forever").exit_code == 2


FAKE_INTERRUPTED = FAKE_OK.replace(
    'print("stream/copy/fp32/cache:hot/bytes:1024/manual_time 1 us 1 us 100")',
    """
import os, signal, time
print("stream/copy/fp32/cache:hot/bytes:1024/manual_time 1 us 1 us 100", flush=True)
os.kill(os.getppid(), signal.SIGTERM)  # the CI job is cancelled while this executable runs
time.sleep(30)
""",
)


def test_interrupted_run_is_kept_and_marked_incomplete(tmp_path):
    build = tmp_path / "build"
    _fake_exe(build, FAKE_INTERRUPTED)
    out = runner.run_suite(build, tmp_path / "results", "quick", log=lambda *_: None)
    assert out.exit_code == 130 and "incomplete" in out.message
    m = json.loads((out.run_dir / "manifest.json").read_text())
    assert m["complete"] is False
    # The report leaves it out and says so.
    assert cli.main(["report", str(out.run_dir), "--out", str(tmp_path / "rep")]) == 0
    assert "left out" in (tmp_path / "rep" / "report.md").read_text()


def test_an_executable_past_its_timeout_is_killed_and_reported(tmp_path):
    build = tmp_path / "build"
    _fake_exe(
        build,
        FAKE_OK.replace(
            'print("stream/copy/fp32/cache:hot/bytes:1024/manual_time 1 us 1 us 100")', "import time; time.sleep(60)"
        ),
    )
    out = runner.run_suite(build, tmp_path / "results", "quick", log=lambda *_: None, timeout_s=2)
    assert out.exit_code == 1 and "failed: triaudit_stream" in out.message
    m = json.loads((out.run_dir / "manifest.json").read_text())
    assert m["executables"][0]["exit_code"] == 124
    assert "stopped after 2 s (its time limit)" in (out.run_dir / "triaudit_stream.log").read_text()


def test_a_spent_budget_stops_the_run_and_keeps_what_was_measured(tmp_path, monkeypatch):
    # The GPU check has minutes: the first executable uses up the budget (it is killed when the
    # budget runs out), the second is not started, and the run is kept, marked incomplete.
    build = tmp_path / "build"
    _fake_exe(
        build,
        FAKE_OK.replace(
            'print("stream/copy/fp32/cache:hot/bytes:1024/manual_time 1 us 1 us 100")',
            'print("stream/copy/fp32/cache:hot/bytes:1024/manual_time 1 us 1 us 100", flush=True)\n'
            "import time; time.sleep(60)",
        ),
    )
    second = build / "benchmarks" / "memcpy" / "triaudit_memcpy"
    second.parent.mkdir(parents=True)
    second.write_text(f"#!{sys.executable}\nraise SystemExit(3)\n")
    second.chmod(second.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(runner, "MIN_START_S", 1.0)
    out = runner.run_suite(build, tmp_path / "results", "quick", log=lambda *_: None, timeout_s=30, budget_s=3)
    assert out.exit_code == 1 and "budget spent before triaudit_memcpy" in out.message
    m = json.loads((out.run_dir / "manifest.json").read_text())
    assert m["complete"] is False and m["not_started"] == ["triaudit_memcpy"] and m["budget_s"] == 3
    assert [e["executable"] for e in m["executables"]] == ["triaudit_stream"]
    assert m["executables"][0]["exit_code"] == 124 and m["executables"][0]["seconds"] < 10
    assert (out.run_dir / "triaudit_stream.json").exists()


def test_run_and_doctor_need_no_third_party_package(tmp_path):
    # The GPU check runs them with whatever python3 the GPU machine has: pandas and matplotlib
    # are only for report, compare, history and plan.
    from fresh_python import fresh_python

    code = (
        "import sys\n"
        "for m in ('pandas', 'matplotlib', 'numpy'): sys.modules[m] = None  # any import of them fails\n"
        "from triaudit import commands as cli\n"
        "from triaudit.runner import suite\n"
        "from triaudit.doctor import checks\n"
        "cli.build_parser().parse_args(['doctor'])\n"
        "cli.build_parser().parse_args(['run', '--budget-s', '60'])\n"
        "print('ok')\n"
    )
    p = fresh_python("-c", code)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr
