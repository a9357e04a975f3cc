"""What search alone answers about what a conversation has shown or a question names, without a model: a comparison
("compare them"), a follow-up on the last answer's paper or person ("what cites it?", "who else did she write
with?", "who wrote it?"), and the profile of a researcher or institution named. Retrieval-only mode
(`assistant.retrieval_only`) tries the one each intent the question was read as (`assistant.reading`) names before
it searches; each answers from the tools' typed data through the composer (`assistant.composer`), or returns None.
"""

from __future__ import annotations

import asyncio

from assistant.composer import compare_table, linked_listing, retrieved
from assistant.questions import named_profile
from assistant.reading import ReadQuestion
from assistant.safe_markdown import safe_markdown
from assistant.tools import ToolDeps
from assistant.tools.base import Card, CardKind, ProfileSummary
from assistant.turn import Answer, TurnUI, run_tool
from pages.base import md_escape
from pages.compare import ComparePage
from pages.people import ResearcherPage

async def comparison(deps: ToolDeps, read: ReadQuestion, ui: TurnUI, notice: str) -> Answer | None:
    """"Compare 2004.07180 and 1802.05365 on task and data set", or "compare them" after an answer that showed
    papers: the extractive table (`compare_papers`), with the aspects named after "on"/"by"/"in terms of" (the
    default four otherwise)."""
    arguments = {"paper_ids": list(read.compared), "aspects": list(read.aspects) or None}
    result = await run_tool(ui, deps, "compare_papers", arguments)
    if result.failed or not isinstance(result.data, ComparePage):
        return None
    page = result.data
    numbers = {c.id: c.number for c in result.cards if c.kind == CardKind.PAPER and c.number}
    table, cited = compare_table(page, numbers, result.sources.by_number())
    lines = [notice, "", f"**{len(page.rows)} papers** side by side: each cell is the paper's own sentence that "
             f"answers the column best, from its abstract or, with the page, its full text. [Open the table as a page]"
             f"({page.path}) to download it as CSV or markdown.", "", *table]  # fmt: skip
    if page.unknown:
        lines += ["", "Not in this archive: " + ", ".join(md_escape(u) for u in page.unknown)]
    text = safe_markdown("\n".join(lines))
    return await retrieved(ui, text, result.cards, cited, tool_calls=1, sources=result.sources)


async def which_to_compare(deps: ToolDeps, read: ReadQuestion, ui: TurnUI, notice: str) -> Answer:
    """"Compare them" when the last answer showed no papers worth comparing: ask which ones rather than compare
    the closest matches to a question nothing here answered, or one paper with nothing."""
    shown = read.shown
    if read.weak:
        why = ("The last answer found nothing in this archive that answers it well: its cards were only the closest "
               "matches, so comparing them would say nothing.")  # fmt: skip
    elif shown:
        card = shown[0]
        why = f"The last answer showed one paper, [{card.number}] [{md_escape(card.title)}]({card.path})."
    else:
        why = "The last answer showed no papers."
    what = ("Name two or more by their arXiv ids (\"compare 2004.07180 and 1802.05365 on method\"), or ask a "
            "question that finds them first, then \"compare them\".")  # fmt: skip
    answer = "\n".join([notice, "", f"**Which papers should I compare?** {why}", "", what])
    return await retrieved(ui, answer, [], tool_calls=0, weak=True)


def authors_of(deps: ToolDeps, card: Card) -> list[str]:
    """"**Written by** A, B and C: [n] [title](path)." from the catalog; nothing when it knows no author."""
    authors = deps.archive.author_names([card.id]).get(card.id, [])
    if not authors:
        return []
    listed = ", ".join(authors[:-1]) + f" and {authors[-1]}" if len(authors) > 1 else authors[0]
    return [f"**Written by** {md_escape(listed)}: [{card.number}] [{md_escape(card.title)}]({card.path}).", ""]


async def who_wrote_it(deps: ToolDeps, read: ReadQuestion, ui: TurnUI, notice: str) -> Answer | None:
    """"Who wrote it?" after an answer that showed a paper: its authors from the catalog (None when it knows none),
    the paper kept shown so "What cites it?" stays on it."""
    paper = read.paper
    written = await asyncio.to_thread(authors_of, deps, paper) if paper is not None else []
    if paper is None or not written:
        return None
    answer = "\n".join([notice, "", *written]).rstrip()
    return await retrieved(ui, answer, [paper], [paper.number] if paper.number else [], tool_calls=0,
                           sources=deps.sources)  # fmt: skip


async def coauthors(deps: ToolDeps, read: ReadQuestion, ui: TurnUI, notice: str) -> Answer | None:
    """"Who else did she write with?" after an answer that showed a researcher: their co-authors here."""
    person = read.person
    result = await run_tool(ui, deps, "get_researcher", {"researcher_id": int(person.id)})
    if result.failed or not isinstance(result.data, ResearcherPage):
        return None
    section = [
        f"- [{md_escape(c.label)}]({c.href}): {c.count} shared paper{'s' if c.count != 1 else ''}"
        for c in result.data.coauthors
    ] or ["No co-authors are known in this archive."]
    lines = [notice, "", f"Co-authors of **[{md_escape(person.title)}]({person.path})** in this archive:", "",
             *section]  # fmt: skip
    return await retrieved(ui, "\n".join(lines), result.cards, tool_calls=1, sources=result.sources)


async def their_work(deps: ToolDeps, read: ReadQuestion, ui: TurnUI, notice: str) -> Answer | None:
    """"What else did they write?" after an answer that showed a researcher: their profile's summary."""
    result = await run_tool(ui, deps, "summarize_researcher", {"researcher_id": int(read.person.id)})
    if result.failed or not isinstance(result.data, ProfileSummary):
        return None
    lines = [notice, "", md_escape(result.data.assembled)]
    return await retrieved(ui, "\n".join(lines), result.cards, tool_calls=1, sources=result.sources)


async def citing_it(deps: ToolDeps, read: ReadQuestion, ui: TurnUI, notice: str) -> Answer | None:
    """"What cites it?" after an answer that showed a paper: the papers here that cite it."""
    return await _listing(deps, "get_cited_by", read.paper, ui, notice)


async def its_references(deps: ToolDeps, read: ReadQuestion, ui: TurnUI, notice: str) -> Answer | None:
    """"What does it build on?" after an answer that showed a paper: its references."""
    return await _listing(deps, "get_references", read.paper, ui, notice)


async def _listing(deps: ToolDeps, tool: str, paper: Card, ui: TurnUI, notice: str) -> Answer | None:
    result = await run_tool(ui, deps, tool, {"paper_id": paper.id})
    if result.failed:
        return None
    text, cited = linked_listing(result)
    answer = f"{notice}\n\n**{md_escape(paper.title)}**\n\n{text}"
    return await retrieved(ui, answer, result.cards, cited, tool_calls=1, sources=result.sources)


async def about_someone_or_somewhere(deps: ToolDeps, read: ReadQuestion, ui: TurnUI, notice: str) -> Answer | None:
    """A question naming a researcher or an institution is answered with that profile's summary assembled from
    the catalog."""
    named = named_profile(deps, read)
    if named is None:
        return None
    tool, arguments, profile = named
    result = await run_tool(ui, deps, tool, arguments)
    if result.failed or not isinstance(result.data, ProfileSummary):
        return None
    lines = [notice, "", md_escape(result.data.assembled), ""]
    paper_cards = [c for c in result.cards if c.kind == CardKind.PAPER]
    for card in paper_cards:
        year = f" ({card.subtitle})" if card.subtitle else ""
        lines.append(f"{card.number}. [{md_escape(card.title)}]({card.path}){year}")
    lines += ["", f"[Open the profile]({profile})"]
    return await retrieved(ui, "\n".join(lines), result.cards, [c.number for c in paper_cards], tool_calls=1,
                           sources=result.sources)  # fmt: skip
