#!/usr/bin/env bash
# The main job (README): build what `triaudit run` runs, run the suite on the local GPU into
# results/, render the tables and plots into report/. Without a GPU: builds, says so plainly, and
# renders what results/ holds (with no measurement yet: other people's published figures of four
# cards, labelled so, and how to measure or import).   TRIAUDIT_PROFILE=quick|full (default full).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "triaudit: 1/4 Python: .venv with the triaudit package; the command is .venv/bin/triaudit"
# The suite's own dependencies only (test.sh adds the test and lint tools).
TRIAUDIT_PY_EXTRAS="" source scripts/python_env.sh
if nvidia-smi -L >/dev/null 2>&1; then
  preset=gpu
else
  preset=ci
  echo "triaudit: no GPU driver answers (nvidia-smi): building for the default architecture list"
fi
echo "triaudit: 2/4 build: configure (cmake --preset $preset), then only the executables triaudit run runs"
cmake --preset "$preset" >/dev/null
# The executables of every corner (scripts/triaudit/corners/), those this configuration can build
# (a collective needs NCCL): not the tests, not the soak.
available=$(cmake --build --preset "$preset" --target help | sed -n 's/^\(triaudit_[a-z0-9_]*\): .*/\1/p')
targets=()
for exe in $(python -c 'from triaudit.corners import EXECUTABLES; print(" ".join(EXECUTABLES))'); do
  if grep -qx "$exe" <<<"$available"; then
    targets+=("$exe")
  else
    echo "triaudit: $exe is not in this build (its library was not found at configure): not built, not run"
  fi
done
echo "triaudit: building ${#targets[@]} executables: ${targets[*]}"
cmake --build --preset "$preset" --target "${targets[@]}"
echo "triaudit: 3/4 run: triaudit run --profile ${TRIAUDIT_PROFILE:-full} into results/"
set +e
triaudit run --build-dir "build/$preset" --results results --profile "${TRIAUDIT_PROFILE:-full}"
rc=$?
set -e
case $rc in
  0) ;;
  77) echo "triaudit: no CUDA device on this machine: nothing was measured." ;;
  *) echo "triaudit: the run reported failures (exit $rc); see the logs in its results folder." ;;
esac
echo "triaudit: 4/4 report: triaudit report results --out report"
if [ $rc -eq 77 ]; then
  triaudit report results --out report >/dev/null \
    --note "This machine has no usable GPU: this run measured nothing."
else
  triaudit report results --out report >/dev/null
fi
# The last line says what this report holds, read from it (not what it might hold, nor older files in report/).
sections=$(grep -c '^## ' report/report.md || true)
tables=$(grep -c '^### ' report/report.md || true)
plots=$(grep -c '^!\[' report/report.md || true)
if grep -q "^## Published measurements of four cards (other people's, not ours)" report/report.md && [ "$sections" -eq 1 ]; then
  echo "triaudit: report in report/report.html (one self-contained page) and report/report.md: nothing measured yet;" \
    "it shows other people's published figures for A100, H100, H200 and RTX 4090 (labelled so, each with its source)" \
    "and how to measure or import"
else
  echo "triaudit: report in report/report.html (one self-contained page) and report/report.md:" \
    "$sections section(s), $tables table(s), $plots figure(s)"
fi
[ $rc -eq 0 ] || [ $rc -eq 77 ]
