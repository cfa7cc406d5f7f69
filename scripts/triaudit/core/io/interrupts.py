"""One handler for Ctrl-C and SIGTERM: the parent's (commands/__init__.py main(): exit 130). Worker
processes never handle them: a pool's workers ignore SIGINT from their first instruction (started with
it blocked, then ignored, see ignore_in_worker and worker_start.py), so an interrupt prints no
traceback from any process; and the moments that put a whole output in place are not interrupted
(deferred()), so what is there afterwards is the previous output or the new one, never a mix."""

from __future__ import annotations

import contextlib
import signal

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def ignore_in_worker() -> None:
    """A pool's initializer: this process ignores SIGINT (its parent handles it and stops the pool);
    SIGTERM keeps its default (the process ends quietly, and the pool can still terminate it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)


@contextlib.contextmanager
def blocked():
    """SIGINT and SIGTERM held back (pending) in this thread, and in processes forked meanwhile,
    until the block ends; then delivered (KeyboardInterrupt in the main thread)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


deferred = blocked  # putting an output in place: an interrupt waits until it is whole
