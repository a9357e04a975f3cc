"""Retrieval-only mode: with no LLM configured, a small planner picks the tool and composes the answer."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from assistant.tools import ToolDeps
from assistant.tools.base import unavailable
from pages.base import md_escape
from retrieval.search import clean_query

if TYPE_CHECKING:  # pragma: no cover
    from assistant.agent import TurnOutcome, TurnUI

NOTICE = (
    "_Retrieval-only mode: no language model is configured, so these are the papers and sentences that best "
    "match your question rather than a written answer. To get written, cited answers, set `SCHOLARLOOM_LLM` "
    "(e.g. `openai/gpt-4o-mini` with `OPENAI_API_KEY`, or `ollama_chat/qwen2.5` with `SCHOLARLOOM_LLM_API_BASE`) "
    "and restart._"
)
SEARCH_UNAVAILABLE = (
    "**Search is unavailable right now**: the catalog or the search index did not answer. Nothing is lost; "
    "please ask again in a minute."
)
_NAME = re.compile(r"\b([A-Z][\w'.-]+(?:\s+(?:[A-Z][\w'.-]+|de|van|von|da|di|del|la|le|of|for|and)){1,5})")
_ACRONYM = re.compile(r"\b([A-Z][A-Z&]{1,9})\b")
# Words of a question that asks about a person or a place as such ("What does X work on?", "Who at X has
# papers here?"); any other word means the question is about a topic, which a paper search answers better.
_PROFILE_WORDS = frozenset(
    "who what whom where which does do did is are was were has have had work works working worked on at in of "
    "about tell me us show give list the a an papers paper publications research researchers people "
    "here this archive there their his her its s summary summarize summarise profile field fields topics".split()
)


def _only_about(query: str, span: str) -> bool:
    rest = re.findall(r"[a-z]+", query.replace(span, " ").lower())
    return all(word in _PROFILE_WORDS for word in rest)


_ARXIV_ID = re.compile(r"\b(\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7})\b")


async def answer_without_llm(deps: ToolDeps, question: str, ui: "TurnUI") -> "TurnOutcome":
    from assistant.agent import TurnOutcome, run_tool

    query = clean_query(question)
    mentioned = _ARXIV_ID.search(query)
    if mentioned:
        result = await run_tool(ui, deps, "get_paper", {"paper_id": mentioned.group(1)})
        if not result.failed:
            answer = f"{NOTICE}\n\n{result.output}"
            await ui.finish(answer, result.cards)
            return TurnOutcome(answer, result.cards, [c.number for c in result.cards if c.number], 1)
    follow_up = await _follow_up(deps, query, ui)
    if follow_up is not None:
        return follow_up
    profile = await _about_someone_or_somewhere(deps, query, ui)
    if profile is not None:
        return profile
    result = await run_tool(ui, deps, "search_papers", {"query": query or question, "limit": 5})
    if unavailable(result):
        answer = SEARCH_UNAVAILABLE
        await ui.finish(answer, [])
        return TurnOutcome(answer, [], [], 1, result.output)
    if result.failed or not result.cards:
        answer = f"{NOTICE}\n\n{result.output}"
        await ui.finish(answer, [])
        return TurnOutcome(answer, [], [], 1, result.output if result.failed else None)
    lines = [NOTICE, "", f"Papers that best match **{md_escape(query)}**:", ""]
    for card in result.cards:
        lines.append(f"{card.number}. [{md_escape(card.title)}]({card.path}): {md_escape(card.subtitle)}")
        lines += [f"   > {md_escape(sentence)}" for sentence in card.quotes]
    answer = "\n".join(lines)
    await ui.finish(answer, result.cards)
    return TurnOutcome(answer, result.cards, [c.number for c in result.cards], 1)


_PERSON = re.compile(r"\b(she|he|they|her|him|his|hers|their|them|this (?:person|researcher|author))\b", re.I)
_THING = re.compile(r"\b(it|its|this paper|that paper|the paper)\b", re.I)
_WROTE_WITH = re.compile(
    r"\b(co-?author\w*|collaborat\w*|(?:writ\w*|wrote|work\w*|publish\w*)\b[^?.!]{0,20}\bwith)\b", re.I
)
_CITES = re.compile(r"\b(cit(?:e|es|ed|ing|ation|ations)|follow(?:ed|s)? (?:up|on))\b", re.I)
_REFERENCES = re.compile(r"\b(reference\w*|build[s]? on|based on|prior work)\b", re.I)


async def _follow_up(deps: ToolDeps, query: str, ui: "TurnUI") -> "TurnOutcome | None":
    """A follow-up that names no one ("who else did she write with?", "what cites it?") is about what the last
    answer showed: its first researcher card for a person, its first paper card for a thing."""
    from assistant.agent import TurnOutcome, run_tool

    person = next((c for c in deps.focus if c.kind == "researcher"), None)
    paper = next((c for c in deps.focus if c.kind == "paper"), None)
    if person is not None and _PERSON.search(query):
        if _WROTE_WITH.search(query):
            result = await run_tool(ui, deps, "get_researcher", {"researcher_id": int(person.id)})
            if result.failed:
                return None
            section = (
                result.output.split("## Co-authors", 1)[1].split("\n## ", 1)[0].strip()
                if ("## Co-authors" in result.output)
                else "No co-authors are known in this archive."
            )
            lines = [NOTICE, "", f"Co-authors of **[{md_escape(person.title)}]({person.path})** in this archive:", "",
                     section]  # fmt: skip
        else:
            result = await run_tool(ui, deps, "summarize_researcher", {"researcher_id": int(person.id)})
            if result.failed:
                return None
            lines = [NOTICE, "", result.output.split("\n", 1)[0].split(": ", 1)[-1]]
        answer = "\n".join(lines)
        await ui.finish(answer, result.cards)
        return TurnOutcome(answer, result.cards, [], 1)
    if paper is not None and _THING.search(query) and (_CITES.search(query) or _REFERENCES.search(query)):
        tool = "get_cited_by" if _CITES.search(query) else "get_references"
        result = await run_tool(ui, deps, tool, {"paper_id": paper.id})
        if result.failed:
            return None
        from assistant.citations import link_citations

        text, cited = link_citations(result.output, deps.sources.by_number())
        answer = f"{NOTICE}\n\n**{md_escape(paper.title)}**\n\n{text}"
        await ui.finish(answer, result.cards)
        return TurnOutcome(answer, result.cards, cited, 1)
    return None


async def _about_someone_or_somewhere(deps: ToolDeps, query: str, ui: "TurnUI") -> "TurnOutcome | None":
    """A question naming a researcher (a known full name) or an institution (a name or acronym the resolver
    is sure of) is answered with that profile's summary assembled from the catalog."""
    from assistant.agent import TurnOutcome, run_tool
    from pages.addresses import institution_path, researcher_path
    from retrieval.profiles import find_institution, find_researchers
    from retrieval.upsert import normalise_name

    for span in _NAME.findall(query):
        if not _only_about(query, span):
            continue
        people = [
            c for c in find_researchers(deps.catalog, span, limit=3) if c.researcher.name_key == normalise_name(span)
        ]
        if len(people) == 1:
            person = people[0].researcher
            tool, arguments = "summarize_researcher", {"researcher_id": person.id}
            profile = researcher_path(person.id, person.name)
            break
    else:
        hit = None
        for span in [*_NAME.findall(query), *_ACRONYM.findall(query)]:
            if not _only_about(query, span):
                continue
            hit = find_institution(deps.catalog, span, threshold=0.9)
            if hit.institution is not None and hit.how in ("exact", "acronym"):
                break
        if hit is None or hit.institution is None or hit.how not in ("exact", "acronym"):
            return None
        tool, arguments = "summarize_institution", {"institution": str(hit.institution.id)}
        profile = institution_path(hit.institution.id, hit.institution.name)
    result = await run_tool(ui, deps, tool, arguments)
    if result.failed:
        return None
    head = result.output.split("\n", 1)[0].replace("Summary from the catalog (statistics and titles only): ", "")
    lines = [NOTICE, "", head, ""]
    paper_cards = [c for c in result.cards if c.kind == "paper"]
    for card in paper_cards:
        year = f" ({card.subtitle})" if card.subtitle else ""
        lines.append(f"{card.number}. [{md_escape(card.title)}]({card.path}){year}")
    lines += ["", f"[Open the profile]({profile})"]
    answer = "\n".join(lines)
    await ui.finish(answer, result.cards)
    return TurnOutcome(answer, result.cards, [c.number for c in paper_cards], 1)
