"""`triaudit gate --slurm-drain` on a real one-node Slurm cluster (slurm_cluster.py; the `cluster`
fixture of conftest.py starts it and stops its daemons by pid): a failing gate drains the node
with its reason (sinfo shows both), a passing one resumes it, a drain someone else set is left
alone. The runs are synthetic (synthetic_gate.py) under the node's real host name. Without Slurm
and munge every test here is reported SKIPPED with the reason."""

from __future__ import annotations

import socket
import sys

import pytest
from conftest import REPO
from slurm_cluster import Cluster
from synthetic_gate import node_run, synthetic_floors

from triaudit import commands as cli


def _gate(c: Cluster, *args: str) -> tuple[int, str]:
    env = dict(c.env, PYTHONPATH=str(REPO / "scripts"))
    r = c.run(sys.executable, "-m", "triaudit", "gate", *args, "--slurm-drain", env=env, timeout=120)
    return r.returncode, r.stdout + r.stderr


def _sinfo(c: Cluster) -> tuple[str, str]:
    r = c.run("sinfo", "-h", "-N", "-n", c.host, "-o", "%T|%E", timeout=30)
    assert r.returncode == 0, r.stderr
    state, _, reason = r.stdout.strip().partition("|")
    # sinfo's suffixes (* not responding, ~ powered off, ...) are the daemon's, not the drain's.
    return state.rstrip("*~#!%$@^-"), reason


@pytest.fixture
def runs(tmp_path, cluster):
    host = socket.gethostname()
    floors = synthetic_floors(tmp_path, entries=[("synthetic H100", 18, "NV18", 2)])
    failing = node_run(tmp_path / "failing", host=host, gpus=2, scale={(1, "hbm"): 0.8}, noise=0.0)
    passing = node_run(tmp_path / "passing", host=host, gpus=2, noise=0.0)
    untested = node_run(tmp_path / "untested", host=host, gpus=2, noise=0.0, missing={(0, "hbm")})
    yield floors, failing, passing, untested
    cluster.run("scontrol", "update", f"NodeName={cluster.host}", "State=RESUME", timeout=30)


def test_a_failing_gate_drains_the_node_and_a_passing_one_resumes_it(cluster, runs):
    floors, failing, passing, untested = runs
    assert _sinfo(cluster)[0] in ("idle", "mixed")
    code, out = _gate(cluster, str(failing), "--floors", floors)
    assert code == 1, out
    state, reason = _sinfo(cluster)
    assert state in ("drained", "draining", "drain"), (state, reason)
    assert reason == "triaudit: hbm GPU 1 2,440 GB/s < 2,745 GB/s", reason
    assert f"slurm: {cluster.host}: drained: triaudit: hbm GPU 1" in out
    # Something not tested: the drain stays (the node is not known to be fit).
    code, out = _gate(cluster, str(untested), "--floors", floors)
    assert code == 3 and _sinfo(cluster)[1].startswith("triaudit: hbm GPU 1"), out
    code, out = _gate(cluster, str(passing), "--floors", floors)
    assert code == 0, out
    assert _sinfo(cluster) == ("idle", "none")
    assert f"slurm: {cluster.host}: resumed (triaudit's drain:" in out


def test_a_drain_someone_else_set_is_left_alone(cluster, runs):
    floors, failing, passing, _ = runs
    r = cluster.run(
        "scontrol", "update", f"NodeName={cluster.host}", "State=DRAIN", "Reason=maintenance: fan 3", timeout=30
    )
    assert r.returncode == 0, r.stderr
    code, out = _gate(cluster, str(passing), "--floors", floors)
    assert code == 0 and _sinfo(cluster)[1] == "maintenance: fan 3", out
    assert "drained by someone else ('maintenance: fan 3'): left alone" in out
    code, out = _gate(cluster, str(failing), "--floors", floors)
    assert code == 1 and _sinfo(cluster)[1] == "maintenance: fan 3", out  # its reason is not overwritten
    assert _sinfo(cluster)[0] in ("drained", "draining", "drain")


def test_slurm_node_names_one_host_only(tmp_path, capsys):
    node_run(tmp_path / "runs", host="synthetic-node-0", gpus=1)
    node_run(tmp_path / "runs", host="synthetic-node-1", gpus=1)
    assert cli.main(["gate", str(tmp_path / "runs"), "--slurm-drain", "--slurm-node", "n1"]) == 2
    assert "--slurm-node names one node; these results hold 2 hosts" in capsys.readouterr().err


def test_without_scontrol_the_verdict_stands_and_the_drain_is_said_undone(tmp_path, capsys, monkeypatch):
    from triaudit.fleet import drain

    monkeypatch.setattr(drain.shutil, "which", lambda *a, **k: None)
    run = node_run(tmp_path / "runs", gpus=1, scale={(0, "hbm"): 0.5})
    assert cli.main(["gate", str(run), "--floors", synthetic_floors(tmp_path), "--slurm-drain"]) == 1
    err = capsys.readouterr().err
    assert (
        "slurm: synthetic-node-0: --slurm-drain: scontrol not found (Slurm's client tools are not installed here)"
        in err
    )
