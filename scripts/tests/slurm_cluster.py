"""A real one-node Slurm cluster for tests, started and stopped by the `cluster` fixture
(conftest.py): munged, slurmctld and slurmd from Debian's packages (scripts/test.sh installs
them), a generated slurm.conf in a temporary folder (proctrack/linuxproc, task/none, this node's
CPU count, ports of its own). Used by test_slurm_cluster.py (fleet jobs) and test_gate_slurm.py
(draining and resuming the node).

Installs nothing. Without the packages, or when the daemons do not come up, the tests using it are
reported SKIPPED with the reason, never passed. Every daemon is stopped by its process id when the
fixture ends, whatever happens; no other process is touched.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

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
            stop_process(p)


def stop_process(p: subprocess.Popen) -> None:
    """A daemon a test started, stopped by its pid: SIGTERM, SIGKILL after 10 s."""
    if p.poll() is not None:
        return
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


def running_cluster():
    """Starts the cluster, yields it, stops it (a generator for a pytest fixture)."""
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
