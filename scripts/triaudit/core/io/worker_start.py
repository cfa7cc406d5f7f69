"""Imported only by a forkserver (report/figures.py preloads it there), never by the command:
the server ignores SIGINT, and every worker it forks starts ignoring it with no moment
in which Ctrl-C could raise KeyboardInterrupt in a worker (a forkserver's child restores the
handlers the server had before it set its own; this import makes SIGINT's SIG_IGN). SIGTERM
keeps its default: the process ends without a traceback, and a pool can still terminate it."""

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
