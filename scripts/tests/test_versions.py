"""One version for the suite: the VERSION file, the Python package, pyproject.toml, `triaudit --version`
and every built executable's `--version` say the same version and JSON schema."""

import re
import subprocess

from conftest import REPO

from triaudit import __version__
from triaudit import commands as cli
from triaudit.results.gbench import SCHEMA_VERSION
from triaudit.runner import profiles


def test_version_file_package_and_pyproject_agree():
    version = (REPO / "VERSION").read_text().strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), "VERSION holds MAJOR.MINOR.PATCH"
    assert __version__ == version
    pyproject = (REPO / "scripts" / "pyproject.toml").read_text()
    assert re.search(rf'^version = "{re.escape(version)}"', pyproject, re.M)


def test_every_command_prints_the_same_version(stream_exe, capsys):
    version = (REPO / "VERSION").read_text().strip()
    try:
        cli.main(["--version"])
    except SystemExit as e:
        assert e.code == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"triaudit {version} (commit ") and f"JSON schema {SCHEMA_VERSION}" in line
    exes = profiles.find_executables(stream_exe.parents[2])
    assert exes
    for name, exe in exes.items():
        out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, name
        assert out.stdout.startswith(f"{name} {version} (commit ") and f"JSON schema {SCHEMA_VERSION}" in out.stdout
