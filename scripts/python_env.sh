# Sourced by scripts/main.sh and scripts/test.sh: a virtual environment in .venv with the
# triaudit package (and its test extras) installed, plus ninja if the machine lacks it.
VENV="${TRIAUDIT_VENV:-$PWD/.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
"$VENV/bin/python" -m pip install -q -e "scripts[test]"
if ! command -v ninja >/dev/null 2>&1; then
  "$VENV/bin/python" -m pip install -q ninja
fi
export PATH="$VENV/bin:$PATH"
