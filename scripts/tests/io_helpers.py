"""What the I/O layer's tests share: synthetic run folders (made-up figures, not measurements), a
folder's contents to compare before and after, and a command in its own process with a time limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from synthetic import synthetic_corners_result, write

SCRIPTS = Path(__file__).resolve().parents[1]


def runs(root: Path, n: int = 2) -> list[Path]:
    """n complete synthetic run folders of one card under root/results/<card>/, each a little slower."""
    out = []
    for i in range(n):
        run = root / "results" / "nvidia-h200" / f"2026010{i + 1}T000000Z-synthetic"
        write(run / "triaudit_corners_synthetic.json", synthetic_corners_result("NVIDIA H200", 1.0 - 0.1 * i))
        (run / "manifest.json").write_text(json.dumps({"complete": True, "profile": "synthetic"}))
        out.append(run)
    return out


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def cli_process(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """The command in its own process (where a hang would be possible), with a time limit."""
    env = dict(os.environ, PYTHONPATH=str(SCRIPTS))
    return subprocess.run(
        [sys.executable, "-m", "triaudit", *argv], capture_output=True, text=True, timeout=timeout, env=env
    )
