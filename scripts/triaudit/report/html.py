"""report.html: one self-contained page (inline CSS, images as data, no script, no font or file
fetched) that a buyer reads in one screen and navigates in two clicks.

- The first screen: the title, what the figures are (the synthetic banner, where it applies), the
  summary's headline table with the per-dollar answer and the contents beside it (stacked on a
  narrow window); every section is listed in the contents with a link to its id.
- Every section after the summary folds (`<details>`, closed: a click opens it, a link to it
  lands on its title), with the runs behind its tables named once at its top.
- It fits any window: a viewport for phones, each table and figure in a box of its own that
  scrolls sideways when the window is narrower than it (a figure keeps its size there, so its text
  stays readable), nothing else wider than the window.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

import pandas as pd

CSS = (
    "*{box-sizing:border-box}"
    "body{font-family:sans-serif;max-width:1360px;margin:1.2em auto;padding:0 1em;line-height:1.35;color:#111}"
    "h1{margin:.2em 0}h2{font-size:1.25em;margin:.4em 0}h3{font-size:1em;margin:1.2em 0 .3em}"
    "table{border-collapse:collapse;margin:.3em 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right;"
    "vertical-align:top}th{background:#f4f4f4}"
    ".scroll{max-width:100%;overflow-x:auto;margin:0 0 .8em}"
    "img{max-width:100%;height:auto;display:block}figure{margin:.5em 0 1em}"
    "figcaption,.runs,.note{color:#555;font-size:88%}"
    "code{background:#f4f4f4;padding:0 .2em;overflow-wrap:anywhere}"
    ".banner{background:#fff3cd;border:1px solid #e0c36c;padding:.4em .6em}"
    ".first{display:grid;grid-template-columns:minmax(0,1fr) 17em;gap:1em;align-items:start}.first>*{min-width:0}"
    ".side{border-left:3px solid #0072B2;padding:.1em .8em;background:#f7fafc;font-size:92%}"
    ".side h2{font-size:1.05em}.side ol{padding-left:1.3em;margin:.3em 0}.side li{margin:.15em 0}"
    "details{border-top:1px solid #ddd;padding:.2em 0}details>summary{cursor:pointer;padding:.35em 0}"
    "details>summary h2{display:inline;font-size:1.15em}details>summary .count{color:#555;font-size:85%}"
    "p,li,td,th,h1,h2,h3,figcaption{overflow-wrap:break-word}"
    # A phone: one column; a figure keeps its own size inside its box, which scrolls sideways.
    "@media (max-width:1000px){body{padding:0 .5em;margin:.5em auto}.first{grid-template-columns:minmax(0,1fr)}"
    "td,th{padding:2px 4px;font-size:90%}.fig img{max-width:none}}"
)


def inline(text: str) -> str:
    """Text for the page: escaped, Markdown's `code spans` as <code> and **bold** as <strong> (the
    Markdown report keeps both as they are)."""
    text = str(text)
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: not a code span
        return _bold(html.escape(text))
    return "".join(
        _bold(html.escape(p)) if i % 2 == 0 else f"<code>{html.escape(p)}</code>" for i, p in enumerate(parts)
    )


def _bold(escaped: str) -> str:
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped)


def anchor(key: str) -> str:
    """An id from a section key: letters, digits and dashes."""
    return re.sub(r"[^A-Za-z0-9-]+", "-", key).strip("-") or "section"


def table(t: pd.DataFrame) -> str:
    """A table with one header row (the index names, then the columns) and the index as row
    headers, a repeated index value spanning its rows: no empty header row, no empty cell. In a
    box of its own that scrolls sideways when the window is narrower than the table."""
    names = [n or "" for n in (t.index.names or [""])]
    head = "".join(f"<th>{inline(n)}</th>" for n in names) + "".join(f"<th>{inline(c)}</th>" for c in t.columns)
    keys = [k if isinstance(k, tuple) else (k,) for k in t.index]
    rows = []
    for i, (key, values) in enumerate(zip(keys, t.itertuples(index=False, name=None))):
        cells = []
        for level, k in enumerate(key):
            if i > 0 and keys[i - 1][: level + 1] == key[: level + 1]:
                continue  # spanned by the row above
            span = 1
            while i + span < len(keys) and keys[i + span][: level + 1] == key[: level + 1]:
                span += 1
            attr = f" rowspan='{span}'" if span > 1 else ""
            cells.append(f"<th{attr}>{inline(k)}</th>")
        cells += [f"<td>{inline('' if pd.isna(v) else v)}</td>" for v in values]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"


@dataclass
class Block:
    """One section of the page: its id, title, whether it folds, and its HTML."""

    key: str
    title: str
    folds: bool = True
    parts: list[str] = field(default_factory=list)
    counts: str = ""  # "3 tables, 2 figures": said on the folded title

    @property
    def id(self) -> str:
        return anchor(self.key)


def contents(blocks: list[Block]) -> str:
    items = "".join(f"<li><a href='#{b.id}'>{inline(b.title)}</a></li>" for b in blocks)
    return f"<nav aria-label='Contents'><h2>Contents</h2><ol>{items}</ol></nav>"


def page(title: str, head: list[str], first: Block | None, side: list[str], blocks: list[Block]) -> str:
    """The whole page: `head` (the report's opening paragraphs, HTML), the first block (the summary)
    with `side` (its per-dollar answer, HTML paragraphs) and the contents beside its first table,
    then every other block folded."""
    body = [f"<h1>{inline(title)}</h1>"] + head
    listed = ([first] if first else []) + blocks
    aside = "<aside class='side'>" + "".join(side) + (contents(listed) if listed else "") + "</aside>"
    if first is not None:
        lead, rest = (first.parts[0], first.parts[1:]) if first.parts else ("", [])
        body.append(f"<section id='{first.id}'><h2>{inline(first.title)}</h2>")
        body.append(f"<div class='first'><div>{lead}</div>{aside}</div>")
        body += rest
        body.append("</section>")
    elif listed or side:
        body.append(aside)
    for b in blocks:
        count = f" <span class='count'>({b.counts})</span>" if b.counts else ""
        body.append(
            f"<details id='{b.id}'><summary><h2>{inline(b.title)}</h2>{count}</summary>"
            + "\n".join(b.parts)
            + "</details>"
        )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>" + "\n".join(body) + "</body></html>\n"
    )
