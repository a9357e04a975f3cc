"""Turn [n] in an answer into links to our paper pages, and drop links the model made up."""

from __future__ import annotations

import re

# [label](url "title"): the url may hold one level of balanced parentheses, as markdown allows.
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(((?:[^()\s]|\([^()\s]*\))*)[^)]*\)")
_CITE = re.compile(r"\[(\d{1,3})(?:,?\s*(pp?\.\s*\d{1,4}(?:\s*[-–]\s*\d{1,4})?))?\](?!\()")  # [2] or [2, p. 7]
_ALLOWED = re.compile(r"^(/(papers|researchers|institutions|search)\b|https://(arxiv\.org|doi\.org|openalex\.org)/)")


def _safe_links(text: str) -> str:
    """Keep links to our own pages and a few scholarly sites; other links and all images become plain text."""

    def keep(match: re.Match) -> str:
        _bang, label, url = match.groups()
        if _ALLOWED.match(url) and ".." not in url:
            return match.group(0)
        return label

    # No image syntax survives at all (a browser fetches an image unasked); then links are judged.
    return _LINK.sub(keep, text.replace("![", "["))


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


class StreamGuard:
    """Passes streamed text on with the same link rules as the final answer.

    A link or image is held back until it is complete, so an image URL written by the model (which the
    browser would fetch at once) never reaches the page, not even for the moment before the final text.
    """

    # An unfinished "[label](url" at the end of the text, or a lone "!" that an "[" may follow.
    _OPEN = re.compile(r"(!?\[[^\]]*(\](\((?:[^()]|\([^()]*\))*(\([^()]*)?)?)?|!)$")

    def __init__(self) -> None:
        self.raw = ""
        self.sent = ""

    def feed(self, delta: str) -> str:
        """The part of the cleaned text that can be shown now."""
        self.raw += delta
        held = self._OPEN.search(self.raw[-2000:])  # an unfinished [label](url) at the end
        ready = self.raw[: len(self.raw) - len(held.group(0))] if held else self.raw
        clean = _safe_links(ready)
        if not clean.startswith(self.sent):  # cannot happen with complete links; never resend
            return ""
        out, self.sent = clean[len(self.sent) :], clean
        return out
