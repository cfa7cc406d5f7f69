"""A real one-node Slurm cluster, started and stopped by this test: munged, slurmctld and slurmd
from Debian's packages (scripts/test.sh installs them), a generated slurm.conf in a temporary
folder (proctrack/linuxproc, task/none, this node's CPU count, ports of its own). A fleet job goes
through `triaudit slurm submit` and `collect` as a user would run them.

Installs nothing. Without the packages, or when the daemons do not come up, every test here is
reported SKIPPED with the reason, never passed. Every daemon is stopped by its process id in the
fixture's teardown, whatever happens; no other process is touched.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import REPO, _build_dir
from synthetic_fleet import fake_build, fake_nvidia_smi

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("srun", "sbatch", "scontrol", "sinfo", "scancel")


def _which(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/bin")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, n: int = 8) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-n:])
    except OSError:
        return "(no log)"


SLURM_CONF = """\
ClusterName=triaudittest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SrunPortRange={srun_lo}-{srun_hi}
SlurmUser={user}
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={base}/munge/munge.socket
CredType=cred/munge
StateSaveLocation={base}/state
SlurmdSpoolDir={base}/spool
SlurmctldPidFile={base}/run/slurmctld.pid
SlurmdPidFile={base}/run/slurmd.pid
SlurmctldLogFile={base}/log/slurmctld.log
SlurmdLogFile={base}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
KillWait=2
MinJobAge=600
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=triaudit Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


class Cluster:
    def __init__(self, base: Path, env: dict, host: str, cpus: int):
        self.base, self.env, self.host, self.cpus = base, env, host, cpus
        self.procs: list[tuple[str, subprocess.Popen]] = []

    def start(self, name: str, cmd: list[str]) -> subprocess.Popen:
        log = open(self.base / "log" / f"{name}.out", "w")
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        log.close()
        self.procs.append((name, p))
        return p

    def run(self, *cmd: str, timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, env=env or self.env)

    def stop(self) -> None:
        """Cancel what still runs on it, then stop each daemon we started, by its pid, newest first."""
        if any(p.poll() is None for n, p in self.procs if n == "slurmctld"):
            try:
                self.run("scancel", "--full", "--partition=triaudit", timeout=15)
            except (OSError, subprocess.SubprocessError):
                pass
        for _name, p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(timeout=5)


def _wait_for(check, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.2)
    return False


@pytest.fixture(scope="module")
def cluster():
    missing = [n for n in DAEMONS + CLIENTS if _which(n) is None]
    if missing:
        pytest.skip(
            f"Slurm/munge not installed ({', '.join(missing)} missing; scripts/test.sh installs "
            "slurmctld slurmd slurm-client munge when run as root)"
        )
    host = socket.gethostname()
    cpus = os.cpu_count() or 1
    # Under /tmp, world-traversable: munged refuses a socket folder others cannot reach, and
    # pytest's own tmp folders are private.
    base = Path(tempfile.mkdtemp(prefix="triaudit-slurm-", dir="/tmp"))
    base.chmod(0o755)
    for d in ("munge", "state", "spool", "log", "run"):
        (base / d).mkdir()
        (base / d).chmod(0o755)
    key = base / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    lo = _free_port()
    user = "root" if os.geteuid() == 0 else os.environ.get("USER", "root")
    (base / "slurm.conf").write_text(
        SLURM_CONF.format(
            host=host,
            base=base,
            cpus=cpus,
            user=user,
            ctld_port=_free_port(),
            d_port=_free_port(),
            srun_lo=60001 + lo % 2000,
            srun_hi=60001 + lo % 2000 + 100,
        )
    )
    # Nothing of an enclosing Slurm job (a CI runner can be one) may leak into this cluster's commands.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update(SLURM_CONF=str(base / "slurm.conf"), PATH=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    c = Cluster(base, env, host, cpus)
    try:
        m = c.start(
            "munged",
            [
                _which("munged"),
                "-F",
                f"--socket={base}/munge/munge.socket",
                f"--key-file={key}",
                f"--pid-file={base}/run/munged.pid",
                f"--log-file={base}/log/munged.log",
                f"--seed-file={base}/munge/munged.seed",
            ],
        )
        if (
            not _wait_for(lambda: (base / "munge" / "munge.socket").exists() or m.poll() is not None, 10)
            or m.poll() is not None
        ):
            pytest.skip(f"munged did not start: {_tail(base / 'log' / 'munged.out')}")
        ctld = c.start("slurmctld", [_which("slurmctld"), "-D", "-f", str(base / "slurm.conf")])
        d = c.start("slurmd", [_which("slurmd"), "-D", "-f", str(base / "slurm.conf"), "-N", host])

        def idle() -> bool:
            if ctld.poll() is not None or d.poll() is not None:
                return True
            r = c.run("sinfo", "-h", "-N", "-o", "%T", timeout=10)
            return r.returncode == 0 and r.stdout.strip() in ("idle", "mixed")

        if not _wait_for(idle, 30) or ctld.poll() is not None or d.poll() is not None:
            pytest.skip(
                f"Slurm did not come up: slurmctld: {_tail(base / 'log' / 'slurmctld.log')} "
                f"slurmd: {_tail(base / 'log' / 'slurmd.log')} {_tail(base / 'log' / 'slurmd.out')}"
            )
        yield c
    finally:
        c.stop()
        shutil.rmtree(base, ignore_errors=True)


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
