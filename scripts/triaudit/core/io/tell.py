"""What the reader of a result must be told on the console too (a truncated file, a file skipped),
not only inside the report: one line each on stderr, each said once per process."""

from __future__ import annotations

import sys

_said: set[str] = set()


def notice(text: str) -> None:
    if text in _said:
        return
    _said.add(text)
    try:
        print(text, file=sys.stderr, flush=True)
    except (BrokenPipeError, ValueError):
        pass
