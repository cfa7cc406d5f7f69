#!/usr/bin/env bash
# Compiler launcher for the Hopper ladder levels: runs the compile, passes its output on, and
# fails it when ptxas printed a performance advisory about the wgmma pipeline (C7510-C7519:
# "wgmma.mma_async instructions are serialized ...", "warpgroup.wait is injected ...",
# "warpgroup.arrive is injected ..."). ptxas prints these as `info`, which -Werror does not catch,
# and each one means the kernel no longer keeps MMAs in flight as written: a level would be
# timed as something it is not.
# Usage (CMake's CUDA_COMPILER_LAUNCHER): ptxas_advisories.sh <fatal|warn> <compiler> <args...>
set -u
mode=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Into a file, then passed on: `wait` does not wait for a `2> >(tee ...)` process substitution, so
# grepping a tee'd log could run before the advisory reached it.
"$@" 2>"$log"
rc=$?
cat "$log" >&2
if [ "$rc" -ne 0 ]; then
  exit "$rc"
fi
if grep -qE '\(C75(1[0-9])\)' "$log"; then
  if [ "$mode" = fatal ]; then
    echo "error: ptxas serialised or re-ordered the wgmma pipeline (advisories above); fix the kernel," \
      "or configure with -DTRIAUDIT_PTXAS_ADVISORIES_FATAL=OFF to build anyway" >&2
    exit 1
  fi
  echo "warning: ptxas advisories about the wgmma pipeline (above): this level's timings are not what it was written for" >&2
fi
exit 0
