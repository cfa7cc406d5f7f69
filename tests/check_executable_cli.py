#!/usr/bin/env python3
"""Runs a triaudit executable the way a user without a GPU would, and checks what it says.

1. Every device hidden (CUDA_VISIBLE_DEVICES=""): exit code 77, a plain "no CUDA device"
   message, and JSON in which every case is skipped with that reason (never a number).
2. Bad flags: exit code 2 and a message naming the flag.
3. The catalogue (--benchmark_list_tests) is the same with and without a device, each name once.
4. The result file: an existing --benchmark_out is refused unless --force, and written whole or
   not at all.
Valid on machines with and without a GPU.
Usage: check_executable_cli.py EXECUTABLE FILTER [BAD_FLAG ...]
  FILTER: a --benchmark_filter regex selecting a few cases; BAD_FLAG: extra flags to refuse.
"""

import ctypes
import json
import os
import subprocess
import sys
import tempfile


def run(exe, *args, hide_devices=True):
    env = dict(os.environ)
    if hide_devices:
        env["CUDA_VISIBLE_DEVICES"] = ""
    return subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=120)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    exe, case_filter, extra_bad = sys.argv[1], sys.argv[2], sys.argv[3:]
    name = os.path.basename(exe)

    listing = run(exe, "--benchmark_list_tests")
    if listing.returncode != 0:
        fail(f"--benchmark_list_tests exited {listing.returncode}: {listing.stderr}")
    catalogue = [line for line in listing.stdout.splitlines() if line.strip()]
    if not catalogue:
        fail("empty catalogue")
    # One name, one case: a name registered twice makes two cases' repetitions share a name, which
    # the report can only call a conflict (an error) on every run.
    twice = sorted({n for n in catalogue if catalogue.count(n) > 1})
    if twice:
        fail(f"{len(twice)} case name(s) registered twice, e.g. {twice[0]}")
    if run(exe, "--benchmark_list_tests", hide_devices=False).stdout.splitlines() != listing.stdout.splitlines():
        fail("catalogue differs with the device visible")

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        r = run(exe, f"--benchmark_filter={case_filter}", f"--benchmark_out={out}", "--benchmark_out_format=json")
        if r.returncode != 77:
            fail(f"no-GPU run exited {r.returncode}, expected 77\n{r.stdout}\n{r.stderr}")
        if "no CUDA device" not in r.stderr:
            fail(f"no-GPU run does not say 'no CUDA device': {r.stderr!r}")
        with open(out) as f:
            data = json.load(f)
        if data["context"].get("gpu_available") != "false" or not data["context"].get("gpu_unavailable_reason"):
            fail(f"context lacks gpu_available=false and the reason: {data['context']}")
        runs = data["benchmarks"]
        if not runs:
            fail("no benchmark in the JSON")
        for b in runs:
            msg = b.get("error_message") or b.get("skip_message") or ""
            if not msg.startswith("skipped: no CUDA device ("):
                fail(f"{b['name']}: not skipped with the reason: {msg!r}")
            if "bytes_per_second" in b:
                fail(f"{b['name']}: a skipped case carries a number")
        print(f"{name}: no-GPU path ok ({len(runs)} cases skipped, exit 77)")
        # Without any driver the reason must say so, not "driver version is insufficient".
        try:
            ctypes.CDLL("libcuda.so.1")
            driver_present = True
        except OSError:
            driver_present = False
        if not driver_present and "no NVIDIA driver found (libcuda.so.1 not loadable)" not in r.stderr:
            fail(f"no driver on this machine, but the message says otherwise: {r.stderr!r}")
        ctx = data["context"]
        if ctx.get("triaudit_schema_version") != "2" or not ctx.get("host"):
            fail(f"context lacks triaudit_schema_version / host: {ctx}")
        # CUDA_LAUNCH_BLOCKING=1 makes every held stream wait out its timeout: the hold is off, and said so.
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="", CUDA_LAUNCH_BLOCKING="1")
        out2 = os.path.join(tmp, "latch.json")
        r = subprocess.run(
            [exe, f"--benchmark_filter={case_filter}", f"--benchmark_out={out2}", "--benchmark_out_format=json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        with open(out2) as f:
            latch = json.load(f)["context"].get("stream_latch", "")
        if not latch.startswith("off (CUDA_LAUNCH_BLOCKING"):
            fail(f"with CUDA_LAUNCH_BLOCKING=1 the context says stream_latch={latch!r}")

        # 4. The result file: an existing one is refused (and left as it was) unless --force; the
        # file appears whole or not at all (no .partial left); a run matching nothing writes none.
        mine = os.path.join(tmp, "mine.json")
        with open(mine, "w") as f:
            f.write('{"a user\'s": "result"}\n')
        r = run(exe, f"--benchmark_filter={case_filter}", f"--benchmark_out={mine}")
        if r.returncode != 2 or "refusing to overwrite" not in r.stderr or mine not in r.stderr:
            fail(f"an existing --benchmark_out: exit {r.returncode}, {r.stderr!r}")
        with open(mine) as f:
            if f.read() != '{"a user\'s": "result"}\n':
                fail("an existing --benchmark_out was changed although it was refused")
        r = run(exe, f"--benchmark_filter={case_filter}", f"--benchmark_out={mine}", "--force")
        with open(mine) as f:
            if r.returncode != 77 or not json.load(f)["benchmarks"]:
                fail(f"--force did not replace the file with the run: exit {r.returncode}")
        if os.path.exists(mine + ".partial") or os.path.exists(out + ".partial"):
            fail("a finished run left its .partial file")
        nothing = os.path.join(tmp, "nothing.json")
        r = run(exe, "--benchmark_filter=no-case-is-called-this", f"--benchmark_out={nothing}")
        if r.returncode != 2 or os.path.exists(nothing) or os.path.exists(nothing + ".partial"):
            fail(f"a filter matching nothing wrote a result file (exit {r.returncode})")
        print(f"{name}: result file: existing one refused, --force replaces, nothing written for no case")

    bad_flags = [
        ("--benchmark_repetitions=-1", "--benchmark_repetitions=-1"),
        ("--benchmark_repetitions=0", "--benchmark_repetitions=0"),
        ("--benchmark_min_time=10x", "--benchmark_min_time=10x"),
        ("--benchmark_out_format=csv", "--benchmark_out_format=csv"),
        ("--benchmark_out=", "--benchmark_out"),
        ("--device=abc", "--device=abc"),
        ("--no-such-flag", "--no-such-flag"),
        ("--bind-numa=maybe", "--bind-numa=maybe"),
        ("--min-time=-1", "--min-time=-1"),
    ]
    bad_flags += [(flag, flag.split("=")[0]) for flag in extra_bad]
    for bad, needle in bad_flags:
        r = run(exe, bad)
        if r.returncode != 2:
            fail(f"{bad}: exited {r.returncode}, expected 2\n{r.stderr}")
        if needle not in r.stderr:
            fail(f"{bad}: message does not name it: {r.stderr!r}")
    r = run(exe, "--benchmark_filter=no-case-is-called-this")
    if r.returncode != 2 or "no case matches" not in r.stderr:
        fail(f"a filter matching nothing: exit {r.returncode}, {r.stderr!r}")
    print(f"{name}: bad flags refused with exit 2")


if __name__ == "__main__":
    main()
