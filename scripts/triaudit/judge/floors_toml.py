"""Writing floors files: the little of TOML they need (tables, arrays of tables, strings, numbers,
booleans, lists of those), so `floors derive` needs no TOML writer from PyPI. What it writes is read
back by tomllib (tests/test_floors_derive.py holds the round trip)."""

from __future__ import annotations

import json
import math
import re

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k)


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"a floors file holds finite numbers only, not {v!r}")
        text = f"{v:.10g}"
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} into a floors file")


def _is_table(v) -> bool:
    return isinstance(v, dict)


def _is_table_array(v) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def _emit(table: dict, path: list[str], out: list[str], array: bool = False) -> None:
    scalars = {k: v for k, v in table.items() if not _is_table(v) and not _is_table_array(v)}
    if path:
        name = ".".join(_key(p) for p in path)
        out.append("")
        out.append(f"[[{name}]]" if array else f"[{name}]")
    for k, v in scalars.items():
        out.append(f"{_key(k)} = {_value(v)}")
    for k, v in table.items():
        if _is_table(v):
            _emit(v, path + [k], out)
        elif _is_table_array(v):
            for item in v:
                _emit(item, path + [k], out, array=True)


def dumps(data: dict, comment: str = "") -> str:
    """`data` as TOML, `comment` (lines) as a # header."""
    out = [f"# {line}".rstrip() for line in comment.splitlines()] if comment else []
    _emit(data, [], out)
    return "\n".join(out).lstrip("\n") + "\n"
