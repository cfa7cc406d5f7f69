"""What a soak says while it runs (soak/progress.py): a line per GPU per window in the log and
on a plain console; on a terminal one status line, with only the lines that matter above it.
Synthetic windows (not measurements)."""

from __future__ import annotations

import synthetic_soak as S

from triaudit.core.terminal import interactive
from triaudit.soak.hashlog import parse_window
from triaudit.soak.progress import Progress, clock, window_line


def _window(**kw):
    return parse_window(S.window_record(11, 1000.0, 1060.0, **kw))


def test_a_window_line_names_the_gpu_the_window_and_every_figure():
    line = window_line("gpu3", _window(), 60, 720.0)
    assert line == (
        "[gpu3 12/60 0h12m00s] gemm 700 TFLOP/s · triad 4200 GB/s · h2d 55 GB/s · d2h 55 GB/s · 690 W · 1980 MHz · 71 C"
    )
    dev = S.deviation(7, 1030.0, 1, 0xAB, 0xCD)
    assert window_line("gpu3", _window(deviations={"gemm": [dev]}), 60, 720.0).endswith("· SDC: 1 gemm differed")
    assert clock(3725) == "1h02m05s" and clock(7199.9996) == "2h00m00s"


def test_plain_lines_go_to_the_log_and_the_console(tmp_path):
    said = []
    p = Progress(tmp_path / "soak.log", said.append, tty=False)
    p.line("one")
    p.status("not on a plain console")
    p.line("two", important=True)
    p.close()
    assert said == ["one", "two"]
    log = (tmp_path / "soak.log").read_text().splitlines()
    assert [x.split(" ", 1)[1] for x in log] == ["one", "two"] and log[0][:2] == "20"  # a UTC time first


def test_a_terminal_gets_a_status_line_and_the_lines_that_matter(tmp_path, capsys):
    said = []
    p = Progress(tmp_path / "soak.log", said.append, tty=True)
    p.status("soak 0h01m00s · gpu0 1/60")
    p.line("a window line")
    p.line("SDC on gpu0", important=True)
    p.close()
    assert said == ["SDC on gpu0"]
    out = capsys.readouterr().out
    assert "\r\x1b[Ksoak 0h01m00s · gpu0 1/60" in out and out.endswith("\r\x1b[K")
    assert (tmp_path / "soak.log").read_text().count("\n") == 2  # the log has every line


class _Tty:
    def isatty(self):
        return True


def test_a_terminal_is_interactive_unless_ci_or_asked_plain():
    assert interactive(_Tty(), {"TERM": "xterm"})
    assert not interactive(_Tty(), {"TERM": "dumb"})
    assert not interactive(_Tty(), {"TERM": "xterm", "CI": "true"})
    assert not interactive(_Tty(), {"TERM": "xterm", "TRIAUDIT_PLAIN_PROGRESS": "1"})
    assert not interactive(object(), {})
