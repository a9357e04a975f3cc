"""How a chat opened about something begins: the researcher or institution it is about, as a card, and what it says
first (a paper's, a library's, a person's or a place's chat)."""

from __future__ import annotations

from assistant.conversation import Conversation
from assistant.tools import Card
from assistant.tools.base import CardKind


def subject_card(archive, kind: str, subject: str) -> Card | None:
    """The researcher or institution a chat was opened about (by our id, as their page's dock gives it), as a card;
    None for anything else, so an address cannot make the chat about what the catalog does not hold."""
    from retrieval.scholarly.records import whole_number
    from pages.base import institution_path, researcher_path

    number = whole_number(subject)
    if number is None:
        return None
    if kind == "researcher" and (person := archive.researchers_by_ids([number]).get(number)):
        count = archive.paper_counts([number])[number]
        path = researcher_path(number, person.name)
        papers = f"{count} paper{'s' if count != 1 else ''} here"
        return Card(CardKind.RESEARCHER, str(number), person.name, path, papers)
    if kind == "institution":
        found = archive.find_institution(str(number)).institution
        if found is not None and found.id == number:
            return Card(CardKind.INSTITUTION, str(number), found.name, institution_path(number, found.name))
    return None


def introduction(conversation: Conversation, archive, viewer: str | None = None) -> str | None:
    """What a chat opened about something says first (markdown from catalog values, or the viewer's own upload;
    the caller sanitises it)."""
    from pages.base import paper_path
    from pages.base import md_escape

    if conversation.paper:
        paper = archive.papers([conversation.paper], viewer).get(conversation.paper)
        if paper is None:  # an upload deleted since
            return None
        return f"This chat is about **[{md_escape(paper.title)}]({paper_path(paper)})**. Ask anything about it."
    if conversation.library:
        return ("This chat searches **[your library](/me/library)** only: your PDFs and the papers you keep. Add a "
                "PDF with the paperclip, or reading lists on that page.")  # fmt: skip
    if (about := conversation.about) is not None:
        whose = "their work" if about.kind == CardKind.RESEARCHER else "its researchers and papers"
        return f"This chat is about **[{md_escape(about.title)}]({about.path})**. Ask about {whose}."
    return None
