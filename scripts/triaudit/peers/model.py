"""What a peer tool's output becomes before it is written: cases named in triaudit's scheme, with the
tool's own statistic, and a list of what the output did not say.

Standard library only: the readers also run on a bare GPU machine's python3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from triaudit.core.errors import TriauditError


class PeerFormatError(TriauditError):
    """An output that cannot be read: the message names the file, the line and what was expected."""


def refuse(path: Path | str, line: int | None, expected: str, found: str | None = None) -> PeerFormatError:
    where = f"{path}:{line}" if line else str(path)
    text = f"{where}: expected {expected}"
    if found is not None:
        shown = found.strip()
        text += f"; found {shown[:120]!r}" if shown else "; found an empty line"
    return PeerFormatError(text)


@dataclass
class PeerCase:
    name: str  # triaudit's scheme, without the peer/<tool>/ prefix
    counters: dict[str, float] = field(default_factory=dict)
    time_s: float | None = None  # per operation, only where the tool prints a time
    error: str = ""  # non-empty: an error entry, never a number
    label: str = ""
    iterations: int | None = None
    statistic: str = ""  # where it differs from the run's statistic


@dataclass
class PeerRun:
    tool: str  # nccl-tests, nvbandwidth, babelstream, mamf-finder
    source: Path
    statistic: str  # the tool's own statistic, in words, from its source
    version: str | None = None  # as printed; None where the output does not say
    gpu_name: str | None = None  # as printed; None where the output does not say
    context: dict[str, str] = field(default_factory=dict)
    not_read: list[str] = field(default_factory=list)  # what the output lacks or was left out
    cases: list[PeerCase] = field(default_factory=list)


def gpu_name_of(names: list[str], not_read: list[str], what: str = "devices") -> str | None:
    """One GPU name for a run whose devices all have it; None (said in not_read) otherwise."""
    distinct = sorted(set(n.strip() for n in names if n and n.strip()))
    if len(distinct) == 1:
        return distinct[0]
    if not distinct:
        not_read.append(f"the GPU name (the output lists no {what})")
    else:
        not_read.append(f"one GPU name: the {what} are different models ({', '.join(distinct)})")
    return None
