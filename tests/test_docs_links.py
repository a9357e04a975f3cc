"""Every relative link and image in the documents a reader opens (README.md, docs/*.md, SECURITY.md, BENCHMARKS.md,
CHANGELOG.md) leads to a file that exists, and every `#anchor` to a heading of its page, slugged as GitHub slugs
them. Links to other sites are not fetched (no network in tests)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import REPO

DOCUMENTS = ("README.md", "SECURITY.md", "BENCHMARKS.md", "CHANGELOG.md", "docs/*.md")
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)[^`]*?\1")
# [text](target) and ![alt](target), the target up to a space (a title may follow) or the closing parenthesis;
# and reference definitions, `[name]: target`.
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def documents(root: Path = REPO) -> list[Path]:
    return sorted({path for pattern in DOCUMENTS for path in root.glob(pattern) if path.is_file()})


def _prose(text: str) -> str:
    """The text without fenced code blocks and code spans, whose brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text (links read as their words, code and emphasis marks dropped),
    lowercased, anything but letters, digits, spaces, hyphens and underscores removed, spaces made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").replace("*", "")
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a markdown page's headings; a repeated heading gets -1, -2, ... as on GitHub."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in HEADING.findall(FENCE.sub("", path.read_text())):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(path: Path, root: Path = REPO) -> list[str]:
    """What is wrong with each relative link of `path`: a file that does not exist, or an anchor no heading has."""
    prose = _prose(path.read_text())
    problems = []
    for target in INLINE.findall(prose) + DEFINITION.findall(prose):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:: another site, not fetched
            continue
        address, _, anchor = target.partition("#")
        linked = (path.parent / address).resolve() if address else path
        where = f"{path.relative_to(root)}: ({target})"
        if not linked.exists():
            problems.append(f"{where} leads to no file")
        elif anchor and linked.suffix == ".md" and anchor.lower() not in anchors(linked):
            problems.append(f"{where}: {linked.name} has no heading #{anchor}")
    return problems


def test_every_link_in_the_documents_resolves():
    assert {"README.md", "docs/user-guide.md", "docs/operators.md", "docs/settings.md"} <= {
        p.relative_to(REPO).as_posix() for p in documents()}  # fmt: skip
    problems = [problem for path in documents() for problem in broken_links(path)]
    assert not problems, "\n".join(problems)


def test_the_checker_finds_a_broken_link_and_a_missing_anchor(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# A guide\n\n## The `chat`, and its modes\n\n## Repeated\n\n## Repeated\n")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG")
    (tmp_path / "README.md").write_text(
        "# Read me\n\n![logo](logo.png) [guide](docs/guide.md#the-chat-and-its-modes) [again](docs/guide.md#repeated-1)"
        " [site](https://example.org/nowhere) [here](#read-me)\n\n```\n[not a link](nowhere.md)\n```\n"
        "`[nor this](nowhere.md)` [gone](docs/missing.md) ![lost](images/lost.png) [bad](docs/guide.md#no-such)\n"
        "[ref]: docs/absent.md\n"
    )
    problems = broken_links(tmp_path / "README.md", tmp_path)
    assert problems == [
        "README.md: (docs/missing.md) leads to no file",
        "README.md: (images/lost.png) leads to no file",
        "README.md: (docs/guide.md#no-such): guide.md has no heading #no-such",
        "README.md: (docs/absent.md) leads to no file",
    ], problems
