#!/usr/bin/env python3
"""A collective's bootstrap without a GPU (triaudit_allreduce, triaudit_allgather, ...).

1. triaudit_<collective> (built without MPI) started as one of several processes refuses to run
   (exit 2) and says what to do: with the launcher's variables set, and under a real mpirun.
2. triaudit_<collective>_mpi --dry-run under `mpirun -np 2`: both ranks get the same NCCL unique
   id (the broadcast worked) and each its local rank and device mapping (or the reason there is
   no device).
3. The ranks agree on every case's outcome: under `mpirun -np 2` with every device hidden, rank 1
   fails the first case on purpose (TRIAUDIT_FAIL_CASE); rank 0's result file shows that case
   failed, naming rank 1, and the next one skipped with the no-device reason; rank 1 writes no
   file; the job exits 77 (no device), and no rank hangs.
Usage: check_collective_launch.py SINGLE_EXE [MPI_EXE MPIRUN]
"""

import json
import os
import re
import subprocess
import sys
import tempfile


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
            fail(f"{name}_mpi {' '.join(args)}: exit {r.returncode} (expected {code}), output {r.stdout + r.stderr!r}")
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
    check_agreement(mpi_exe, mpirun, env)


def check_agreement(mpi_exe, mpirun, env):
    listing = subprocess.run([mpi_exe, "--benchmark_list_tests"], capture_output=True, text=True, timeout=60)
    names = [n.removesuffix("/manual_time") for n in listing.stdout.split()]
    if listing.returncode != 0 or len(names) < 2:
        fail(f"the MPI build's catalogue without a launcher: exit {listing.returncode}, {listing.stderr!r}")
    first, second = names[0], names[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "agreement.json")
        run_env = dict(env, CUDA_VISIBLE_DEVICES="", TRIAUDIT_FAIL_CASE=f"1:^{re.escape(first)}$")
        cmd = [mpirun, "-np", "2", mpi_exe, f"--benchmark_filter=^({re.escape(first)}|{re.escape(second)})/"]
        r = subprocess.run([*cmd, f"--benchmark_out={out}"], env=run_env, capture_output=True, text=True, timeout=180)
        if r.returncode != 77:
            fail(f"mpirun -np 2 without a device: exit {r.returncode}, expected 77\n{r.stdout}\n{r.stderr}")
        with open(out) as f:
            runs = {b["name"].removesuffix("/manual_time"): b for b in json.load(f)["benchmarks"]}
        if sorted(runs) != sorted([first, second]):
            fail(f"rank 0's result file holds {sorted(runs)}, expected {[first, second]}")
        got_first = runs[first].get("error_message", "")
        if got_first != "error: rank 1: failed on purpose (TRIAUDIT_FAIL_CASE)":
            fail(f"{first}: rank 1's failure was not every rank's outcome: {got_first!r}")
        got_second = runs[second].get("error_message", "")
        if not got_second.startswith("skipped: no CUDA device ("):
            fail(f"{second}: not skipped with the no-device reason after the failed case: {got_second!r}")
        if sorted(os.listdir(tmp)) != ["agreement.json"]:
            fail(f"another rank wrote a file: {sorted(os.listdir(tmp))}")
    print(f"mpirun -np 2: rank 1's failure in {first} is every rank's; the next case skipped on both; one file")


if __name__ == "__main__":
    main()
