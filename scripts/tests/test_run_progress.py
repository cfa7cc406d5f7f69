"""What `triaudit run` prints (plain lines in CI, a live bar on a terminal), its argument checks, and
finding the build folder."""

import io
import stat
from pathlib import Path

import pytest

from triaudit import commands as cli
from triaudit.core import builddir
from triaudit.runner import profiles, progress
from triaudit.runner import suite as runner

SKIP_17 = (
    "stream/triad/fp64/cache:cold/bytes:1048576/manual_time ERROR OCCURRED: "
    "'skipped: no CUDA device (no NVIDIA driver found (libcuda.so.1 not loadable))'"
)


def test_classify_console_lines():
    ev = progress.classify(SKIP_17, "triaudit_stream")
    assert ev.kind == "skipped" and ev.text.startswith("skipped: no CUDA device (no NVIDIA driver found")
    ev = progress.classify(
        "gemm/cublaslt/bf16/m:1/manual_time ERROR OCCURRED: 'verification failed: 3 wrong'", "triaudit_gemm"
    )
    assert ev.kind == "error" and ev.text == "verification failed: 3 wrong"
    ev = progress.classify(
        "stream/copy/fp32/cache:hot/bytes:1024/manual_time SKIPPED: 'needs 3 GiB'", "triaudit_stream"
    )
    assert ev.kind == "skipped"  # Google Benchmark 1.8+
    ev = progress.classify(
        "stream/copy/fp32/cache:hot/bytes:1024/manual_time_median  1.0 us  1.0 us  5", "triaudit_stream"
    )
    assert ev.kind == "case" and ev.case.endswith("bytes:1024/manual_time")
    assert (
        progress.classify("stream/copy/fp32/cache:hot/bytes:1024/manual_time_stddev 0.1 us", "triaudit_stream") is None
    )
    # The executables name themselves: the runner does not add the name twice.
    ev = progress.classify("triaudit_memcpy: error: pinned allocation failed", "triaudit_memcpy")
    assert ev.text == "triaudit_memcpy: error: pinned allocation failed"


def test_without_gpu_one_line_per_executable_not_one_per_case(stream_exe, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    lines = []
    out = runner.run_suite(stream_exe.parents[2], tmp_path / "results", "quick", only=["stream"], log=lines.append)
    assert out.exit_code == 77
    text = "\n".join(lines)
    assert "ERROR OCCURRED" not in text and "triaudit_stream: triaudit_stream:" not in text
    skipped = [line for line in lines if "skipped: no CUDA device" in line]
    assert len(skipped) == 1 and " skipped: no CUDA device (" in skipped[0]
    n = int(skipped[0].split("triaudit_stream: ")[1].split(" ")[0])
    args = profiles.COMMON_ARGS + profiles.PROFILES["quick"]["triaudit_stream"]
    assert n == runner._count_cases(stream_exe, args) > 1  # every case of the profile, in that one line


class _Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self._tty = tty

    def isatty(self):
        return self._tty


def test_the_live_bar_only_on_an_interactive_terminal():
    assert progress.wants_rich(_Stream(True), {"TERM": "xterm"}) is True
    assert progress.wants_rich(_Stream(False), {"TERM": "xterm"}) is False  # a pipe, a file, a CI log
    assert progress.wants_rich(_Stream(True), {"TERM": "xterm", "CI": "true"}) is False
    assert progress.wants_rich(_Stream(True), {"TERM": "dumb"}) is False
    assert isinstance(progress.choose(log=lambda *_: None), progress.PlainProgress)
    assert not isinstance(progress.choose(log=lambda *_: None), progress.RichProgress)


def test_rich_is_not_imported_by_run_on_a_pipe(tmp_path):
    from fresh_python import fresh_python

    code = (
        "import sys\nsys.modules['rich'] = None\nfrom triaudit.runner import progress\n"
        "p = progress.choose(stream=sys.stdout)\nprint(type(p).__name__)\n"
    )
    p = fresh_python("-c", code)
    assert p.returncode == 0 and p.stdout.strip() == "PlainProgress", p.stderr


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["run", "--only", "stream,foo"], "--only: unknown executable(s) foo"),
        (["run", "--budget-s", "-5"], "--budget-s -5: must be a positive number of seconds"),
        (["run", "--timeout-s", "0"], "--timeout-s 0: must be a positive number"),
    ],
)
def test_run_refuses_bad_arguments(capsys, argv, needle):
    assert cli.main(argv) == 2
    assert needle in capsys.readouterr().err


def _exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_the_build_folder_is_found(tmp_path):
    assert builddir.find_build_dir(None, (tmp_path,))[0] is None
    assert "build/gpu" in builddir.find_build_dir(None, (tmp_path,))[1]
    _exe(tmp_path / "build" / "ci" / "benchmarks" / "stream" / "triaudit_stream")
    assert builddir.find_build_dir(None, (tmp_path,))[0] == tmp_path / "build" / "ci"
    _exe(tmp_path / "build" / "gpu" / "benchmarks" / "gemm" / "triaudit_gemm")
    assert builddir.find_build_dir(None, (tmp_path,))[0] == tmp_path / "build" / "gpu"  # the local card's build first
    assert builddir.find_build_dir(tmp_path / "x", (tmp_path,))[0] == tmp_path / "x"


def test_run_finds_build_ci_by_itself(tmp_path, monkeypatch, capsys):
    from test_cli import FAKE_OK, _fake_exe

    _fake_exe(tmp_path / "build" / "ci", FAKE_OK)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", "--results", str(tmp_path / "results")]) == 0
    out = capsys.readouterr().out
    assert "build folder: " in out and str(Path("build") / "ci") in out


@pytest.mark.parametrize("command", ["run", "report", "history", "compare", "export"])
def test_every_option_has_help_text(command):
    sub = next(a for a in cli.build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    parser = sub.choices[command]
    missing = [a.dest for a in parser._actions if a.dest != "help" and not a.help]
    assert not missing, f"{command}: no help for {missing}"
