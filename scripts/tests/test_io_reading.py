"""Issue 38, reading result files: only a cut tail is a truncation, said on the console too; a
syntax error anywhere else is an error naming line and column; a file skipped is named on the
console. Each test failed on 0.3.0 (625bafb). Result files are synthetic, named so."""

from __future__ import annotations

import json

import pytest
from io_helpers import cli_process, runs, tree
from synthetic import synthetic_corners_result, write

from triaudit import commands as cli

_runs, _tree, _cli = runs, tree, cli_process  # io_helpers.py


@pytest.mark.parametrize("command", ["report", "compare", "export"])
def test_a_syntax_error_in_the_middle_is_an_error_not_a_truncation(tmp_path, capsys, command):
    text = json.dumps(synthetic_corners_result("NVIDIA H200"), indent=1)
    at = text.index('"name"', len(text) // 2)
    folder = tmp_path / "mid"
    folder.mkdir()
    (folder / "triaudit_broken_synthetic.json").write_text(text[:at] + "@@" + text[at:])
    other = _runs(tmp_path, 1)[0]
    argv = {
        "report": ["report", str(folder), "--out", str(tmp_path / "rep")],
        "compare": ["compare", str(other), str(folder), "--allow-incomplete"],
        "export": ["export", str(folder), "--format", "bmf", "--out", str(tmp_path / "exp")],
    }[command]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "triaudit_broken_synthetic.json: not valid JSON" in err and "line " in err and "column " in err, err
    assert "truncat" not in err and "cut off" not in err


def test_a_cut_tail_is_a_truncation_and_said_on_the_console(tmp_path, capsys):
    text = json.dumps(synthetic_corners_result("NVIDIA H200"), indent=1)
    cut = write(tmp_path / "cut" / "triaudit_cut_synthetic.json", {})
    cut.write_text(text[: len(text) * 2 // 3])
    assert cli.main(["report", str(cut.parent), "--out", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err
    assert f"warning: {cut}: the file ends before its last entry closes" in err, err
    assert "the file ends before its last entry closes" in (tmp_path / "rep" / "report.md").read_text()


def test_a_looping_symbolic_link_is_named_on_the_console(tmp_path, capsys):
    runs = _runs(tmp_path)
    (runs[1] / "loop.json").symlink_to("loop.json")
    assert cli.main(["history", *map(str, runs), "--out", str(tmp_path / "h")]) == 1
    assert f"{runs[1] / 'loop.json'}: a symbolic link loop, skipped" in capsys.readouterr().err
