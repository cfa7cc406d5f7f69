"""Whether output goes to a person at a terminal that can rewrite a line, or to a log."""

from __future__ import annotations

import os
import sys


def interactive(stream=None, env=None) -> bool:
    """A terminal that can rewrite a line: a TTY, not TERM=dumb, not under CI, and not asked for
    plain lines (TRIAUDIT_PLAIN_PROGRESS). `triaudit run`'s live bar and the soak's progress line
    both follow this rule."""
    stream = sys.stdout if stream is None else stream
    env = os.environ if env is None else env
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and env.get("TERM") != "dumb" and not env.get("CI") and not env.get("TRIAUDIT_PLAIN_PROGRESS")
