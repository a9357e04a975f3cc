"""The one sanitiser for text that reaches the chat's browser as markdown: answers, their stream, tool steps'
input and output, and the chat's own messages.

Chainlit renders markdown with GitHub's extensions, so a link can come from many forms: inline links (with nested
brackets in the label), reference links and their definitions, images, `<autolinks>`, raw HTML, and bare URLs and
e-mail addresses, which the renderer links in plain text after parsing (an escaped character or an HTML entity
does not stop it). Model output and paper text are untrusted. The rule is an allow-list:

- an inline link survives only when its address is one of our own paths or a few scholarly sites (`ALLOWED`);
  any other link, and every image, becomes its label as plain text;
- every other `[`, `]`, `!`, `<` and stray `\\` or `&` is escaped, so no other link, image or tag can form;
- a bare `://`, `www.` or `@` gets a zero-width space that the renderer's link finder does not cross.

`safe_markdown(safe_markdown(t)) == safe_markdown(t)`: text may pass the boundary twice. `StreamGuard` applies the
same rules to a stream, holding back only what the next characters could still turn into a link.
"""

from __future__ import annotations

import re

ALLOWED = re.compile(  # /me/library/<n>: a user's own upload (its page answers 404 to anyone else)
    r"^(/(papers|researchers|institutions|search|compare)\b|/me/library(/\d+)?$"
    r"|https://(arxiv\.org|doi\.org|openalex\.org)/)"
)
ZWSP = "\u200b"
ENTITIES = ("&lt;", "&gt;", "&amp;", "&quot;", "&#39;")  # what md_escape and html.escape write: kept as they are
PUNCTUATION = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
MAX_LABEL, MAX_ADDRESS = 1000, 1000
_INCOMPLETE = object()


def _link_at(text: str, start: int, final: bool):
    """The inline link whose label opens at `start`: (label, address, end), None when it is not one, or
    _INCOMPLETE when the text ends before that is known (streaming only)."""
    depth, i, n = 0, start, len(text)
    while i < n and i - start <= MAX_LABEL:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        depth += c == "["
        depth -= c == "]"
        if depth == 0:
            break
        i += 1
    else:
        return None if final or i - start > MAX_LABEL else _INCOMPLETE
    close = i
    if close + 1 >= n:
        return None if final else _INCOMPLETE
    if text[close + 1] != "(":
        return None
    depth, j = 0, close + 1
    while j < n and j - close <= MAX_ADDRESS:
        c = text[j]
        depth += c == "("
        depth -= c == ")"
        if depth == 0:
            break
        j += 1
    else:
        return None if final or j - close > MAX_ADDRESS else _INCOMPLETE
    inside = text[close + 2 : j].strip()
    address = inside.split()[0] if inside else ""
    return text[start + 1 : close], address.strip("<>"), j + 1


def _allowed(address: str) -> bool:
    return bool(ALLOWED.match(address)) and ".." not in address and "\\" not in address and not address.startswith("//")


def _scan(text: str, start: int, out: list[str], final: bool, links: bool = True) -> int:
    """Append the safe form of text[start:] to `out`; returns where it stopped (len(text) unless, streaming, the
    rest could still become a link, an escape or an entity). Without `links` no link is kept (a link's label)."""
    i, n = start, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            if i + 1 >= n:
                if not final:
                    return i
                out.append("\\\\")
            elif text[i + 1] in PUNCTUATION:
                out.append(text[i : i + 2])  # an escape already: the character shows as itself
                i += 1
            else:
                out.append("\\\\")
        elif c == "[" and links:
            link = _link_at(text, i, final)
            if link is _INCOMPLETE:
                return i
            if link is None:
                out.append("\\[")
            else:
                label, address, end = link
                shown = safe_label(label)
                out.append(f"[{shown}]({address})" if _allowed(address) and shown.strip() else shown)
                i = end
                continue
        elif c == "!" and links:
            after = _link_at(text, i + 1, final) if text.startswith("[", i + 1) else None
            if after is _INCOMPLETE or (i + 1 == n and not final):
                return i
            if after is None:
                out.append("\\!")  # an image is shown as its label (or our link): the "!" goes with it
        elif c in "[]!":
            out.append("\\" + c)
        elif c == "<":
            out.append("&lt;")
        elif c == "&":
            rest = text[i : i + 6]
            kept = next((e for e in ENTITIES if rest.startswith(e)), None)
            if kept is None and not final and any(e.startswith(rest) for e in ENTITIES) and i + len(rest) == n:
                return i
            out.append(kept or "&amp;")
            i += len(kept or "&")
            continue
        elif c == "/" and i > 0 and text[i - 1] == ":":
            out.append(ZWSP + "/")
        elif c == "." and text[max(0, i - 3) : i].lower() == "www":
            out.append(ZWSP + ".")
        elif c == "@" and (i == 0 or text[i - 1] != ZWSP):
            out.append(ZWSP + "@")
        else:
            out.append(c)
        i += 1
    return i


def safe_label(text: str) -> str:
    """Text that is the label of one of our links: sanitised, and with no link of its own."""
    out: list[str] = []
    _scan(text, 0, out, final=True, links=False)
    return "".join(out)


def safe_markdown(text: str) -> str:
    out: list[str] = []
    _scan(text, 0, out, final=True)
    return "".join(out)


class StreamGuard:
    """The sanitiser over a stream: `feed` returns the safe text that can be shown now. Nothing sent is ever taken
    back: a possible link is held until it is complete (an image written by the model is never fetched, not even
    for the moment before the final text)."""

    def __init__(self) -> None:
        self.raw = ""
        self.done = 0  # raw[:done] has been sanitised and sent

    def feed(self, delta: str) -> str:
        self.raw += delta
        out: list[str] = []
        self.done = _scan(self.raw, self.done, out, final=False)
        return "".join(out)
