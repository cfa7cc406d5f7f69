"""The repository names no package registry: scripts follow the machine's own configuration
(prepare_gpu_carry.sh derives its deb-src entry from /etc/apt), so a mirror or an offline
registry works unchanged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import apt_source_entry as A  # noqa: E402

# Registry hosts, assembled so this file does not name them itself.
REGISTRIES = [
    ".".join(p)
    for p in (
        ("deb", "debian", "org"),
        ("security", "debian", "org"),
        ("archive", "ubuntu", "com"),
        ("ports", "ubuntu", "com"),
        ("pypi", "org"),
        ("files", "pythonhosted", "org"),
        ("registry", "npmjs", "org"),
        ("download", "pytorch", "org"),
        ("conda", "anaconda", "org"),
        ("repo", "anaconda", "com"),
        ("developer", "download", "nvidia", "com"),
        ("crates", "io"),
        ("proxy", "golang", "org"),
        ("repo1", "maven", "org"),
        ("rubygems", "org"),
    )
]


def test_no_registry_host_in_the_tree():
    tracked = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, text=True, check=True
    ).stdout
    hits = []
    for rel in filter(None, tracked.split("\0")):
        path = REPO / rel
        if not path.is_file():
            continue
        text = path.read_text(errors="replace").lower()
        hits += [f"{rel}: {host}" for host in REGISTRIES if host in text]
    assert not hits, "package registry hosts written into the repository: " + "; ".join(hits)


def test_the_check_would_catch_one(tmp_path):
    # The same scan on a file that names one (the old prepare_gpu_carry.sh did).
    text = ("URIs: http://" + REGISTRIES[0] + "/debian").lower()
    assert any(h in text for h in REGISTRIES)


def _apt(tmp_path, sources: dict[str, str]) -> Path:
    etc = tmp_path / "apt"
    (etc / "sources.list.d").mkdir(parents=True)
    for name, text in sources.items():
        (etc / name).write_text(text)
    return etc


def test_deb822_source_becomes_a_deb_src_entry(tmp_path):
    etc = _apt(
        tmp_path,
        {
            "sources.list.d/mirror.sources": (
                "Types: deb\n# a comment\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n"
                "Components: main\nSigned-By: /usr/share/keyrings/example.gpg\n\n"
                "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n"
            )
        },
    )
    assert A.source_entry(etc) == (
        "Types: deb-src\nURIs: http://mirror.example/debian\nSuites: bookworm\n"
        "Components: main\nSigned-By: /usr/share/keyrings/example.gpg\n"
    )


def test_one_line_sources_list(tmp_path):
    etc = _apt(
        tmp_path,
        {
            "sources.list": "# old style\ndeb [arch=amd64 signed-by=/k.gpg] http://mirror.example/ubuntu jammy main universe\n"
        },
    )
    assert A.source_entry(etc) == (
        "Types: deb-src\nURIs: http://mirror.example/ubuntu\nSuites: jammy\n"
        "Components: main universe\nSigned-By: /k.gpg\n"
    )


def test_nothing_usable_is_said(tmp_path, capsys):
    etc = _apt(
        tmp_path,
        {"sources.list.d/off.sources": "Types: deb\nURIs: http://m.example/d\nSuites: x-security\nComponents: main\n"},
    )
    assert A.main(["apt_source_entry.py", str(etc)]) == 1
    assert "no enabled binary source" in capsys.readouterr().err
