# shellcheck shell=bash
# Sourced by scripts/main.sh and scripts/test.sh: a virtual environment in .venv with the
# triaudit package installed (its `triaudit` command is .venv/bin/triaudit), plus ninja if the
# machine lacks it. TRIAUDIT_PY_EXTRAS: the package's extras (default "test,lint"; main.sh: none).
VENV="${TRIAUDIT_VENV:-$PWD/.venv}"
EXTRAS="${TRIAUDIT_PY_EXTRAS-test,lint}"
if [ ! -x "$VENV/bin/python" ]; then
  echo "triaudit: making $VENV (the first time pip downloads pandas, matplotlib, numpy, scipy and the rest: a few minutes)"
  python3 -m venv "$VENV"
fi
_pip() {  # names each package as pip collects it; everything pip said is in $VENV/pip.log
  local rc errexit=0
  case $- in *e*) errexit=1 ;; esac
  set +e
  "$VENV/bin/python" -m pip install --progress-bar off "$@" 2>&1 | tee "$VENV/pip.log" |
    sed -un 's/^Collecting \([^ ]*\).*/  pip: collecting \1/p'
  rc=${PIPESTATUS[0]}
  [ "$errexit" = 1 ] && set -e
  if [ "$rc" -ne 0 ]; then
    cat "$VENV/pip.log"
    return 1
  fi
}
_pip -q --upgrade pip || true
_pip -e "scripts${EXTRAS:+[$EXTRAS]}"
if ! command -v ninja >/dev/null 2>&1; then
  _pip ninja
fi
export PATH="$VENV/bin:$PATH"
