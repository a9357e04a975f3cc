"""Evidence: a text an answer showed of a paper, under the number the conversation cites it by.

The tools find it (a full-text passage, an abstract's sentence), the answer line weighs it (`assistant.answer_line`),
the composer numbers and links it (`assistant.composer`), and the answer keeps what it showed for each [n], so a
stored conversation still knows which sentence, at which page, stood behind a citation.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Evidence:
    """A text of the paper cited as `number`: a full-text passage (its `page`, and its `passage` index in the paper's
    full text when known) or an abstract's sentence (page None); empty when the paper was shown by its title alone.
    `about`, `title` and `whole` are what the answer line weighs beside the text; they are not kept with an answer."""

    text: str
    paper_id: str
    number: int
    page: int | None = None
    about: str = ""  # the paper's title and abstract: a name of the question they hold, each of its texts holds
    title: str = ""  # the paper's title: a definition quoted from its first page ends with it
    whole: bool = False  # the text begins where its source does (an abstract, a title), never inside a sentence
    passage: int | None = None  # the passage's index among its paper's passages (a full-text passage only)

    @property
    def id(self) -> str:
        """Stable across turns: the paper, then the passage and page, or the text's own words for an abstract's."""
        if self.passage is not None:
            return f"{self.paper_id}#passage-{self.passage}"
        if self.page is not None:
            return f"{self.paper_id}#p{self.page}:{self.text[:80]}"
        return f"{self.paper_id}#{self.text[:80]}" if self.text else self.paper_id

    def kept(self) -> dict:
        """What a stored answer keeps of it."""
        return {"paper_id": self.paper_id, "number": self.number, "text": self.text, "page": self.page,
                "passage": self.passage}  # fmt: skip

    @classmethod
    def stored(cls, item: object) -> Evidence | None:
        """From what `kept` wrote (None for anything else: stored by another version, or not evidence at all)."""
        if not isinstance(item, dict) or not isinstance(item.get("paper_id"), str):
            return None
        number, page, passage = item.get("number"), item.get("page"), item.get("passage")
        if not isinstance(number, int) or isinstance(number, bool):
            return None
        return cls(str(item.get("text") or ""), item["paper_id"], number, page if isinstance(page, int) else None,
                   passage=passage if isinstance(passage, int) else None)  # fmt: skip


def stored_evidence(items: object) -> tuple[Evidence, ...]:
    """The evidence a stored answer kept; nothing when it kept none (a conversation stored before answers did)."""
    found = (Evidence.stored(item) for item in (items if isinstance(items, list) else []))
    return tuple(item for item in found if item is not None)
