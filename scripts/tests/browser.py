"""A report page opened in a real browser (Debian's `chromium`, headless): the DOM checks the
report tests assert on, and a screenshot. scripts/test.sh installs chromium as it installs
OpenMPI and Slurm; where it is absent, the tests that need it report skipped, by name.

A window narrower than headless chromium's smallest (500 px: a phone's 390) is made by loading the
page into a frame of that width (`srcdoc`: the page's own origin, so the checks can report to the
outer page), which is what the page's viewport then is."""

from __future__ import annotations

import html as html_lib
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

WIDTH = 1400  # the window a reader looks at the report in
PHONE = 390  # a phone's width in CSS pixels
SMALLEST_WINDOW = 500  # headless chromium's narrowest window

# Runs in the page once it has loaded; writes what it found into the DOM as JSON, which
# --dump-dom then prints. Every check names the element it is about. First the page as it opens
# (sections folded): its height and links; then with every section opened: what a reader trips over.
CHECKS_JS = r"""
<script>
window.addEventListener('load', () => {
  const doc = document.documentElement;
  const found = {images: [], empty_cells: [], backticks: [], overflow: [], small_text: [], text_cut: [],
                 links: 0, dead_links: [], folded_height: doc.scrollHeight, width: doc.clientWidth,
                 viewport: !!document.querySelector('meta[name=viewport]'),
                 details: document.querySelectorAll('details').length,
                 details_open: document.querySelectorAll('details[open]').length};
  for (const a of document.querySelectorAll('a[href^="#"]')) {
    const id = decodeURIComponent(a.getAttribute('href').slice(1));
    if (document.getElementById(id)) found.links += 1; else found.dead_links.push(id);
  }
  const side = document.querySelector('aside');
  if (side) { const r = side.getBoundingClientRect(); found.aside = {top: r.top + window.scrollY, left: r.left, text: side.textContent.slice(0, 200)}; }
  const lead = document.querySelector('.first table');
  if (lead) { const r = lead.getBoundingClientRect(); found.lead_table = {top: r.top + window.scrollY, right: r.right}; }
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  found.open_height = doc.scrollHeight;
  for (const img of document.images) {
    const shown = img.getBoundingClientRect().width;
    let colours = {};
    try { colours = JSON.parse(img.getAttribute('data-card-colors') || '{}'); } catch (e) { colours = {error: String(e)}; }
    found.images.push({src: img.getAttribute('data-name') || img.alt || '?', natural: img.naturalWidth,
                       naturalHeight: img.naturalHeight, shown: shown, card_colors: colours});
    if (parseInt(img.getAttribute('data-text-outside') || '0') > 0)
      found.text_cut.push(img.getAttribute('data-name'));
    const minFont = parseFloat(img.getAttribute('data-min-font-px') || 'NaN');
    if (img.naturalWidth > 0 && !isNaN(minFont)) {
      const px = minFont * shown / img.naturalWidth;
      if (px < 9) found.small_text.push({img: img.getAttribute('data-name') || img.alt, text_px: px});
    }
  }
  document.querySelectorAll('td').forEach((td, i) => {
    if (td.textContent.trim() === '') {
      const table = td.closest('table');
      const box = table ? table.closest('.scroll') || table : null;
      const cap = box && box.previousElementSibling ? box.previousElementSibling.textContent.slice(0, 80) : '';
      found.empty_cells.push({table: cap, row: td.parentElement.textContent.slice(0, 80)});
    }
  });
  document.querySelectorAll('th').forEach(th => {
    if (th.textContent.trim() === '') found.empty_cells.push({table: 'a header', row: th.parentElement.textContent.slice(0, 80)});
  });
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const tag = n.parentElement ? n.parentElement.tagName : '';
    if (tag === 'SCRIPT' || tag === 'STYLE') continue;
    if (n.textContent.includes('`')) found.backticks.push(n.textContent.trim().slice(0, 100));
  }
  // Nothing wider than the window: the page itself never scrolls sideways, and every element
  // lies inside it, except what sits in a box that scrolls sideways on its own (a wide table or
  // figure), whose box must fit.
  if (doc.scrollWidth > doc.clientWidth + 1)
    found.overflow.push({tag: 'HTML', text: 'the page scrolls sideways', right: doc.scrollWidth, client: doc.clientWidth});
  document.querySelectorAll('body *').forEach(el => {
    if (el.id === 'triaudit-browser-checks' || el.closest('#triaudit-browser-checks')) return;
    const inBox = el.parentElement && el.parentElement.closest('.scroll');
    if (inBox) return;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return;
    const scrolls = getComputedStyle(el).overflowX === 'auto' || getComputedStyle(el).overflowX === 'scroll';
    if (r.right > doc.clientWidth + 1 || (!scrolls && el.tagName !== 'IMG' && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0))
      found.overflow.push({tag: el.tagName, text: el.textContent.slice(0, 80), right: r.right,
                           scroll: el.scrollWidth, client: el.clientWidth});
  });
  found.overflow = found.overflow.slice(0, 20);
  const out = document.createElement('pre');
  out.id = 'triaudit-browser-checks';
  out.textContent = JSON.stringify(found);
  (window.parent !== window ? window.parent.document : document).body.appendChild(out);
});
</script>
"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run(args: list[str], timeout: int = 180) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            chromium() or "chromium",
            "--headless",
            "--no-sandbox",  # the tests run as root in CI
            "--disable-gpu",
            f"--user-data-dir={profile}",
            "--hide-scrollbars",
            *args,
        ]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def _framed(text: str, width: int, height: int) -> str:
    """`text` (a whole page) in a frame `width` CSS pixels wide: the page's window on a phone."""
    return (
        "<!doctype html><html><head><meta charset='utf-8'></head><body style='margin:0;background:#888'>"
        f"<iframe id='phone' style='width:{width}px;height:{height}px;border:0;background:#fff' "
        f'srcdoc="{html_lib.escape(text, quote=True)}"></iframe></body></html>'
    )


def page_checks(html: Path, width: int = WIDTH) -> dict:
    """What the page shows in a `width`-px window: its height with every section folded, its
    working links, whether it has a viewport; then with every section open: images decoded and
    at what size, the colour each figure drew each card in, empty cells, literal backticks,
    elements wider than the window, text smaller than 9 px in a figure."""
    probe = html.with_name(html.stem + ".browser-check.html")
    text = html.read_text(encoding="utf-8").replace("</body>", CHECKS_JS + "</body>")
    window = width
    if width < SMALLEST_WINDOW:
        text, window = _framed(text, width, 2000), SMALLEST_WINDOW
    probe.write_text(text, encoding="utf-8")
    try:
        p = _run([f"--window-size={window},1000", "--virtual-time-budget=15000", "--dump-dom", probe.as_uri()])
    finally:
        probe.unlink(missing_ok=True)
    m = re.search(r'<pre id="triaudit-browser-checks">(.*?)</pre>', p.stdout, re.S)
    if not m:
        raise AssertionError(f"chromium printed no checks (exit {p.returncode}): {p.stderr[-2000:]}")
    return json.loads(html_lib.unescape(m.group(1)))


def screenshot(html: Path, png: Path, height: int = 6000, width: int = WIDTH) -> Path:
    """The page as a reader sees it, `width` px wide (the first `height` px), sections as it opens."""
    target, window = html, width
    if width < SMALLEST_WINDOW:
        target = html.with_name(html.stem + ".phone.html")
        target.write_text(_framed(html.read_text(encoding="utf-8"), width, height), encoding="utf-8")
        window = SMALLEST_WINDOW
    try:
        p = _run([f"--window-size={window},{height}", f"--screenshot={png}", target.as_uri()])
    finally:
        if target != html:
            target.unlink(missing_ok=True)
    if not png.exists():
        raise AssertionError(f"chromium wrote no screenshot (exit {p.returncode}): {p.stderr[-2000:]}")
    if window != width:  # the frame only: crop the window's spare width away
        from PIL import Image

        with Image.open(png) as im:
            im.crop((0, 0, width, im.height)).save(png)
    return png
