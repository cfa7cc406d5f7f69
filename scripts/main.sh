#!/usr/bin/env bash
# The main job (README): build, run the suite on the local GPU into results/, render the
# tables and plots into report/. Without a GPU: builds, says so plainly, and renders what
# results/ already holds.   TRIAUDIT_PROFILE=quick|full (default full).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/python_env.sh
source scripts/python_env.sh
if nvidia-smi -L >/dev/null 2>&1; then
  preset=gpu
else
  preset=ci
  echo "triaudit: no GPU driver answers (nvidia-smi): building for the default architecture list"
fi
cmake --preset "$preset"
cmake --build --preset "$preset"
set +e
triaudit run --build-dir "build/$preset" --results results --profile "${TRIAUDIT_PROFILE:-full}"
rc=$?
set -e
case $rc in
  0) ;;
  77) echo "triaudit: no CUDA device on this machine: nothing was measured; the report shows what results/ holds." ;;
  *) echo "triaudit: the run reported failures (exit $rc); see the logs in its results folder." ;;
esac
if [ $rc -eq 77 ]; then
  triaudit report results --out report > /dev/null \
    --note "This machine has no usable GPU: this run measured nothing; the tables show what results/ already held."
else
  triaudit report results --out report > /dev/null
fi
# The last line says what this report holds, read from it (not what it might hold, nor older files in report/).
plots=$(grep -c '^!\[' report/report.md || true)
tables=$(grep -c '^### ' report/report.md || true)
if [ "$plots" -gt 0 ]; then
  echo "triaudit: report in report/report.html (self-contained) and report/report.md: $tables table(s), $plots PNG plot(s)"
else
  echo "triaudit: report in report/report.md and report/report.html: no measured results yet, so no plots (its first lines say why)"
fi
[ $rc -eq 0 ] || [ $rc -eq 77 ]
