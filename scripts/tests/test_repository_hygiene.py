"""No package source or index in the repository names a real server: scripts follow the machine's
own configuration (prepare_gpu_carry.sh derives its deb-src entry from /etc/apt), so a mirror or
an offline registry works unchanged."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import apt_source_entry as A  # noqa: E402

# Where a package source or index is configured: apt source files, pip and conda configuration,
# requirement files, and the command-line options that point pip or apt at a server.
CONFIG_FILES = re.compile(
    r"(\.list|\.sources|pip\.conf|pip\.ini|\.npmrc|\.condarc|requirements[^/]*\.txt|constraints[^/]*\.txt)$"
)
INDEX_OPTION = re.compile(
    r"(--(extra-)?index-url|--find-links|\s-i\s|^deb(-src)?\s|^URIs:|index-url\s*=|\burl\s*=)", re.M
)
URL = re.compile(r"(?:https?|ftp)://([^/\s'\"]+)")
# RFC 2606 / 6761 names that can never be a real server.
RESERVED = re.compile(r"(^|\.)(example(\.com|\.org|\.net)?|test|invalid|localhost)(:\d+)?$")


def index_urls(rel: str, text: str) -> list[str]:
    """The hosts a file points a package manager at, where it configures one: every URL of a
    source or index configuration file; elsewhere the URLs on lines that set an index or source."""
    if CONFIG_FILES.search(rel):
        return URL.findall(text)
    hosts = []
    for line in text.splitlines():
        if INDEX_OPTION.search(line):
            hosts += URL.findall(line)
    return hosts


def test_no_package_source_or_index_names_a_real_server():
    tracked = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, text=True, check=True
    ).stdout
    hits = []
    for rel in filter(None, tracked.split("\0")):
        path = REPO / rel
        if not path.is_file() or rel.startswith(("scripts/tests/data/", "tests/data/")):
            continue  # real tool outputs kept verbatim for the readers' tests
        hosts = index_urls(rel, path.read_text(errors="replace"))
        # A host made of a variable ({name}, $NAME) comes from configuration, not from the repository.
        hits += [f"{rel}: {h}" for h in hosts if not RESERVED.search(h) and not re.search(r"[{$]", h)]
    assert not hits, (
        "package sources or indexes that name a server (follow the machine's own configuration): " + "; ".join(hits)
    )


def test_the_scan_finds_a_configured_server_and_passes_the_reserved_names():
    real = "files" + "." + "pythonhosted" + "." + "org"  # assembled: this file names no server itself
    assert index_urls("scripts/x.sh", f"pip install --index-url https://{real}/simple pkg\n") == [real]
    assert index_urls("etc/apt/sources.list.d/a.sources", f"Types: deb\nURIs: http://{real}/debian\n") == [real]
    assert index_urls("README.md", f"see https://{real} for wheels\n") == []  # prose, not a configuration
    for ok in ("mirror.example", "example.com", "pkgs.test", "localhost:8080"):
        assert RESERVED.search(ok), ok
    assert not RESERVED.search(real)


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
