"""`triaudit import <tool> FILE... [--card NAME] --results DIR`: read peer outputs, write one run folder.

Exit codes: 0 imported; 1 imported, but some cases are error entries (wrong results, failed
validation, a failed test); 2 bad input (nothing written).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from triaudit.core.files import not_a_regular_file
from triaudit.peers import babelstream, mamf, nccl_tests, nvbandwidth, writer
from triaudit.peers.model import PeerFormatError, PeerRun

READERS = {
    "nccl-tests": nccl_tests.read,
    "nvbandwidth": nvbandwidth.read,
    "babelstream": babelstream.read,
    "mamf-finder": mamf.read,
}
ALIASES = {
    "nccl": "nccl-tests",
    "nccl_tests": "nccl-tests",
    "babel-stream": "babelstream",
    "BabelStream": "babelstream",
    "mamf": "mamf-finder",
    "mamf_finder": "mamf-finder",
}


def parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*(B|KiB|MiB|GiB|K|M|G)?\s*", text)
    if not m:
        raise ValueError(f"--buffer-size {text!r}: expected bytes or a size like 512MiB")
    return (
        int(m.group(1))
        * {None: 1, "B": 1, "K": 2**10, "KiB": 2**10, "M": 2**20, "MiB": 2**20, "G": 2**30, "GiB": 2**30}[m.group(2)]
    )


def read_file(tool: str, path: Path, buffer_bytes: int | None = None) -> tuple[PeerRun, bytes]:
    what = not_a_regular_file(path)
    if what:  # reading a FIFO would wait for a writer forever
        raise PeerFormatError(f"{path}: {what}, not a file: save the tool's output to a file first")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PeerFormatError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    if not text.strip():
        raise PeerFormatError(f"{path}: empty file")
    if tool == "nvbandwidth":
        return nvbandwidth.read(path, text, buffer_bytes), raw
    reader: Any = READERS[tool]
    return reader(path, text), raw


def run_import(
    tool: str,
    files: list[Path],
    results: Path,
    card: str | None = None,
    buffer_size: str | None = None,
    command: str = "triaudit import",
    out=print,
    force: bool = False,
) -> int:
    tool = ALIASES.get(tool, tool)
    if tool not in READERS:
        out(f"triaudit import: unknown tool {tool!r}; choose one of {', '.join(READERS)}", file=sys.stderr)
        return 2
    try:
        buffer_bytes = parse_size(buffer_size) if buffer_size else None
        if buffer_bytes is not None and tool != "nvbandwidth":
            raise ValueError("--buffer-size is for nvbandwidth only (the other tools print their sizes)")
        pairs = [read_file(tool, Path(f), buffer_bytes) for f in files]
        runs = [r for r, _ in pairs]
        folder = writer.write_run(runs, [raw for _, raw in pairs], results, card, command, force)
    except (PeerFormatError, ValueError) as exc:
        out(f"triaudit import: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        out(f"triaudit import: cannot write under {results}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    errors = 0
    for r in runs:
        bad = [c for c in r.cases if c.error]
        errors += len(bad)
        out(
            f"{r.source}: {r.tool} {r.version or '(version not printed)'}, {len(r.cases)} case(s)"
            + (
                f", {len(bad)} error entr{'y' if len(bad) == 1 else 'ies'} (e.g. {bad[0].name}: {bad[0].error})"
                if bad
                else ""
            )
        )
        if r.not_read:
            out(f"  not read: {'; '.join(r.not_read)}")
    out(f"wrote {folder}")
    from triaudit.store.hooks import add_after_writing

    add_after_writing(results, folder, out)  # its results store (said, never fatal, when it cannot)
    return 1 if errors else 0
