"""Where the built executables are, for `triaudit run` and `triaudit doctor`. Standard library only.

`build/gpu` (the `gpu` preset: code for the local card) is preferred over `build/ci` (the explicit
architecture list), looked for in the current folder and in the checkout this package is part of.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

CANDIDATES = ("build/gpu", "build/ci")
REPO = Path(__file__).resolve().parents[3]


def _has_executables(d: Path) -> bool:
    bench = d / "benchmarks"
    return bench.is_dir() and any(
        p.is_file() for p in bench.glob("*/triaudit_*") if p.name.startswith("triaudit_") and "." not in p.name
    )


def find_build_dir(given: Path | None = None, roots: tuple[Path, ...] | None = None) -> tuple[Path | None, str]:
    """(build folder, what was done to find it). `given` wins when set; otherwise the first of
    CANDIDATES under the roots that holds executables; None (with where it looked) when none does."""
    if given is not None:
        return given, ""
    roots = roots if roots is not None else tuple(dict.fromkeys([Path.cwd(), REPO]))
    looked = []
    for root in roots:
        for c in CANDIDATES:
            d = root / c
            looked.append(str(d))
            if _has_executables(d):
                return d, f"build folder: {d}"
    return None, (
        f"no build folder with triaudit executables (looked in {', '.join(looked)}): build first "
        "(cmake --workflow --preset gpu) or give --build-dir"
    )


def git_commit(repo: Path | None = None) -> str:
    """`git describe` of a checkout: by default the one this package is part of (the code that ran),
    wherever the command was started from."""
    repo = repo if repo is not None else REPO
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "describe", "--always", "--dirty", "--abbrev=12"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"
