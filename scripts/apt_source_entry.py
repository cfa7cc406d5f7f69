#!/usr/bin/env python3
"""Prints a deb822 `Types: deb-src` entry derived from this machine's own apt configuration: the
first binary source (deb822 `*.sources` or one-line `*.list` / sources.list) that is not a
security or updates suite. Used by prepare_gpu_carry.sh to fetch Google Benchmark's source
package from whatever mirror the machine uses, so no registry host is written into the repository.

Usage: apt_source_entry.py [APT_ETC]   (default /etc/apt). Exit 1 with a message when none is found.
"""

from __future__ import annotations

import sys
from pathlib import Path


def deb822_stanzas(text: str) -> list[dict[str, str]]:
    stanzas, current, key = [], {}, None
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if not line.strip():
            if current:
                stanzas.append(current)
            current, key = {}, None
            continue
        if line[0] in " \t" and key:
            current[key] += " " + line.strip()
            continue
        if ":" in line:
            key, value = line.split(":", 1)
            key = key.strip()
            current[key] = value.strip()
    if current:
        stanzas.append(current)
    return stanzas


def one_line_entries(text: str) -> list[dict[str, str]]:
    out = []
    for line in text.splitlines():
        parts = line.split("#", 1)[0].split()
        if len(parts) >= 4 and parts[0] == "deb":
            options = []
            if parts[1].startswith("["):  # [arch=... signed-by=...], possibly several words
                while True:
                    word = parts.pop(1)
                    options.append(word.strip("[]"))
                    if word.endswith("]") or len(parts) < 2:
                        break
            if len(parts) < 4:
                continue
            entry = {"Types": "deb", "URIs": parts[1], "Suites": parts[2], "Components": " ".join(parts[3:])}
            for o in options:
                if o.startswith("signed-by="):
                    entry["Signed-By"] = o.split("=", 1)[1]
            out.append(entry)
    return out


def entries(apt_etc: Path) -> list[dict[str, str]]:
    found = []
    for f in sorted((apt_etc / "sources.list.d").glob("*.sources")):
        found += deb822_stanzas(f.read_text(errors="replace"))
    lists = [apt_etc / "sources.list"] + sorted((apt_etc / "sources.list.d").glob("*.list"))
    for f in lists:
        if f.is_file():
            found += one_line_entries(f.read_text(errors="replace"))
    return found


def source_entry(apt_etc: Path) -> str | None:
    for e in entries(apt_etc):
        if "deb" not in e.get("Types", "").split() or e.get("Enabled", "yes").lower() == "no":
            continue
        suites = [s for s in e.get("Suites", "").split() if not s.endswith(("-security", "-updates", "-backports"))]
        if not suites or not e.get("URIs"):
            continue
        lines = [
            "Types: deb-src",
            f"URIs: {e['URIs'].split()[0]}",
            f"Suites: {suites[0]}",
            f"Components: {e.get('Components', 'main')}",
        ]
        if e.get("Signed-By"):
            lines.append(f"Signed-By: {e['Signed-By']}")
        return "\n".join(lines) + "\n"
    return None


def main(argv: list[str]) -> int:
    apt_etc = Path(argv[1]) if len(argv) > 1 else Path("/etc/apt")
    entry = source_entry(apt_etc)
    if entry is None:
        print(f"apt_source_entry: no enabled binary source (Types: deb) in {apt_etc}", file=sys.stderr)
        return 1
    sys.stdout.write(entry)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
