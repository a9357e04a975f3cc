"""A reasoning model's thoughts (`<think>...</think>`, as DeepSeek-R1, Qwen3 and others write them in the answer's
text) never reach the user as the answer: hidden from the stream as it arrives, a tag split across chunks included,
and removed from the final text. (`reasoning_content`, where a provider sends thoughts apart, is never read.)"""

from __future__ import annotations

import re

OPEN, CLOSE = "<think>", "</think>"
_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)


def _partial_tag(text: str, tag: str) -> int:
    """How many characters at the end of `text` could be the start of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


class ThinkingFilter:
    """Feed it the stream's pieces; it returns what may be shown (thoughts left out)."""

    def __init__(self) -> None:
        self.inside = False
        self.pending = ""

    def feed(self, piece: str) -> str:
        data, self.pending, shown = self.pending + piece, "", []
        while data:
            tag = CLOSE if self.inside else OPEN
            at = data.find(tag)
            if at >= 0:
                if not self.inside:
                    shown.append(data[:at])
                data, self.inside = data[at + len(tag):], not self.inside
                continue
            keep = _partial_tag(data, tag)
            if not self.inside:
                shown.append(data[: len(data) - keep])
            self.pending = data[len(data) - keep:] if keep else ""
            break
        return "".join(shown)


def strip_thinking(text: str) -> str:
    """The answer without its thoughts; a text whose thoughts were opened by the prompt template (only `</think>`
    in it) loses what comes before that tag."""
    if CLOSE in text and OPEN not in text.split(CLOSE, 1)[0]:
        text = text.split(CLOSE, 1)[1]
    return _BLOCK.sub("", text).strip()
