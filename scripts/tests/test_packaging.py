"""The package as pip installs it: every module of scripts/triaudit is in the wheel, and so are
the data files the code reads (the shipped floors). A package list that misses a folder would
install a triaudit whose report has no sections."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

PKG = Path(__file__).resolve().parents[1]


def test_the_wheel_holds_every_module_and_data_file(tmp_path):
    # Built from a copy: setuptools writes build/ and *.egg-info into the folder it builds.
    src = tmp_path / "src"
    shutil.copytree(PKG / "triaudit", src / "triaudit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(PKG / "pyproject.toml", src / "pyproject.toml")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    (wheel,) = tmp_path.glob("triaudit-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    here = {p.relative_to(PKG).as_posix() for p in (PKG / "triaudit").rglob("*.py") if "__pycache__" not in p.parts}
    assert here - names == set()
    floors = {p.relative_to(PKG).as_posix() for p in (PKG / "triaudit").rglob("*.toml")}
    assert floors and floors - names == set()
