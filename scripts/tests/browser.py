"""A report page opened in a real browser (Debian's `chromium`, headless): the DOM checks the
report tests assert on, and a screenshot. scripts/test.sh installs chromium as it installs
OpenMPI and Slurm; where it is absent, the tests that need it report skipped, by name."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

WIDTH = 1400  # the window a reader looks at the report in

# Runs in the page once it has loaded; writes what it found into the DOM as JSON, which
# --dump-dom then prints. Every check names the element it is about.
CHECKS_JS = r"""
<script>
window.addEventListener('load', () => {
  const found = {images: [], empty_cells: [], backticks: [], overflow: [], small_text: [], text_cut: []};
  for (const img of document.images) {
    const shown = img.getBoundingClientRect().width;
    found.images.push({src: img.getAttribute('data-name') || img.alt || '?', natural: img.naturalWidth,
                       naturalHeight: img.naturalHeight, shown: shown});
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
      const cap = table && table.previousElementSibling ? table.previousElementSibling.textContent.slice(0, 80) : '';
      found.empty_cells.push({table: cap, row: td.parentElement.textContent.slice(0, 80)});
    }
  });
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const tag = n.parentElement ? n.parentElement.tagName : '';
    if (tag === 'SCRIPT' || tag === 'STYLE') continue;
    if (n.textContent.includes('`')) found.backticks.push(n.textContent.trim().slice(0, 100));
  }
  document.querySelectorAll('table, pre, img, p, li, h1, h2, h3').forEach(el => {
    const r = el.getBoundingClientRect();
    if (r.right > document.documentElement.clientWidth + 1 || el.scrollWidth > el.clientWidth + 1 && el.tagName !== 'IMG')
      found.overflow.push({tag: el.tagName, text: el.textContent.slice(0, 80), right: r.right,
                           scroll: el.scrollWidth, client: el.clientWidth});
  });
  const out = document.createElement('pre');
  out.id = 'triaudit-browser-checks';
  out.textContent = JSON.stringify(found);
  document.body.appendChild(out);
});
</script>
"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run(args: list[str], timeout: int = 120) -> subprocess.CompletedProcess:
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


def page_checks(html: Path) -> dict:
    """What the page shows in a WIDTH-px window: images decoded and at what size, empty cells,
    literal backticks, elements wider than the window, text smaller than 9 px in a figure."""
    probe = html.with_name(html.stem + ".browser-check.html")
    text = html.read_text(encoding="utf-8")
    probe.write_text(text.replace("</body>", CHECKS_JS + "</body>"), encoding="utf-8")
    try:
        p = _run([f"--window-size={WIDTH},1000", "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()])
    finally:
        probe.unlink(missing_ok=True)
    m = re.search(r'<pre id="triaudit-browser-checks">(.*?)</pre>', p.stdout, re.S)
    if not m:
        raise AssertionError(f"chromium printed no checks (exit {p.returncode}): {p.stderr[-2000:]}")
    import html as html_lib

    return json.loads(html_lib.unescape(m.group(1)))


def screenshot(html: Path, png: Path, height: int = 6000) -> Path:
    """The page as a reader sees it, WIDTH px wide (the first `height` px)."""
    p = _run([f"--window-size={WIDTH},{height}", f"--screenshot={png}", html.as_uri()])
    if not png.exists():
        raise AssertionError(f"chromium wrote no screenshot (exit {p.returncode}): {p.stderr[-2000:]}")
    return png
