"""The documentation is a map that stays true: README short, docs/ standing alone, the generated
pages (CLI reference, cards) equal to what the code says today, every link pointing somewhere."""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

import docs_gen  # noqa: E402

PAGES = [REPO / "README.md", REPO / "CONTRIBUTING.md", REPO / "CHANGELOG.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    h = heading.strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def test_readme_is_a_map_of_at_most_200_lines():
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= 200, len(lines)
    text = "\n".join(lines)
    for needed in ("## Exit codes", "docs/method.md", "docs/cli.md", "scripts/test.sh", "scripts/main.sh"):
        assert needed in text, needed


def test_generated_pages_are_up_to_date():
    for rel, render in docs_gen.PAGES.items():
        assert (REPO / rel).read_text() == render(), f"{rel} is stale: run python scripts/docs_gen.py"


def test_the_cli_page_lists_every_command_and_option():
    from triaudit.commands import COMMANDS, build_parser

    page = (REPO / "docs" / "cli.md").read_text()
    parser = build_parser()
    subs = docs_gen._subparsers(parser)
    assert len(subs) == len(COMMANDS)
    for name, sp in subs.items():
        assert f"## `triaudit {name}`" in page, name
        for action in sp._actions:
            for flag in action.option_strings:
                assert flag in page, (name, flag)


# The design folder beside a developer's checkout, which a plain clone has not: spelled in two
# parts so that this test is not itself a reference to it.
OUTSIDE = "../" + "shared"


def test_no_page_sends_a_reader_outside_the_repository():
    for page in PAGES:
        assert OUTSIDE not in page.read_text(), page.name


def test_every_relative_link_resolves():
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+://|mailto:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.name}: {target}")
                continue
            if anchor and dest.suffix == ".md":
                headings = {_anchor(h) for h in re.findall(r"(?m)^#+ (.*)$", dest.read_text())}
                if anchor not in headings:
                    broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


def test_every_docs_page_is_in_the_index():
    readme = (REPO / "README.md").read_text()
    for page in sorted((REPO / "docs").glob("*.md")):
        assert f"docs/{page.name}" in readme, page.name
