"""Issue 38, single commands: strict JSON from plan, no traceback from import, exit 2 for bad input
the executables refuse, no library warning on stderr. Each test failed on 0.3.0 (625bafb).
Result files are synthetic, named so."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from io_helpers import SCRIPTS, cli_process, runs, tree

from triaudit import commands as cli

_runs, _tree, _cli = runs, tree, cli_process  # io_helpers.py


def test_plan_json_is_strict_json_and_an_overflow_is_refused(capsys):
    assert cli.main(["plan", "--json", "--card", "h200", "decode", "--params", "1e308"]) == 2
    out, err = capsys.readouterr()
    assert "Infinity" not in out and "too large to compute" in err
    assert cli.main(["plan", "--card", "h200", "decode", "--params", "1e308"]) == 2
    out, err = capsys.readouterr()
    assert "inf GB" not in out and "--params" in err
    assert cli.main(["plan", "--json", "--card", "h200", "decode", "--params", "7e9"]) == 0

    def refuse(name):
        raise ValueError(f"not JSON: {name}")

    json.loads(capsys.readouterr().out, parse_constant=refuse)


@pytest.mark.parametrize("text", ["hello world\n", '{"a": 1}\n', ""])
def test_import_mamf_finder_of_a_file_that_is_not_its_log(tmp_path, capsys, text):
    f = tmp_path / "not_mamf.txt"
    f.write_text(text)
    assert cli.main(["import", "mamf-finder", str(f), "--results", str(tmp_path / "r"), "--card", "h200"]) == 2
    err = capsys.readouterr().err
    assert "not_mamf.txt" in err and "TypeError" not in err


def test_run_refuses_repetitions_below_one_as_bad_input(tmp_path, capsys, stream_exe):
    build = stream_exe.parents[2]
    results = tmp_path / "results"
    argv = ["run", "--build-dir", str(build), "--results", str(results), "--only", "stream"]
    assert cli.main([*argv, "--", "--benchmark_repetitions=0"]) == 2
    assert "--benchmark_repetitions" in capsys.readouterr().err
    assert not any(p for p in results.rglob("manifest.json"))


def test_an_executable_with_an_unwritable_result_file_is_bad_input_and_writes_nothing(unwritable, stream_exe):
    out = unwritable / "stream.json"
    r = subprocess.run(
        [
            str(stream_exe),
            f"--benchmark_out={out}",
            "--benchmark_filter=bytes:(1048576|2097152)$|bytes:(1048576|2097152)/",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, CUDA_VISIBLE_DEVICES=""),
    )
    assert r.returncode == 2, r.stderr
    assert str(unwritable) in r.stderr and "case(s) written" not in r.stderr


def test_library_warnings_do_not_reach_stderr(tmp_path):
    """matplotlib warns past 20 open figures or on a layout it cannot make; the command's stderr is
    the user's, not matplotlib's. In a process of its own: pytest would catch the warning itself."""
    runs = _runs(tmp_path)
    script = (
        "import sys, warnings, matplotlib.figure\n"
        "real = matplotlib.figure.Figure.savefig\n"
        "def warns(self, *a, **k):\n"
        "    warnings.warn('More than 20 figures have been opened (synthetic)', RuntimeWarning)\n"
        "    return real(self, *a, **k)\n"
        "matplotlib.figure.Figure.savefig = warns\n"
        "from triaudit.commands import entry\n"
        "sys.argv = ['triaudit'] + sys.argv[1:]\n"
        "entry()\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", script, "history", *map(str, runs), "--out", str(tmp_path / "h")],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(SCRIPTS)),
    )
    assert r.returncode == 1, r.stderr
    assert "Warning" not in r.stderr and "synthetic" not in r.stderr, r.stderr
