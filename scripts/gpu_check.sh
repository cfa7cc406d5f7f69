#!/usr/bin/env bash
# The GPU check: on a machine with a GPU, the CUDA toolkit, CMake and Python, but possibly no
# Google Benchmark, no GoogleTest and no network. Builds for the local GPU, runs every test
# (the `gpu` ones included), `doctor`, the suite, and the report; writes it all into OUT.
#
#   scripts/prepare_gpu_carry.sh            # beforehand, on a machine with network
#   scripts/gpu_check.sh OUT [PROFILE]      # on the GPU machine; PROFILE quick|full (default quick)
#
# At most 8 files land in OUT (the device tool's limit): nvidia-smi.txt (the machine as found, and
# `nvidia-smi -q`, `topo -m` and a clock/throttle snapshot before and after the suite), build.log,
# ctest.log, doctor.txt, run.log (the suite's log, then the clock-sampling A/B's table: what NVML
# polling costs the launch cases), report.html, results.tar.gz (the run folder, the smoke tests'
# JSON, the A/B's JSON, the peer tools' outputs and their imported runs, the whole report) and,
# when time is left and Nsight Compute is there, ncu.txt.
# Peer tools present on the machine (nccl-tests, nvbandwidth, BabelStream, mamf-finder:
# scripts/run_peers.sh) get GPU_CHECK_PEER_SECONDS (default 60) after the suite; without any, no
# time is kept for them.
# GPU_CHECK_SECONDS (default 520) bounds the whole script. The build makes the suite's executables
# first (ninja -k 0: one that fails to build does not stop the others), then the tests, each under
# a timeout; the suite runs with whatever was built. ctest and the suite get what the build left,
# so a lent machine's few minutes always end with the logs and whatever was measured.
# GPU_CHECK_NCU_SECONDS (default 90) is kept for Nsight Compute at the end.
set -uo pipefail
OUT=${1:?usage: scripts/gpu_check.sh OUT [quick|full]}
PROFILE=${2:-quick}
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$OUT"
start=$(date +%s)
BUDGET=${GPU_CHECK_SECONDS:-520}
stamp() { echo "[gpu_check +$(( $(date +%s) - start ))s] $*"; }
left() { echo $(( BUDGET - ($(date +%s) - start) - ${1:-0} )); }  # seconds left, less a reserve

# The machine as found (appended to nvidia-smi.txt): tools and libraries a failed build would blame.
{ nvidia-smi || echo "nvidia-smi failed"
  echo "--- toolchain"; uname -a; nvcc --version | tail -2; cmake --version | head -1; ninja --version
  python3 -c "import sys, importlib.util as u; print(sys.executable, sys.version.split()[0], *[m + ('' if u.find_spec(m) else ' MISSING') for m in ('pandas', 'matplotlib', 'torch', 'nvidia.nccl', 'nvidia.cublas')])"
  ls /usr/local/cuda/lib64/libcublasLt.so* /usr/local/cuda/lib64/libnccl.so* 2>&1
  command -v ncu cuobjdump nvdisasm mpirun; nproc; free -g | head -2; df -h . | tail -1
} > "$OUT/nvidia-smi.txt" 2>&1
extra=()
[ -d .carry/benchmark ] && extra+=("-DFETCHCONTENT_SOURCE_DIR_BENCHMARK=$PWD/.carry/benchmark" "-DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON")
[ -d .carry/googletest ] && extra+=("-DFETCHCONTENT_SOURCE_DIR_GOOGLETEST=$PWD/.carry/googletest")
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
# The python3 that holds PyTorch's wheels: CMake looks there for NCCL and cuBLAS when the
# toolkit has none (cmake/TriauditPythonPackageDir.cmake).
extra+=("-DPython3_EXECUTABLE=$(command -v python3)")

snapshot() {  # clocks, power and throttle reasons as the driver reports them now
  echo "--- clock/throttle snapshot: $1 ($(date -u +%FT%TZ))"
  nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv 2>&1 ||
    nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv 2>&1
}
{ echo "--- nvidia-smi -q"; nvidia-smi -q 2>&1; echo "--- nvidia-smi topo -m"; nvidia-smi topo -m 2>&1
  snapshot "before the build"
} >> "$OUT/nvidia-smi.txt"

stamp "configure + build (CUDA architectures: ${TRIAUDIT_CUDA_ARCHITECTURES:-native})"
# Warnings are not errors here: the host compiler there may be newer than CI's and warn about
# something new, and a failed build would measure nothing. CI keeps -Werror; warnings stay in
# build.log (counted below).
# ptxas's wgmma advisories warn here instead of failing the build (CI fails on them); a level they
# name is then timed as something it was not written to be: counted below, and in build.log.
# Every executable `triaudit run` runs (the corners' registry; scripts/tests/test_gpu_check_script.py
# holds this list equal to it, so a new corner is built here too).
EXES=(triaudit_stream triaudit_gemm triaudit_memcpy triaudit_launch triaudit_p2p triaudit_allreduce
  triaudit_allgather triaudit_reduce_scatter triaudit_alltoall triaudit_broadcast)
build_s=$(( BUDGET / 3 ))
k0=(); [ ${#gen[@]} -gt 0 ] && k0=(-- -k 0)
if ! timeout "$(left 60)" cmake -S . -B build/gpu "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DTRIAUDIT_WERROR=OFF \
    -DTRIAUDIT_PTXAS_ADVISORIES_FATAL=OFF -DCMAKE_CUDA_ARCHITECTURES="${TRIAUDIT_CUDA_ARCHITECTURES:-native}" \
    "${extra[@]}" > "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"; stamp "CONFIGURE FAILED"; exit 1
fi
# The executables first, every one that can be built (one failing does not stop the others) ...
timeout "$build_s" cmake --build build/gpu -j "$(nproc)" --target "${EXES[@]}" "${k0[@]}" >> "$OUT/build.log" 2>&1
exe_rc=$?
# ... then the tests, with what is left of the build's share.
timeout "$(( build_s > $(left 0) ? $(left 0) : build_s ))" cmake --build build/gpu -j "$(nproc)" "${k0[@]}" >> "$OUT/build.log" 2>&1
built=(); for e in "${EXES[@]}"; do [ -x "$(find build/gpu -name "$e" -type f 2>/dev/null | head -1)" ] && built+=("$e"); done
stamp "built ${#built[@]} of ${#EXES[@]} executables (exit $exe_rc): ${built[*]}; $(grep -c -i 'warning' "$OUT/build.log") line(s) of build.log mention a warning, $(grep -c -E '\(C75[0-9][0-9]\)' "$OUT/build.log") ptxas wgmma advisories"
if [ ${#built[@]} -eq 0 ]; then tail -40 "$OUT/build.log"; stamp "BUILD FAILED"; exit 1; fi

# ctest may use at most 40 % of what is left (the suite matters as much), each test 180 s.
ctest_s=$(( $(left 60) * 2 / 5 ))
stamp "ctest (all labels), at most ${ctest_s}s"
timeout -s INT "$ctest_s" ctest --test-dir build/gpu --output-on-failure --timeout 180 > "$OUT/ctest.log" 2>&1
ctest_rc=$?
[ $ctest_rc -eq 124 ] && echo "ctest stopped after ${ctest_s}s (GPU_CHECK_SECONDS)" | tee -a "$OUT/ctest.log"
grep -E "tests passed|Failed|\*\*\*" "$OUT/ctest.log" | tail -20

PYTHONPATH=scripts python3 -m triaudit doctor --build-dir build/gpu > "$OUT/doctor.txt" 2>&1
stamp "doctor exit $?"

# Kept back from the suite: 45 s for the report and the archive, and GPU_CHECK_NCU_SECONDS (default
# 90; 0 turns it off) for Nsight Compute at the end when it is installed.
ncu_s=${GPU_CHECK_NCU_SECONDS:-90}; command -v ncu >/dev/null || ncu_s=0
peer_s=${GPU_CHECK_PEER_SECONDS:-60}
# Time for the peer tools only when one is installed (run_peers.sh looks for them).
peers_present=$(PEERS_LIST_ONLY=1 bash scripts/run_peers.sh "$(mktemp -d)" 0 2>/dev/null | sed -n 's/^present: \([0-9]*\).*/\1/p')
[ "${peers_present:-0}" -gt 0 ] || peer_s=0
# 40 s for the clock-sampling A/B on the launch cases after the suite (scripts/clock_sampling_ab.py).
ab_s=${GPU_CHECK_AB_SECONDS:-40}
suite_s=$(left $(( 45 + ncu_s + peer_s + ab_s )))
stamp "suite, profile $PROFILE, at most ${suite_s}s"
# Each executable is capped by the time model (estimate x 3 + 30 s), the whole suite by suite_s.
PYTHONPATH=scripts PYTHONUNBUFFERED=1 python3 -m triaudit run --build-dir build/gpu --results results \
  --profile "$PROFILE" --budget-s "$suite_s" > "$OUT/run.log" 2>&1
run_rc=$?
snapshot "after the suite" >> "$OUT/nvidia-smi.txt"
tail -5 "$OUT/run.log"

# What NVML clock sampling costs the host-timed launch cases: TRIAUDIT_CLOCK_SAMPLING=off, regions
# (the default, NVML read outside the timed regions) and thread (0.3.0's, inside them), interleaved.
launch_exe=$(find build/gpu -name triaudit_launch -type f 2>/dev/null | head -1)
if [ "$ab_s" -gt 0 ] && [ -n "$launch_exe" ] && [ "$(left $(( 45 + ncu_s + peer_s )))" -gt "$ab_s" ]; then
  stamp "clock sampling A/B on the launch cases, at most ${ab_s}s"
  { echo "--- clock sampling A/B (scripts/clock_sampling_ab.py)"
    timeout "$ab_s" python3 scripts/clock_sampling_ab.py "$launch_exe" ab; echo "exit $?"
  } >> "$OUT/run.log" 2>&1
  sed -n '/--- clock sampling A\/B/,$p' "$OUT/run.log" | tail -12
fi
run_dir=$(sed -n 's/^run written to \([^;( ]*\).*/\1/p; s/^interrupted; partial run kept in \([^ ]*\) .*/\1/p' "$OUT/run.log" | tail -1)

# Peer tools on this machine, measured on the same card and imported beside the run (issue: peers).
peer_runs=()
if [ -n "$run_dir" ] && [ "$peer_s" -gt 0 ] && [ "$(left $(( 45 + ncu_s )))" -gt 30 ]; then
  stamp "peer tools, at most $(( $(left $(( 45 + ncu_s ))) < peer_s ? $(left $(( 45 + ncu_s ))) : peer_s ))s"
  bash scripts/run_peers.sh peers "$(( $(left $(( 45 + ncu_s ))) < peer_s ? $(left $(( 45 + ncu_s ))) : peer_s ))" >> "$OUT/run.log" 2>&1
  card=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('card',''))" "$run_dir/manifest.json" 2>/dev/null)
  for f in peers/nccl-tests_* peers/nvbandwidth.txt peers/babelstream.* peers/mamf-finder.txt; do
    [ -f "$f" ] || continue
    tool=$(basename "$f" | sed 's/_.*//; s/\..*//')
    more=(); [ "$tool" = nvbandwidth ] && more=(--buffer-size 256MiB)
    out=$(PYTHONPATH=scripts python3 -m triaudit import "$tool" "$f" --card "$card" --results results "${more[@]}" 2>&1)
    echo "import $f: $out" >> "$OUT/run.log"
    folder=$(echo "$out" | sed -n 's/^wrote //p' | tail -1)
    [ -n "$folder" ] && peer_runs+=("$folder")
  done
fi

if [ -n "$run_dir" ] && python3 -c "import pandas, matplotlib" 2>/dev/null; then
  PYTHONPATH=scripts python3 -m triaudit report "$run_dir" "${peer_runs[@]}" --include-incomplete --out report | tail -2
  cp report/report.html "$OUT/report.html"
fi
archive=("$run_dir" "${peer_runs[@]}")
smoke=(); while IFS= read -r f; do smoke+=("$f"); done < <(find build/gpu/tests -maxdepth 1 -name '*_smoke.json' 2>/dev/null)
archive+=("${smoke[@]}")
[ -d peers ] && archive+=(peers)
[ -d ab ] && archive+=(ab)
[ -d report ] && archive+=(report)
[ -n "$run_dir" ] && tar czf "$OUT/results.tar.gz" "${archive[@]}"

# If time is left: Nsight Compute's speed-of-light for the kernels whose aims most need a "why"
# (STREAM triad on 1 GiB arrays; ladder levels 3 and 5 at 8192^3). Clocks are left alone.
if [ "$ncu_s" -gt 0 ] && [ "$(left 15)" -gt 45 ]; then
  stamp "ncu speed of light (at most $(left 15)s)"
  # ncu serialises kernel launches: a stream held by the latch could only wait for its timeout.
  export TRIAUDIT_NO_LATCH=1
  # One kernel each (-c 1): the first launch of the kernel named, before any timing.
  { timeout 60 ncu --clock-control none --section SpeedOfLight -k regex:triad_kernel -c 1 \
      build/gpu/benchmarks/stream/triaudit_stream --ops=triad --types=fp32 --min-bytes=1GiB --max-bytes=1GiB \
      --cache=cold --sustained-s=0 --min-time=0.01 --warmup-s=0
    for level in 3 5; do
      kernel=mma_kernel; [ "$level" = 5 ] && kernel=ws_kernel
      timeout "$(( $(left 15) / 2 ))" ncu --clock-control none --section SpeedOfLight -k "regex:$kernel" -c 1 \
        build/gpu/benchmarks/gemm/triaudit_gemm --families=ladder "--benchmark_filter=ladder_l${level}.*m:8192/" \
        --min-time=0.01 --warmup-s=0
    done
  } > "$OUT/ncu.txt" 2>&1
  unset TRIAUDIT_NO_LATCH
fi
stamp "done: ctest exit $ctest_rc, suite exit $run_rc"
[ $ctest_rc -eq 0 ] && [ $run_rc -eq 0 ]
