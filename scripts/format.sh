#!/usr/bin/env bash
# Formats everything the house formats: C++/CUDA with clang-format, Python with ruff (format, and
# the lint fixes ruff can make). Shell scripts have no formatter here; scripts/lint.sh checks
# them with ShellCheck. Uses the pinned tools of scripts/pyproject.toml's `lint` extra.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${TRIAUDIT_VENV:-$PWD/.venv}"
tool() { if [ -x "$VENV/bin/$1" ]; then echo "$VENV/bin/$1"; else command -v "$1"; fi; }
mapfile -t cxx < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' ':!tests/data/*')
"$(tool clang-format)" -i "${cxx[@]}"
"$(tool ruff)" check --fix --config scripts/pyproject.toml scripts tests
"$(tool ruff)" format --config scripts/pyproject.toml scripts tests
echo "formatted; scripts/lint.sh checks the rest"
