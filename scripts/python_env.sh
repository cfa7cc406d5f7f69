# shellcheck shell=bash
# Sourced by scripts/main.sh and scripts/test.sh: a virtual environment in .venv with the
# triaudit package (and its test extras) installed, plus ninja if the machine lacks it.
VENV="${TRIAUDIT_VENV:-$PWD/.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
_pip() {  # quiet unless it fails
  "$VENV/bin/python" -m pip install -q "$@" > "$VENV/pip.log" 2>&1 || { cat "$VENV/pip.log"; return 1; }
}
_pip --upgrade pip || true
_pip -e "scripts[test,lint]"
if ! command -v ninja >/dev/null 2>&1; then
  _pip ninja
fi
export PATH="$VENV/bin:$PATH"
