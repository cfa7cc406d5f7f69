#!/usr/bin/env bash
# The house style, checked (CI runs this from scripts/test.sh; exit 1 names what is off):
#   C++/CUDA  clang-format (.clang-format: Google, 120 columns)
#   Python    ruff check and ruff format --check (scripts/pyproject.toml [tool.ruff]), mypy ([tool.mypy])
#   shell     shellcheck
# The tools are pinned in scripts/pyproject.toml (the `lint` extra), so a new release cannot
# change the verdict. `bash scripts/format.sh` fixes what can be fixed automatically.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
VENV="${TRIAUDIT_VENV:-$PWD/.venv}"
tool() { if [ -x "$VENV/bin/$1" ]; then echo "$VENV/bin/$1"; else command -v "$1"; fi; }
for t in clang-format ruff shellcheck mypy; do
  if [ -z "$(tool "$t")" ]; then
    echo "lint: $t not found (pip install -e 'scripts[lint]')" >&2
    exit 2
  fi
done
failed=0
mapfile -t cxx < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' ':!tests/data/*')
if ! "$(tool clang-format)" --dry-run -Werror "${cxx[@]}"; then
  echo "lint: C++/CUDA formatting differs from .clang-format (bash scripts/format.sh)" >&2
  failed=1
fi
if ! "$(tool ruff)" check --config scripts/pyproject.toml scripts tests; then
  echo "lint: ruff found problems (bash scripts/format.sh fixes the automatic ones)" >&2
  failed=1
fi
if ! "$(tool ruff)" format --check --config scripts/pyproject.toml scripts tests; then
  echo "lint: Python formatting differs (bash scripts/format.sh)" >&2
  failed=1
fi
if ! (cd scripts && "$(tool mypy)" --config-file pyproject.toml); then
  echo "lint: mypy found type errors in scripts/triaudit" >&2
  failed=1
fi
mapfile -t sh < <(git ls-files '*.sh' '*.sbatch' .ci/run)
if ! "$(tool shellcheck)" -x "${sh[@]}"; then
  echo "lint: shellcheck found problems" >&2
  failed=1
fi
[ "$failed" -eq 0 ] && echo "lint: C++/CUDA, Python and shell as the house keeps them"
exit "$failed"
