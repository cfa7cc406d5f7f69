"""Ctrl-C during `triaudit report` while its figure workers draw (issue 38): a real SIGINT sent to the
whole process group of a real report, as a terminal sends it. No process prints a traceback, the
exit code is 130, and the --out folder is the previous whole report or absent. Synthetic cards
(synthetic_cards.py), named so."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import _build_dir
from synthetic_cards import DEVICE_NAME, catalogue, write_cards

SCRIPTS = Path(__file__).resolve().parents[1]


def _descendants(pid: int) -> list[int]:
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parent[int(d.name)] = int(fields[1])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


@pytest.fixture(scope="module")
def cards(tmp_path_factory) -> Path:
    build = _build_dir()
    if not (build / "benchmarks" / "gemm" / "triaudit_gemm").exists():
        pytest.skip(f"{build} not built (scripts/test.sh builds it first)")
    root = tmp_path_factory.mktemp("cards")
    write_cards(root / "results", list(DEVICE_NAME), catalogue(build), p2p_gpus=4)
    return root / "results"


def _tree(folder: Path) -> dict[str, bytes]:
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _interrupted_report(results: Path, out: Path, children: int, delay_s: float) -> tuple[int | None, str, int, int]:
    """(exit code, stderr, processes seen, process group) of a report sent SIGINT `delay_s` after
    it has `children` processes below it; exit code None when it ended before."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "triaudit", "report", str(results), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the signal goes to every process of it
        env=dict(os.environ, PYTHONPATH=str(SCRIPTS)),
    )
    seen = 0
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        seen = len(_descendants(proc.pid))
        if seen >= children:
            time.sleep(delay_s)
            os.killpg(proc.pid, signal.SIGINT)
            break
        time.sleep(0.02)
    _, err = proc.communicate(timeout=120)
    return (proc.returncode if seen >= children else None), err, seen, proc.pid


# The moments: as the first process below it starts (the readers' pool, or the forkserver importing
# matplotlib), and once the forkserver and both figure workers run and draw.
MOMENTS = {"starting": (1, 0.0), "drawing": (3, 0.2)}


@pytest.mark.parametrize("moment", sorted(MOMENTS))
@pytest.mark.parametrize("previous", [False, True])
def test_ctrl_c_while_figures_are_drawn(cards, tmp_path, previous, moment):
    out = tmp_path / "report"
    if previous:
        done = subprocess.run(
            [sys.executable, "-m", "triaudit", "report", str(cards), "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=300,
            env=dict(os.environ, PYTHONPATH=str(SCRIPTS)),
        )
        assert done.returncode == 0, done.stderr
    before = _tree(out)
    code, err, seen, group = _interrupted_report(cards, out, *MOMENTS[moment])
    if code is None:
        pytest.skip(f"the report ended before its figure workers were seen ({seen} child processes)")
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err and "Error" not in err, err
    assert "interrupted" in err
    assert _tree(out) == before  # the previous whole report, or none
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging left
    assert _group_gone(group), "a worker or the forkserver outlived the report"


def _group_gone(group: int, wait_s: float = 10.0) -> bool:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False
