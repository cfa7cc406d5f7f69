"""A new Python interpreter that imports triaudit from this checkout: for what only a fresh
process shows (which modules an import loads, how the command line leaves)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]


def fresh_python(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """`python *args` (e.g. "-c", code), its output captured as text."""
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, PYTHONPATH=str(SCRIPTS)),
    )
