"""A fleet job on a real one-node Slurm cluster (slurm_cluster.py; the `cluster` fixture of
conftest.py starts and stops it): `triaudit slurm submit` and `collect` as a user would run them.
Without Slurm and munge every test here is reported SKIPPED with the reason, never passed.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest
from conftest import REPO, _build_dir
from slurm_cluster import Cluster, _tail
from synthetic_fleet import fake_build, fake_nvidia_smi


def _triaudit(c: Cluster, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    e = dict(env or c.env, PYTHONPATH=str(REPO / "scripts"))
    return c.run(sys.executable, "-m", "triaudit", *args, env=e, timeout=timeout)


def test_srun_answers(cluster):
    n = min(2, cluster.cpus)
    r = cluster.run("srun", "-N1", f"-n{n}", "hostname", timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [socket.gethostname()] * n


def test_fleet_job_without_gpu_records_no_cuda_device(cluster, tmp_path, no_gpu_json):
    build = _build_dir()
    if not (build / "benchmarks" / "stream" / "triaudit_stream").exists():
        pytest.skip(f"{build} has no built executables (scripts/test.sh builds them first)")
    results = tmp_path / "fleet"
    # Devices hidden (sbatch passes the environment on), as the no_gpu_json fixture hides them: the
    # same answer on a machine with a GPU.
    env = dict(cluster.env, CUDA_VISIBLE_DEVICES="")
    sub = _triaudit(
        cluster, "slurm", "submit", "--nodes", "1", "--results", str(results), "--build-dir", str(build), env=env
    )
    assert sub.returncode == 0, sub.stderr
    job = sub.stdout.split()[0]
    assert job.isdigit() and f"script kept as {results / f'job-{job}.sbatch'}" in sub.stderr
    script = (results / f"job-{job}.sbatch").read_text()
    assert "#SBATCH --nodes=1" in script and f"export TRIAUDIT_BUILD_DIR={build}" in script

    col = _triaudit(cluster, "slurm", "collect", job, "--results", str(results), "--wait-s", "60")
    assert col.returncode == 77, col.stdout + col.stderr
    host = socket.gethostname()
    assert f"| {host} | no CUDA device (exit 77): " in col.stdout
    assert "accounting storage is disabled" not in col.stderr
    jobdir = results / f"job-{job}"
    [status] = list((jobdir / "hosts").glob("*.status"))
    rec = json.loads(status.read_text())
    assert rec["state"] == "no CUDA device" and rec["exit_code"] == 77 and rec["slurm"]["job_id"] == job
    said = json.loads(no_gpu_json.read_text())["context"]["gpu_unavailable_reason"]
    assert rec["reason"] == f"no CUDA device ({said})"  # the real executable's own words, whole
    record = json.loads((jobdir / "job.record").read_text())
    assert record["nodes"] == [host] and record["srun_exit_code"] == 77
    fleet = (jobdir / "report" / "fleet.md").read_text()
    assert "Slurm: FAILED, exit code 77:0" in fleet
    assert "accounting storage is disabled on this cluster (no slurmdbd): asked scontrol" in fleet
    assert f"| {host} | no CUDA device (exit 77): {said} |" in fleet
    assert "No result files: nothing was measured" in fleet
    assert (jobdir / "job.sbatch").exists()

    # The plain path, `sbatch scripts/slurm/triaudit.sbatch`, into the same folder: a folder of its
    # own; nothing of the first job lost or overwritten; a second collect writes report-2.
    before = {p: p.read_bytes() for p in results.rglob("*") if p.is_file()}
    plain = dict(
        env,
        TRIAUDIT_RESULTS=str(results),
        TRIAUDIT_BUILD_DIR=str(build),
        TRIAUDIT_PYTHON=sys.executable,
        TRIAUDIT_REPO=str(REPO),
    )
    r = cluster.run(
        "sbatch",
        "--parsable",
        f"--output={tmp_path}/plain-%j.out",
        str(REPO / "scripts/slurm/triaudit.sbatch"),
        env=plain,
    )
    assert r.returncode == 0, r.stderr
    job2 = r.stdout.strip().split(";")[0]
    col2 = _triaudit(cluster, "slurm", "collect", job2, "--results", str(results), "--wait-s", "60")
    assert col2.returncode == 77, col2.stdout + col2.stderr + _tail(tmp_path / f"plain-{job2}.out")
    assert len(list((results / f"job-{job2}" / "hosts").glob("*.status"))) == 1
    again = _triaudit(cluster, "slurm", "collect", job, "--results", str(results), "--wait-s", "5")
    assert again.returncode == 77 and (jobdir / "report-2" / "fleet.md").exists()
    assert all(p.read_bytes() == data for p, data in before.items())


def test_fleet_job_on_synthetic_gpus_is_measured_and_judged(cluster, tmp_path):
    """The success path through the real scheduler: a stand-in nvidia-smi listing 4 GPUs and
    stand-in executables (synthetic: the node has no GPU), reached through the job's PATH."""
    build = fake_build(tmp_path, names=("triaudit_stream",))
    smi = fake_nvidia_smi(
        tmp_path,
        [
            (i, f"GPU-{c * 8}-0000-4000-8000-{c * 12}", f"00000000:{0x18 + i:02X}:00.0", "Synthetic GPU")
            for i, c in enumerate("abcd")
        ],
    )
    bindir = tmp_path / "synthetic-bin"
    bindir.mkdir()
    (bindir / "nvidia-smi").symlink_to(smi)
    env = {k: v for k, v in cluster.env.items() if k != "CUDA_VISIBLE_DEVICES"}
    env.update(PATH=f"{bindir}:{env['PATH']}", SYNTHETIC_SLEEP_S="0.2")
    results = tmp_path / "fleet"
    sub = _triaudit(
        cluster, "slurm", "submit", "--nodes", "1", "--results", str(results), "--build-dir", str(build), env=env
    )
    assert sub.returncode == 0, sub.stderr
    job = sub.stdout.split()[0]
    col = _triaudit(cluster, "slurm", "collect", job, "--results", str(results), "--wait-s", "60", env=env)
    assert col.returncode == 0, col.stdout + col.stderr
    host = socket.gethostname()
    assert f"| {host} | measured 4 GPU(s) | 4 |" in col.stdout
    assert "**No outliers** in 1 judged (group, case) pair(s)." in col.stdout
    runs = list((results / f"job-{job}" / "synthetic-gpu").iterdir())
    assert len(runs) == 1
    assert sorted(p.name for p in runs[0].glob("*.json")) == ["manifest.json"] + [
        f"triaudit_stream.gpu{i}.json" for i in range(4)
    ]
    assert (results / f"job-{job}" / "report" / "report.html").exists()
