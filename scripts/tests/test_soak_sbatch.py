"""scripts/slurm/soak.sbatch outside Slurm: a stand-in `srun` that runs its command, the TEST
DOUBLE of triaudit_soak and a stand-in nvidia-smi (synthetic, not measurements). The script must
start a soak, and when run again as a requeued job would be, go on without refusing its own
options."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import synthetic_soak as S
from conftest import REPO
from soak_double import fake_nvidia_smi_on_path, fake_soak_build

SCRIPT = REPO / "scripts" / "slurm" / "soak.sbatch"
UUID = "GPU-5a4e0000-0000-4000-8000-00000000000b"


def test_the_job_script_soaks_and_can_run_again(tmp_path):
    bindir = fake_nvidia_smi_on_path(tmp_path, [(0, UUID, "00000000:18:00.0", S.H200)])
    srun = bindir / "srun"
    srun.write_text(
        '#!/bin/sh\n# stand-in srun: drops its options, runs the command\nwhile [ "${1#--}" != "$1" ]; do shift; done\nexec "$@"\n'
    )
    srun.chmod(srun.stat().st_mode | stat.S_IXUSR)
    results = tmp_path / "results"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNTHETIC_", "CUDA_VISIBLE", "SLURM"))}
    env.update(
        PATH=f"{bindir}:{os.environ['PATH']}",
        TRIAUDIT_REPO=str(REPO),
        TRIAUDIT_BUILD_DIR=str(fake_soak_build(tmp_path)),
        TRIAUDIT_RESULTS=str(results),
        TRIAUDIT_SOAK_DURATION="30m",
        TRIAUDIT_SOAK_ARGS="--window 10m",
        TRIAUDIT_PYTHON=sys.executable,
        TRIAUDIT_PLAIN_PROGRESS="1",
    )
    for n in (1, 2):
        p = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
        assert "triaudit soak job ?: exit 0" in p.stdout and "[gpu0 3/3 0h30m00s]" in p.stdout
        assert len(list(results.glob("nvidia-h200/*-soak*"))) == n  # a finished soak: the next run is a new one
