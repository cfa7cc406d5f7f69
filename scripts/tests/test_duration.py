"""Durations as `triaudit soak --duration` takes them (core/duration.py): seconds to days."""

from __future__ import annotations

import argparse

import pytest

from triaudit.core.duration import duration_arg, format_duration, parse_duration


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("90", 90.0),
        ("90s", 90.0),
        ("0.5s", 0.5),
        ("10m", 600.0),
        ("1h", 3600.0),
        ("1h30m", 5400.0),
        ("2d 12h", 216000.0),
        ("1D", 86400.0),
        (" 7d ", 604800.0),
        ("1h 0m 5s", 3605.0),
    ],
)
def test_durations_from_seconds_to_days(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text, said",
    [
        ("", "empty"),
        ("5x", "is not a duration"),
        ("1h x", "is not a duration"),
        ("h", "is not a duration"),
        ("0", "more than 0 seconds"),
        ("-1", "more than 0 seconds"),
        ("nan", "more than 0 seconds"),
        ("inf", "more than 0 seconds"),
        ("367d", "at most 366 days"),
    ],
)
def test_bad_durations_say_what_is_wrong(text, said):
    with pytest.raises(ValueError, match=said):
        parse_duration(text)
    with pytest.raises(argparse.ArgumentTypeError, match=said):
        duration_arg(text)


@pytest.mark.parametrize("seconds, text", [(3725, "1h 2m 5s"), (90, "1m 30s"), (0.5, "0.5s"), (172800, "2d")])
def test_durations_are_written_back_as_people_write_them(seconds, text):
    assert format_duration(seconds) == text
    assert parse_duration(text.replace(" ", "")) == seconds
