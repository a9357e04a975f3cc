"""Turn [n] in an answer into links to our paper pages, and drop links the model made up."""

from __future__ import annotations

import re

_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]*)[^)]*\)")
_CITE = re.compile(r"\[(\d{1,3})\](?!\()")
_ALLOWED = re.compile(r"^(/(papers|researchers|institutions|search)\b|https://(arxiv\.org|doi\.org|openalex\.org)/)")


def _safe_links(text: str) -> str:
    """Keep links to our own pages and a few scholarly sites; other links and all images become plain text."""

    def keep(match: re.Match) -> str:
        bang, label, url = match.groups()
        if not bang and _ALLOWED.match(url) and ".." not in url:
            return match.group(0)
        return label

    return _LINK.sub(keep, text)


def link_citations(answer: str, sources: dict[int, tuple[str, str]]) -> tuple[str, list[int]]:
    """The answer with [n] linked to its paper page, and the numbers it cited, in order of first use."""
    cited: list[int] = []

    def link(match: re.Match) -> str:
        n = int(match.group(1))
        if n not in sources:
            return match.group(0)
        if n not in cited:
            cited.append(n)
        return f"[[{n}]]({sources[n][1]})"

    text = _CITE.sub(link, _safe_links(answer))
    return text, cited


def sources_footer(cited: list[int], sources: dict[int, tuple[str, str]]) -> str:
    if not cited:
        return ""
    lines = ["", "", "**Sources**", ""]
    for n in cited:
        title, path = sources[n]
        safe_title = title.replace("[", "(").replace("]", ")")
        lines.append(f"{n}. [{safe_title}]({path})")
    return "\n".join(lines)
