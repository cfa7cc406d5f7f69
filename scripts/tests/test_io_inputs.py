"""Issue 38, inputs: what a command is given is a regular file or folder, never empty, never a FIFO
(refused before it is opened: no hang), named with its option when refused. Each test failed on
0.3.0 (625bafb) and passes with the I/O layer (core/io). Run folders are synthetic, named so."""

from __future__ import annotations

import os

import pytest
from io_helpers import cli_process, runs, tree

from triaudit import commands as cli

_runs, _tree, _cli = runs, tree, cli_process  # io_helpers.py


@pytest.mark.parametrize("which", ["report --prices", "gate --floors", "soak --resume", "doctor --topo-file"])
def test_a_fifo_as_an_input_is_refused_without_opening_it(tmp_path, which):
    run = _runs(tmp_path, 1)[0]
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    command, flag = which.split()
    argv = {
        "report": ["report", str(run), "--out", str(tmp_path / "rep"), flag, str(fifo)],
        "gate": ["gate", str(run), flag, str(fifo)],
        "soak": ["soak", flag, str(fifo), "--results", str(tmp_path / "results")],
        "doctor": ["doctor", flag, str(fifo), "--no-nccl-run"],
    }[command]
    r = _cli(*argv, timeout=60)
    assert r.returncode == 2, r.stderr
    assert f"{flag} {fifo}: a FIFO" in r.stderr and "Traceback" not in r.stderr


def test_doctor_with_a_missing_build_folder_is_bad_input(capsys, tmp_path):
    assert cli.main(["doctor", "--build-dir", str(tmp_path / "nope"), "--no-nccl-run"]) == 2
    assert "--build-dir" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "A", "B", "--markdown", ""],
        ["gate", "A", "--junit", ""],
        ["import", "nccl-tests", "A/x.txt", "--results", ""],
        ["soak", "--duration", "1m", "--results", ""],
        ["run", "--results", ""],
        ["slurm", "submit", "--nodes", "1", "--results", ""],
        ["report", "A", "--out", ""],
    ],
)
def test_an_empty_path_is_refused_by_name(tmp_path, capsys, argv):
    run = _runs(tmp_path, 1)[0]
    argv = [str(run) if a == "A" else str(run / "x.txt") if a == "A/x.txt" else a for a in argv]
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    flag = argv[argv.index("") - 1]
    assert f"argument {flag}: empty" in err, err
    assert "'.'" not in err and " . " not in err


def test_slurm_submit_names_a_results_file_not_the_build_folder(tmp_path, capsys):
    f = tmp_path / "afile"
    f.write_text("x\n")
    assert cli.main(["slurm", "submit", "--nodes", "1", "--results", str(f), "--build-dir", str(tmp_path / "no")]) == 2
    err = capsys.readouterr().err
    assert f"--results {f}" in err and "--build-dir" not in err


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_slurm_collect_refuses_a_wait_that_is_not_a_duration(capsys, value):
    with pytest.raises(SystemExit) as e:
        cli.main(["slurm", "collect", "1", f"--wait-s={value}"])
    assert e.value.code == 2 and "--wait-s" in capsys.readouterr().err


def test_an_empty_floors_file_is_said_to_be_empty(tmp_path, capsys):
    run = _runs(tmp_path, 1)[0]
    floors = tmp_path / "floors.toml"
    floors.write_text("")
    assert cli.main(["gate", str(run), "--floors", str(floors)]) == 2
    err = capsys.readouterr().err
    assert f"--floors {floors}: an empty file" in err and "None" not in err


def test_a_fifo_as_a_soaks_checkpoint_is_refused_without_opening_it(tmp_path):
    """`soak --resume FOLDER` reads the checkpoint inside it, which no option names: the layer's
    read_text refuses a FIFO there too (it hung)."""
    from triaudit.soak.checkpoint import CHECKPOINT

    soak = tmp_path / "results" / ".incoming" / "soak-x"
    soak.mkdir(parents=True)
    os.mkfifo(soak / CHECKPOINT)
    r = _cli("soak", "--resume", str(soak), "--results", str(tmp_path / "results"), timeout=60)
    assert r.returncode == 2, r.stderr
    assert f"{soak / CHECKPOINT}: not a readable checkpoint (a FIFO (named pipe), not a file)" in r.stderr
