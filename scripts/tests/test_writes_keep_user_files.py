"""Nothing a command writes destroys what the user had (issue: integrity, part 2 and 4): a step
summary is appended to, an export never lands inside a run, an interrupted export or history
leaves whole files or the previous ones, never a part."""

from __future__ import annotations

import json
import os

import pytest
from test_compare_gate import GEMM, _run
from test_outliers import fleet

from triaudit import commands as cli
from triaudit.core import files


def _two_runs(tmp_path):
    base = _run(tmp_path, "base", {GEMM: (1e-3, {"flops": 1.0e15})})
    new = _run(tmp_path, "new", {GEMM: (1.2e-3, {"flops": 0.83e15})})
    return base, new


def test_compare_appends_to_the_step_summary(tmp_path, capsys):
    base, new = _two_runs(tmp_path)
    summary = tmp_path / "step_summary.md"
    summary.write_text("## Build\nearlier step's summary\n")
    assert cli.main(["compare", str(base), str(new), "--markdown", str(summary)]) == 1
    assert cli.main(["compare", str(base), str(base), "--markdown", str(summary)]) == 0
    text = summary.read_text()
    assert text.startswith("## Build\nearlier step's summary\n\n")  # kept, then a blank line
    assert text.count("triaudit compare") == 2 or text.count(GEMM) >= 2, text
    capsys.readouterr()


def test_outliers_append_to_the_step_summary(tmp_path):
    fleet(tmp_path / "r", slow={(0, 0): 0.15})
    md = tmp_path / "summary.md"
    md.write_text("kept\n")
    assert cli.main(["outliers", str(tmp_path / "r"), "--markdown", str(md)]) == 1
    assert md.read_text().startswith("kept\n\n") and "synthetic-node-0 | 0 |" in md.read_text()


def test_a_summary_to_a_fifo_is_refused_without_blocking(tmp_path, capsys):
    base, new = _two_runs(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert cli.main(["compare", str(base), str(new), "--markdown", str(fifo)]) == 2
    assert "a FIFO (named pipe), not a file" in capsys.readouterr().err


def test_export_into_a_run_folder_is_refused_and_the_run_still_reads(tmp_path, capsys):
    base, _ = _two_runs(tmp_path)
    (base / "manifest.json").write_text(json.dumps({"complete": True, "profile": "synthetic"}))
    inside = base / "export"
    assert cli.main(["export", str(base), "--format", "bmf", "--out", str(inside)]) == 2
    assert "inside the run folder" in capsys.readouterr().err
    assert not inside.exists()
    assert cli.main(["export", str(base), "--format", "bmf", "--out", str(base)]) == 2
    assert not (base / "bmf.json").exists()
    # Nor above it: a results root or a card's folder holds runs that report would read it with.
    assert cli.main(["export", str(base), "--format", "bmf", "--out", str(base.parent)]) == 2
    assert "holds the run folder" in capsys.readouterr().err
    assert not (base.parent / "bmf.json").exists()
    assert cli.main(["report", str(base), "--out", str(tmp_path / "rep")]) == 0


def test_an_interrupted_export_leaves_no_part(tmp_path, monkeypatch, capsys):
    base, _ = _two_runs(tmp_path)
    out = tmp_path / "export"
    out.mkdir()
    (out / "bigger_is_better.json").write_text("previous\n")
    (out / ".triaudit-export.json").write_text('{"files": ["bigger_is_better.json"]}')  # an earlier export's
    real_replace = os.replace

    def interrupted(src, dst):  # the interrupt arrives as the first whole file is put in place
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "replace", interrupted)
    assert cli.main(["export", str(base), "--format", "github-action-benchmark", "--out", str(out)]) == 130
    monkeypatch.setattr(files.os, "replace", real_replace)
    assert "interrupted" in capsys.readouterr().err
    assert (out / "bigger_is_better.json").read_text() == "previous\n"
    assert sorted(p.name for p in out.iterdir()) == [".triaudit-export.json", "bigger_is_better.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base", "export", "new"]  # no staging left


def test_an_interrupted_history_keeps_the_previous_files(tmp_path, monkeypatch, capsys):
    runs = [
        _run(tmp_path, f"2026010{i}T000000Z-host", {GEMM: (1e-3 * (1 + 0.01 * i), {"flops": 1e15})}) for i in (1, 2, 3)
    ]
    out = tmp_path / "history"
    assert cli.main(["history", *map(str, runs), "--out", str(out)]) in (0, 1)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(before) == {"history.png", "history.csv", ".triaudit-history.json"}

    calls = []
    real = files.atomic_write

    def second_interrupted(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(path, data)

    import triaudit.judge.compare as C

    monkeypatch.setattr(C, "atomic_write", second_interrupted)
    assert cli.main(["history", *map(str, runs), "--out", str(out)]) == 130
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(after) == set(before)  # nothing half-written beside them
    assert after["history.csv"] == before["history.csv"]
    capsys.readouterr()


@pytest.mark.parametrize("command", ["import", "doctor", "report"])
def test_a_fifo_given_as_an_input_is_refused_by_name(tmp_path, capsys, command):
    fifo = tmp_path / "input.fifo"
    os.mkfifo(fifo)
    argv = {
        "import": ["import", "nccl-tests", str(fifo), "--results", str(tmp_path / "res")],
        "doctor": ["doctor", "--topo-file", str(fifo), "--no-nccl-run"],
        "report": ["report", str(fifo), "--out", str(tmp_path / "rep")],
    }[command]
    assert cli.main(argv) == 2
    assert f"{fifo}: a FIFO (named pipe)" in capsys.readouterr().err


@pytest.mark.parametrize("value", ['"false"', '"true"', "0", "null"])
def test_a_manifest_whose_complete_is_not_a_boolean_is_an_incomplete_run(tmp_path, capsys, value):
    base, _ = _two_runs(tmp_path)
    (base / "manifest.json").write_text('{"complete": ' + value + "}")
    assert cli.main(["report", str(base), "--out", str(tmp_path / "rep")]) == 0
    out = capsys.readouterr()
    said = out.out + out.err + (tmp_path / "rep" / "report.md").read_text()
    assert f'"complete" is {value}, not true or false' in said
    assert "treated as incomplete" in said


def test_a_file_written_aside_and_interrupted_leaves_the_old_one_and_no_part(tmp_path):
    """files.written_aside (atomic_write and the store's Parquet files): a write stopped half way
    (Ctrl-C) leaves the file as it was and no temporary name beside it; a whole write replaces it."""
    target = tmp_path / "table.parquet"
    target.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        with files.written_aside(target) as f:
            f.write(b"half of the new")
            raise KeyboardInterrupt
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["table.parquet"]
    with files.written_aside(target) as f:
        f.write(b"new")
    assert target.read_bytes() == b"new" and sorted(p.name for p in tmp_path.iterdir()) == ["table.parquet"]
