"""Names made from text: folder names for cards and hosts."""

from __future__ import annotations

import re


def slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s or "unknown-card"
