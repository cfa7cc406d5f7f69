#!/usr/bin/env python3
"""A collective's bootstrap without a GPU (triaudit_allreduce, triaudit_allgather, ...).

1. triaudit_<collective> (built without MPI) started as one of several processes refuses to run
   (exit 2) and says what to do: with the launcher's variables set, and under a real mpirun.
2. triaudit_<collective>_mpi --dry-run under `mpirun -np 2`: both ranks get the same NCCL unique
   id (the broadcast worked) and each its local rank and device mapping (or the reason there is
   no device).
Usage: check_collective_launch.py SINGLE_EXE [MPI_EXE MPIRUN]
"""

import os
import re
import subprocess
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    single = sys.argv[1]
    name = os.path.basename(single)
    env = dict(os.environ, OMPI_COMM_WORLD_SIZE="4")
    r = subprocess.run([single], env=env, capture_output=True, text=True, timeout=60)
    if r.returncode != 2 or "one of 4 processes" not in r.stderr or f"{name}_mpi" not in r.stderr:
        fail(f"the single-process trap was not refused: exit {r.returncode}, {r.stderr!r}")
    print("single-process build refuses to run as one of several processes")
    if len(sys.argv) < 4:
        print("no MPI build: the mpirun checks are not applicable")
        return
    mpi_exe, mpirun = sys.argv[2], sys.argv[3]
    # The MPI build checks its command line before MPI and CUDA, like every other executable:
    # --help answers (0), a stray word and a bad value are refused naming them (2). It used to
    # bootstrap first and answer all three with 77 on a machine without a GPU.
    plain = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    for args, code, needle in (
        (["--help"], 0, "triaudit flags"),
        (["junk"], 2, "junk"),
        (["--algos=foo"], 2, "--algos=foo"),
        (["--min-time=-3"], 2, "--min-time"),
    ):
        r = subprocess.run([mpi_exe, *args], env=plain, capture_output=True, text=True, timeout=60)
        if r.returncode != code or needle not in (r.stdout + r.stderr):
            fail(
                f"{name}_mpi {' '.join(args)}: exit {r.returncode} (expected {code}), output {r.stdout + r.stderr!r}"
            )
    print(f"{name}_mpi: --help, a stray word and a bad flag answered before the MPI bootstrap")
    env = dict(
        os.environ,
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_rmaps_base_oversubscribe="1",
    )
    r = subprocess.run([mpirun, "-np", "2", mpi_exe, "--dry-run"], env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"mpirun -np 2 --dry-run exited {r.returncode}\n{r.stdout}\n{r.stderr}")
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("rank ")]
    if len(lines) != 2:
        fail(f"expected one line per rank, got {r.stdout!r}")
    ids = {re.search(r"unique id (\S+);", ln).group(1) for ln in lines}
    if len(ids) != 1 or "FAILED" in ids:
        fail(f"the ranks do not share one NCCL unique id: {lines}")
    for want in ("rank 0 of 2", "rank 1 of 2", "local rank 0 of 2", "local rank 1 of 2"):
        if not any(want in ln for ln in lines):
            fail(f"missing '{want}' in {lines}")
    # A device, or the reason there is none: no GPU here, or fewer GPUs than ranks (2 ranks on a
    # one-GPU machine).
    if not all(
        re.search(
            r"device (\d+$|no CUDA device|\d+ ranks on this node but \d+ visible GPUs|local ranks \d+ and \d+ would share one GPU)",
            ln,
        )
        for ln in lines
    ):
        fail(f"no device mapping (or reason) per rank: {lines}")
    r = subprocess.run([mpirun, "-np", "2", single], env=env, capture_output=True, text=True, timeout=120)
    if r.returncode == 0 or "refusing to run" not in r.stderr:
        fail(f"under mpirun the single-process build did not refuse: exit {r.returncode}")
    print("mpirun -np 2: unique id exchanged, ranks mapped; single-process build refused under mpirun")


if __name__ == "__main__":
    main()
