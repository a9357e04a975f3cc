"""Turn [n] in an answer into links to our paper pages; everything else goes through the one sanitiser."""

from __future__ import annotations

import re

from assistant.safe_markdown import safe_label, safe_markdown

_CITE = re.compile(r"\[(\d{1,3})(?:,?\s*(pp?\.\s*\d{1,4}(?:\s*[-–]\s*\d{1,4})?))?\](?!\()")  # [2] or [2, p. 7]


def link_citations(answer: str, sources: dict[int, tuple[str, str]]) -> tuple[str, list[int]]:
    """The answer with [n] (or [n, p. 7]) linked to its paper page, and the numbers it cited, in first-use order."""
    cited: list[int] = []

    def link(match: re.Match) -> str:
        n = int(match.group(1))
        if n not in sources:
            return match.group(0)
        if n not in cited:
            cited.append(n)
        page = f", {match.group(2)}" if match.group(2) else ""
        return f"[[{n}{page}]]({sources[n][1]})"

    text = safe_markdown(_CITE.sub(link, answer))
    return text, cited


def sources_footer(cited: list[int], sources: dict[int, tuple[str, str]]) -> str:
    if not cited:
        return ""
    lines = ["", "", "**Sources**", ""]
    for n in cited:
        title, path = sources[n]
        lines.append(f"{n}. [{safe_label(title)}]({path})")
    return "\n".join(lines)
