#!/usr/bin/env bash
# Runs the peer tools present on this GPU machine, each within its share of SECONDS, and keeps
# their output in OUT_DIR for `triaudit import`:
#
#   scripts/run_peers.sh OUT_DIR SECONDS
#
# Looked for (PATH first, then the usual build folders; *_DIR / MAMF_FINDER override):
#   nccl-tests   all_reduce_perf          ($NCCL_TESTS_DIR, ./nccl-tests/build, ~/nccl-tests/build, /opt/nccl-tests/build, ...)
#   nvbandwidth  nvbandwidth              ($NVBANDWIDTH_DIR, ./nvbandwidth, ~/nvbandwidth, /opt/nvbandwidth, ...)
#   BabelStream  cuda-stream, babelstream ($BABELSTREAM_DIR, ./BabelStream/build, ~/BabelStream/build, ...)
#   mamf-finder  mamf-finder.py           ($MAMF_FINDER, ./ml-engineering/compute/accelerator/benchmarks, ...)
#                with a python3 that imports torch and sees a GPU
# Sizes follow triaudit's quick profile where the tool lets us choose: allreduce 8 B-64 MiB FP32 and
# BF16, copies of 256 MiB (nvbandwidth -b 256), STREAM FP32 arrays of 1 GiB, BF16 GEMMs 4096-8192.
# Each present tool gets an equal share of what is left when it starts (a fast tool leaves more for
# the next); a tool still running at its share gets SIGINT (mamf-finder then prints its best so far),
# then SIGKILL 10 s later. Output files (at most 6 besides peers.txt and peers.log):
#   nccl-tests_allreduce_fp32.txt, nccl-tests_allreduce_bf16.txt, nvbandwidth.txt, babelstream.csv
#   (babelstream.txt when --csv is refused), mamf-finder.txt
# peers.txt says which tools were found (and where), which were absent, each exit code, and the
# `triaudit import` commands for the files; peers.log keeps the tools' stderr.
# Exit: 0 every present tool finished (or none is present), 1 a tool failed or ran out of time,
# 2 bad usage.
set -uo pipefail

usage() { echo "usage: scripts/run_peers.sh OUT_DIR SECONDS" >&2; exit 2; }
[ $# -eq 2 ] || usage
OUT=$1
TOTAL=$2
case $TOTAL in ''|*[!0-9]*) echo "run_peers.sh: SECONDS must be a whole number, not '$TOTAL'" >&2; exit 2 ;; esac
mkdir -p "$OUT" || { echo "run_peers.sh: cannot create $OUT" >&2; exit 2; }
SUMMARY="$OUT/peers.txt"
LOG="$OUT/peers.log"
: > "$SUMMARY"
: > "$LOG"
start=$(date +%s)
failed=0
say() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $(( TOTAL - ($(date +%s) - start) )); }

# The first executable named $1 on PATH or in the folders after it.
find_exe() {
  local name=$1 dir
  shift
  if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
  for dir in "$@"; do
    [ -n "$dir" ] && [ -x "$dir/$name" ] && [ -f "$dir/$name" ] && { echo "$dir/$name"; return 0; }
  done
  return 1
}

# Runs a command with a share of the time left, stdout to $1, stderr appended to peers.log.
run_share() {
  local out=$1 share=$2 rc
  shift 2
  echo "\$ $*" >> "$LOG"
  timeout -s INT -k 10 "$share" "$@" > "$out" 2>> "$LOG"
  rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    say "  stopped after its share of ${share}s (exit $rc): $out may be cut short"
  fi
  return "$rc"
}

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
[ "${gpus:-0}" -gt 0 ] || gpus=1

here=$(pwd)
nccl=$(find_exe all_reduce_perf "${NCCL_TESTS_DIR:-}" "${NCCL_TESTS_DIR:-.}/build" "$here/nccl-tests/build" \
  "$HOME/nccl-tests/build" /opt/nccl-tests/build /opt/nccl_tests/build /workspace/nccl-tests/build /usr/local/bin) || nccl=
nvbw=$(find_exe nvbandwidth "${NVBANDWIDTH_DIR:-}" "$here/nvbandwidth" "$HOME/nvbandwidth" /opt/nvbandwidth \
  /workspace/nvbandwidth /usr/local/bin) || nvbw=
bs=
for name in cuda-stream babelstream; do
  bs=$(find_exe "$name" "${BABELSTREAM_DIR:-}" "$here/BabelStream/build" "$HOME/BabelStream/build" \
    /opt/BabelStream/build /workspace/BabelStream/build /usr/local/bin) && break
  bs=
done
mamf=
for f in "${MAMF_FINDER:-}" "$(command -v mamf-finder.py 2>/dev/null || true)" \
    "$here/ml-engineering/compute/accelerator/benchmarks/mamf-finder.py" \
    "$HOME/ml-engineering/compute/accelerator/benchmarks/mamf-finder.py" /opt/ml-engineering/compute/accelerator/benchmarks/mamf-finder.py; do
  if [ -n "$f" ] && [ -f "$f" ]; then mamf=$f; break; fi
done
torch_ok=no
if [ -n "$mamf" ] && python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>>"$LOG"; then
  torch_ok=yes
fi

present=()
[ -n "$nccl" ] && present+=(nccl-tests)
[ -n "$nvbw" ] && present+=(nvbandwidth)
[ -n "$bs" ] && present+=(babelstream)
[ -n "$mamf" ] && [ "$torch_ok" = yes ] && present+=(mamf-finder)

# PEERS_LIST_ONLY=1: say how many are installed and stop (scripts/gpu_check.sh keeps no time for none).
if [ -n "${PEERS_LIST_ONLY:-}" ]; then echo "present: ${#present[@]} ${present[*]}"; exit 0; fi
say "run_peers.sh: ${TOTAL}s for ${#present[@]} peer tool(s) on $gpus GPU(s)"
found_or_absent() {  # $1 name, $2 path found (or empty), $3 where it was looked for
  if [ -n "$2" ]; then say "found $1: $2"; else say "absent: $1 ($3)"; fi
}
found_or_absent nccl-tests "$nccl" "no all_reduce_perf on PATH or in the usual build folders; NCCL_TESTS_DIR=..."
found_or_absent nvbandwidth "$nvbw" "not on PATH or in the usual folders; NVBANDWIDTH_DIR=..."
found_or_absent BabelStream "$bs" "no cuda-stream/babelstream on PATH or in the usual build folders; BABELSTREAM_DIR=..."
if [ -z "$mamf" ]; then
  say "absent: mamf-finder (no mamf-finder.py found; MAMF_FINDER=/path/to/mamf-finder.py)"
elif [ "$torch_ok" != yes ]; then
  say "absent: mamf-finder's PyTorch (found $mamf, but python3 cannot import torch or sees no GPU)"
else
  say "found mamf-finder: $mamf"
fi

imports=()
remaining=${#present[@]}
share() {  # an equal share of what is left for the tools not yet run
  local l
  l=$(left)
  [ "$remaining" -gt 0 ] || remaining=1
  echo $(( l > 0 ? l / remaining : 0 ))
}

for tool in "${present[@]}"; do
  s=$(share)
  remaining=$(( remaining - 1 ))
  if [ "$s" -lt 10 ]; then
    say "not run: $tool (${s}s left for it)"
    failed=1
    continue
  fi
  case $tool in
    nccl-tests)
      half=$(( s / 2 ))
      for dtype in float bfloat16; do
        short=$([ "$dtype" = float ] && echo fp32 || echo bf16)
        f="$OUT/nccl-tests_allreduce_${short}.txt"
        say "running nccl-tests all_reduce_perf -d $dtype on $gpus GPU(s), at most ${half}s"
        if run_share "$f" "$half" "$nccl" -b 8 -e 64M -f 2 -g "$gpus" -d "$dtype"; then
          imports+=("triaudit import nccl-tests $f --results results")
        else
          say "  nccl-tests -d $dtype failed (exit $?); see $LOG"; failed=1
        fi
      done ;;
    nvbandwidth)
      f="$OUT/nvbandwidth.txt"
      tests=(host_to_device_memcpy_ce device_to_host_memcpy_ce host_to_device_bidirectional_memcpy_ce device_local_copy host_to_device_memcpy_sm)
      [ "$gpus" -gt 1 ] && tests+=(device_to_device_memcpy_write_ce device_to_device_memcpy_read_sm device_to_device_memcpy_write_sm)
      say "running nvbandwidth -b 256 (${#tests[@]} testcases), at most ${s}s"
      if run_share "$f" "$s" "$nvbw" -b 256 -t "${tests[@]}"; then
        imports+=("triaudit import nvbandwidth $f --buffer-size 256MiB --results results")
      else
        say "  nvbandwidth failed (exit $?); see $LOG"; failed=1
      fi ;;
    babelstream)
      f="$OUT/babelstream.csv"
      say "running BabelStream --float --arraysize 268435456 (1 GiB arrays) --csv, at most ${s}s"
      # stderr into the same file: BabelStream reports a failed validation there.
      echo "\$ $bs --float --arraysize 268435456 --csv" >> "$LOG"
      timeout -s INT -k 10 "$s" "$bs" --float --arraysize 268435456 --csv > "$f" 2>&1
      rc=$?
      if [ "$rc" -ne 0 ] && grep -qi "unrecognized\|unknown" "$f"; then
        f="$OUT/babelstream.txt"
        say "  this BabelStream has no --csv: the text table instead"
        rm -f "$OUT/babelstream.csv"
        echo "\$ $bs --float --arraysize 268435456" >> "$LOG"
        s2=$(( $(left) / (remaining + 1) ))
        [ "$s2" -ge 10 ] || s2=10
        timeout -s INT -k 10 "$s2" "$bs" --float --arraysize 268435456 > "$f" 2>&1
        rc=$?
      fi
      if [ "$rc" -eq 0 ]; then
        imports+=("triaudit import babelstream $f --results results")
      else
        say "  BabelStream failed (exit $rc); see $f"; failed=1
      fi ;;
    mamf-finder)
      f="$OUT/mamf-finder.txt"
      help=$(python3 "$mamf" --help 2>&1 || true)
      args=(--m_range 4096 8193 4096 --n_range 4096 8193 4096 --k_range 4096 8193 4096 --output_file "$f")
      grep -q -- "--dtype" <<< "$help" && args+=(--dtype bfloat16)
      grep -q -- "--search" <<< "$help" && args+=(--search grid)
      say "running mamf-finder (BF16, 8 shapes 4096-8192), at most ${s}s"
      # Its log goes to --output_file; what it prints goes to peers.log.
      echo "\$ python3 $mamf ${args[*]}" >> "$LOG"
      timeout -s INT -k 10 "$s" python3 "$mamf" "${args[@]}" >> "$LOG" 2>&1
      rc=$?
      if [ -s "$f" ] && grep -q "best outcome" "$f"; then
        imports+=("triaudit import mamf-finder $f --results results")
        [ "$rc" -ne 0 ] && say "  mamf-finder stopped (exit $rc) after its summary: the best of the shapes it reached"
      else
        say "  mamf-finder wrote no summary (exit $rc); see $LOG"; failed=1
      fi ;;
  esac
done

if [ ${#imports[@]} -gt 0 ]; then
  say "import with:"
  for c in "${imports[@]}"; do say "  $c"; done
fi
say "run_peers.sh: done in $(( $(date +%s) - start ))s"
exit "$failed"
