#!/usr/bin/env bash
# The test command (README): builds with the `ci` preset (explicit architecture list, no GPU
# needed), runs CTest (tests labelled `gpu` report "skipped" without a device), then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python_env.sh
cmake --workflow --preset ci
TRIAUDIT_BUILD_DIR="$PWD/build/ci" python -m pytest scripts/tests -q
