"""Retrieval-only mode: with no LLM configured, a small planner picks the tool and composes the answer."""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace

from assistant.answer_line import AnswerLine, Evidence, answer_line, asks_for_a_fact
from assistant.questions import ARXIV_MENTION, named_profile
from assistant.tools import ToolDeps
from assistant.tools.base import (
    Card,
    CardKind,
    PapersFound,
    Passage,
    PassagesFound,
    ProfileSummary,
    SourceBook,
    unavailable,
)
from assistant.turn import Answer, Question, TurnUI, link_citations, run_tool
from retrieval.search.relevance import bare, named_terms, names_its_own, says
from retrieval.vectors.index import Filters
from web.base import md_escape
from web.compare import ComparePage
from web.people import ResearcherPage

NOTICE = (
    "_Retrieval-only mode: no language model is configured, so these are the papers and sentences that best "
    "match your question rather than a written answer. To get written, cited answers, set `SCHOLARLOOM_LLM` "
    "(e.g. `openai/gpt-4o-mini` with `OPENAI_API_KEY`, or `ollama_chat/qwen2.5` with `SCHOLARLOOM_LLM_API_BASE`) "
    "and restart._"
)
MORE_PASSAGES = 10  # of the found papers' passages, weighed for a fact's answer line beyond the three a paper shows
NAMING_PASSAGES = 20  # of the best paper's passages, read for how it names what "who wrote X" asks about
SEARCH_UNAVAILABLE = (
    "**Search is unavailable right now**: the catalog or the search index did not answer. Nothing is lost; "
    "please ask again in a minute."
)


async def answer_without_llm(deps: ToolDeps, question: Question, ui: TurnUI, notice: str = NOTICE) -> Answer:
    """The answer search alone can give, opened by `notice` (why there is no written answer)."""
    query = question.query
    if (comparison := await _comparison(deps, query, ui, notice)) is not None:
        return comparison
    mentioned = ARXIV_MENTION.search(query)
    if mentioned:
        result = await run_tool(ui, deps, "get_paper", {"paper_id": mentioned.group(1)})
        if not result.failed:
            (card,) = result.cards
            answer = f"{notice}\n\nPaper [{card.number}]:\n\n{result.data.to_markdown()}"
            await ui.finish(answer, result.cards)
            return Answer(answer, result.cards, [c.number for c in result.cards if c.number], 1,
                          sources=result.sources)  # fmt: skip
    follow_up = await _follow_up(deps, query, ui, notice)
    if follow_up is not None:
        return follow_up
    profile = await _about_someone_or_somewhere(deps, query, ui, notice)
    if profile is not None:
        return profile
    searched = _it_named(deps, question.searched)  # "How many layers does it have?", after a paper was shown
    query = searched if searched != question.searched else query
    if (who := _WHO_WROTE.match(searched)) and named_terms(searched):
        searched = who.group(1)  # "Who wrote CTIGuardian?" scored its paper at 0.14, "CTIGuardian" clears it
    result = await run_tool(ui, deps, "search_papers", {"query": searched, "limit": 5})
    if unavailable(result):
        answer = SEARCH_UNAVAILABLE
        await ui.finish(answer, [])
        return Answer(answer, [], [], 1, result.output, weak=True)
    if result.failed or not result.cards:
        answer = f"{notice}\n\n{result.output}"
        await ui.finish(answer, [])
        return Answer(answer, [], [], 1, result.output if result.failed else None, weak=True)
    if isinstance(result.data, PapersFound) and result.data.weak:
        answer = "\n".join([notice, "", _nothing_answers(query, result)])
        await ui.finish(answer, result.cards)
        return Answer(answer, result.cards, [], 1, sources=result.sources, weak=True)
    passages, found, sources = await _full_text_of(deps.after(result), searched, result.cards, ui,
                                                   more=asks_for_a_fact(query))
    evidence, titles = _evidence(deps, result.cards, found)
    line = answer_line(query, evidence) or answer_line(query, titles)  # a title only when nothing else answers
    written = await asyncio.to_thread(_written_by, deps, query, result.cards)  # (may search the paper's passages)
    lines = [notice, "", *written, *_answering(line, result.cards), _what_was_found(query, result), ""]
    if passages:
        lines += ["", "From their full text:", ""]
        for card in passages:
            for quote in card.quotes:
                where = f"p. {quote.page}" if quote.page is not None else "abstract"
                lines += [f"- [{card.number}, {where}] [{md_escape(card.title)}]({card.path})",
                          f"  > {md_escape(quote.text)}"]  # fmt: skip
    answer = "\n".join(lines)
    await ui.finish(answer, result.cards)
    return Answer(answer, result.cards, [c.number for c in result.cards], 2 if passages else 1, sources=sources,
                  lead=line)  # fmt: skip


_COMPARE = re.compile(r"\b(compar\w*|versus|vs\.?|side by side|contrast\w*|differ\w*)\b", re.I)
_ASPECTS = re.compile(r"\b(?:on|by|in terms of|regarding|for|across)\s+(?:their\s+|the\s+)?([^?.!]+?)\s*[?.!]*$", re.I)


async def _comparison(deps: ToolDeps, query: str, ui: TurnUI, notice: str) -> Answer | None:
    """"Compare 2004.07180 and 1802.05365 on task and data set", or "compare them" after an answer that showed
    papers: the extractive table (`compare_papers`), with the aspects named after "on"/"by"/"in terms of" (the
    default four otherwise)."""
    if not _COMPARE.search(query):
        return None
    ids = list(dict.fromkeys(m.group(1) for m in ARXIV_MENTION.finditer(query)))
    if len(ids) < 2 and _THEM.search(query):  # "compare them": the papers the last answer showed, if it found any
        shown = [c for c in deps.focus if c.kind == CardKind.PAPER]
        if deps.focus_weak or len(shown) < 2:
            return await _which_to_compare(ui, notice, shown, deps.focus_weak)
        ids = [c.id for c in shown]
    if len(ids) < 2:
        return None
    named = _ASPECTS.search(ARXIV_MENTION.sub(" ", query))
    aspects = [a.strip() for a in re.split(r",|\band\b|;", named.group(1)) if a.strip()] if named else []
    result = await run_tool(ui, deps, "compare_papers", {"paper_ids": ids, "aspects": aspects or None})
    if result.failed or not isinstance(result.data, ComparePage):
        return None
    page = result.data
    numbers = {c.id: c.number for c in result.cards if c.kind == CardKind.PAPER and c.number}
    lines = [notice, "", f"**{len(page.rows)} papers** side by side: each cell is the paper's own sentence that "
             f"answers the column best, from its abstract or, with the page, its full text. [Open the table as a page]"
             f"({page.path}) to download it as CSV or markdown.", "", *page.table(numbers)]  # fmt: skip
    if page.unknown:
        lines += ["", "Not in this archive: " + ", ".join(md_escape(u) for u in page.unknown)]
    text, cited = link_citations("\n".join(lines), result.sources.by_number())
    await ui.finish(text, result.cards)
    return Answer(text, result.cards, cited, 1, sources=result.sources)


_THEM = re.compile(r"\b(them|these|those|both|they|the (?:two|three|four|five|papers|ones))\b", re.I)


async def _which_to_compare(ui: TurnUI, notice: str, shown: list, weak: bool) -> Answer:
    """"Compare them" when the last answer showed no papers worth comparing: ask which ones rather than compare
    the closest matches to a question nothing here answered, or one paper with nothing."""
    if weak:
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
    await ui.finish(answer, [])
    return Answer(answer, [], [], 0, weak=True)


def _what_was_found(query: str, result) -> str:
    """What the search found and how to read the cards that carry it (the papers and their sentences are on the
    cards only, not said twice)."""
    count = len(result.cards)
    found = f"**{count} paper{'s' if count != 1 else ''}** match{'es' if count == 1 else ''} **{md_escape(query)}**"
    found += ", best first"
    if isinstance(result.data, PapersFound) and result.data.named_people:
        found += " (the papers of the researcher named come first)"
    if isinstance(result.data, PapersFound) and result.data.note:  # "Read "GRPO" as ...": how it was searched
        note = result.data.note.rstrip(".")
        found += f" ({md_escape(note[:1].lower() + note[1:])})"
    return (f"{found}. Each card below is one paper with the sentences of its abstract that match best; its number"
            " is how to ask about it (\"tell me more about [1]\") and its title opens its page.")


def _nothing_answers(query: str, result) -> str:
    """No paper cleared the relevance floor: say so first, label the cards as the closest matches, and say what
    the user can do."""
    count = len(result.cards)
    return (f"**Nothing in this archive answers {md_escape(query)} well.** No paper's abstract or full text comes "
            f"close enough to be an answer. The {count} card{'s' if count != 1 else ''} below "
            f"{'are' if count != 1 else 'is'} only the closest match{'es' if count != 1 else ''}, shown as such.\n\n"
            "You can fetch a paper that is not here by its arXiv id (\"get 2005.02877\"), add your own PDF with the "
            "paperclip, or ask more broadly (fewer or more general words).")


def _evidence(deps: ToolDeps, cards: list, passages: list) -> tuple[list[Evidence], list[Evidence]]:
    """What an answer line may quote: the found papers' full-text passages in the order found, then their
    abstracts (a definition is often an abstract's first sentences); and apart, their titles, quoted only when
    nothing else answers: a title that leads with a name defines it ("What is TinyBERT?": "TinyBERT: Distilling BERT
    for Natural Language Understanding", when its abstract never says what TinyBERT is)."""
    papers = deps.archive.papers(list(dict.fromkeys([*(c.id for c in cards), *(p.paper_id for p in passages)])),
                                 deps.user)  # fmt: skip
    about = {pid: f"{paper.title} {paper.abstract or ''}" for pid, paper in papers.items()}
    titles = {pid: paper.title for pid, paper in papers.items()}
    evidence = [Evidence(p.text, p.paper_id, p.number, p.page, about.get(p.paper_id, ""), titles.get(p.paper_id, ""))
                for p in passages]  # fmt: skip
    named = []
    for card in cards:
        if (paper := papers.get(card.id)) is None:
            continue
        if paper.abstract:
            evidence.append(Evidence(paper.abstract, card.id, card.number, about=about[card.id], title=paper.title,
                                     whole=True))  # fmt: skip
        named.append(Evidence(paper.title, card.id, card.number, about=about[card.id], title=paper.title, whole=True))
    return evidence, named


_WHO_WROTE = re.compile(
    r"^\s*who\s+(?:wrote|authored|proposed|introduced|developed|created|invented|made)\s+(\S.{0,300}?)\s*\??\s*$", re.I
)


def _written_by(deps: ToolDeps, query: str, cards: list) -> list[str]:
    """"Who wrote SPECTER?": when the best paper is the one that named what the question names, its authors from the
    catalog, first. That paper: its title is the name and a colon ("SPECTER: ..."), or its abstract or full text
    says it named it ("we call them ELMo", "It also introduces the FED dataset": `names_its_own`); not a title
    that only mentions it ("Unsupervised Evaluation of Interactive Dialog with DialoGPT" did not make DialoGPT,
    nor "ImageNet classification with deep convolutional neural networks" ImageNet). Nothing when the question
    names nothing ("who wrote the paper on ...")."""
    asked = _WHO_WROTE.match(query)
    if asked and re.search(r"['’]s\b", asked.group(1)):
        return []  # "Who wrote TinyBERT's teacher model?" asks for another work's authors
    names = named_terms(query) if asked else []  # (of the whole question: "Pyserini" after "Who wrote" is a name)
    if not names or not cards or cards[0].kind != CardKind.PAPER:
        return []
    card = cards[0]
    if not all(card.title.partition(":")[0].strip().lower() == name for name in names):
        paper = deps.archive.papers([card.id], deps.user).get(card.id)
        naming = "; ".join(f"we call them {name}; we propose {name}; we introduce {name}" for name in names)
        within = Filters(paper_ids=(card.id,), viewer=deps.user)
        hits = deps.archive.passages(naming, within, limit=NAMING_PASSAGES).hits
        texts = [(paper.abstract or "") if paper else "", *(h.text for h in hits)]
        if not all(any(names_its_own(text, name) for text in texts) for name in names):
            return []
    return _authors_of(deps, card)


def _authors_of(deps: ToolDeps, card: Card) -> list[str]:
    """"**Written by** A, B and C: [n] [title](path)." from the catalog; nothing when it knows no author."""
    authors = deps.archive.author_names([card.id]).get(card.id, [])
    if not authors:
        return []
    listed = ", ".join(authors[:-1]) + f" and {authors[-1]}" if len(authors) > 1 else authors[0]
    return [f"**Written by** {md_escape(listed)}: [{card.number}] [{md_escape(card.title)}]({card.path}).", ""]


def _answering(line: AnswerLine | None, cards: list) -> list[str]:
    """The answer sentence (`assistant.answer_line`) first, quoted as it stands with its source and page."""
    if line is None:
        return []
    card = next(c for c in cards if c.id == line.evidence.paper_id)
    where = f"p. {line.evidence.page}" if line.evidence.page is not None else "abstract"
    return [f"**In the paper's own words** ([{card.number}, {where}] [{md_escape(card.title)}]({card.path})):", "",
            f"> {md_escape(line.quote)}", ""]  # fmt: skip


async def _full_text_of(deps: ToolDeps, query: str, found: list, ui: TurnUI,
                        more: bool = False) -> tuple[list, list, SourceBook]:
    """The best full-text passages (with their pages) of the papers the search found: as cards, at most two papers'
    worth, and whole (what an answer line may quote); none when those papers have no full text here. Passages of
    other papers are left out: a paper the search did not find is no answer to the question. With the sources as
    the search left them. `more`: the question asks for a fact, and more of the found papers' passages are weighed
    for its answer line (`_more_passages`)."""
    result = await run_tool(ui, deps, "search_fulltext", {"query": query, "limit": 10})
    if result.failed:
        return [], [], deps.sources
    ids = {card.id for card in found}
    passages = result.data.passages if isinstance(result.data, PassagesFound) else ()
    cards = [replace(card, quotes=card.quotes[:2]) for card in result.cards if card.id in ids][:2]
    mine = [p for p in passages if p.paper_id in ids]
    if more:  # (a search, as the tools run: off the event loop)
        mine += await asyncio.to_thread(_more_passages, deps, query, found, mine)
    return cards, mine, result.sources


def _more_passages(deps: ToolDeps, query: str, found: list, known: list[Passage]) -> list[Passage]:
    """More passages of the found papers, for the answer line only: the search shows at most three a paper, and the
    sentence that answers a fact can be a paper's fourth or fifth best (TripPy's WOZ 2.0 score). Asked again without
    the names the found papers are all about: inside SPECTER's paper "SPECTER" tells no passage from another, and
    "Which optimizer does SPECTER use?" found its "Adam optimizer" passage only as "Which optimizer does use?". None
    when the found papers have no full text."""
    numbers = {card.id: card.number for card in found if card.number}
    if not numbers or not known:
        return []
    seen = {(p.paper_id, p.text) for p in known}
    within = Filters(paper_ids=tuple(numbers), viewer=deps.user)
    papers = deps.archive.papers(list(numbers), deps.user)
    about = [f"{paper.title} {paper.abstract or ''}".lower() for paper in papers.values()]
    own = {name for name in named_terms(query) if about and all(says(text, name) for text in about)}
    rest = " ".join(w for w in query.split() if bare(w).lower() not in own)  # "Which optimizer does use?"
    more = []
    for asked in [query, rest] if own and rest.strip() else [query]:
        for h in deps.archive.passages(asked, within, limit=MORE_PASSAGES).hits:
            if h.paper.id in numbers and (h.paper.id, h.text) not in seen:
                seen.add((h.paper.id, h.text))
                more.append(Passage(h.paper.id, numbers[h.paper.id], h.page, h.text))
    return more


_PERSON = re.compile(r"\b(she|he|they|her|him|his|hers|their|them|this (?:person|researcher|author))\b", re.I)
_THING = re.compile(r"\b(it|its|this paper|that paper|the paper)\b", re.I)
_WROTE_WITH = re.compile(
    r"\b(co-?author\w*|collaborat\w*|(?:writ\w*|wrote|work\w*|publish\w*)\b[^?.!]{0,20}\bwith)\b", re.I
)
_CITES = re.compile(r"\b(cit(?:e|es|ed|ing|ation|ations)|follow(?:ed|s)? (?:up|on))\b", re.I)
_REFERENCES = re.compile(r"\b(reference\w*|build[s]? on|based on|prior work)\b", re.I)


def _last_paper(deps: ToolDeps) -> Card | None:
    """The paper "it" refers to: the first paper the last answer showed, unless that answer found nothing that
    answers well (its cards were only the closest matches)."""
    return None if deps.focus_weak else next((c for c in deps.focus if c.kind == CardKind.PAPER), None)


# After "it", words that make it refer to nothing ("Is it true that ...", "is it possible to ..."); after "the paper",
# words that describe another paper ("the paper on ...", "the paper that ...")
_EMPTY_IT = frozenset("true possible likely known necessary worth easy hard better is was seems".split())
_DESCRIBED = frozenset("on about that which by from where in with titled called named who for".split())
_THE_PAPER = frozenset({"it", "this", "that", "this paper", "that paper", "the paper"})


def _it(query: str) -> re.Match | None:
    """Where a question refers to the last answer's paper ("it", "its", "this paper", "the paper"), if it does."""
    found = _THING.search(query)
    if found is None:
        return None
    after = query[found.end() :].split()[:1]
    word = after[0].lower().strip("?.,!") if after else ""
    said = found.group(1).lower()
    if (said == "it" and word in _EMPTY_IT) or (said.endswith("paper") and word in _DESCRIBED):
        return None
    return found


def _it_named(deps: ToolDeps, text: str) -> str:
    """A question about "it" (or "its", "this paper", "the paper") after an answer that showed a paper, as search
    reads it: the paper named where the question says "it" ("How many layers does it have?" after TinyBERT's paper:
    "How many layers does TinyBERT have?"), by its title's name ("TinyBERT: ...") or else its whole title in quotes.
    The question as it is when nothing was shown, or "it" refers to nothing (`_it`: "Is it true that ...", "the
    paper on ...")."""
    paper = _last_paper(deps)
    found = _it(text) if paper is not None else None
    if found is None or paper is None:
        return text
    head, colon, _ = paper.title.partition(":")
    name = head.strip() if colon and len(head.split()) <= 3 else f'"{paper.title}"'
    said = f"{name}'s" if found.group(1).lower() == "its" else name
    return f"{text[: found.start()]}{said}{text[found.end() :]}"


async def _follow_up(deps: ToolDeps, query: str, ui: TurnUI, notice: str) -> Answer | None:
    """A follow-up that names no one ("who else did she write with?", "what cites it?", "who wrote it?") is about
    what the last answer showed: its first researcher card for a person, its first paper card for a thing (none when
    that answer found nothing that answers well)."""
    person = next((c for c in deps.focus if c.kind == CardKind.RESEARCHER), None)
    paper = _last_paper(deps)
    who = _WHO_WROTE.match(query)  # "Who wrote it?" (not "Who wrote its predecessor?")
    if (paper is not None and who and who.group(1).lower() in _THE_PAPER
            and (written := await asyncio.to_thread(_authors_of, deps, paper))):  # fmt: skip
        answer = "\n".join([notice, "", *written]).rstrip()
        await ui.finish(answer, [paper])
        return Answer(answer, [paper], [paper.number] if paper.number else [], 0, sources=deps.sources)
    if person is not None and _PERSON.search(query):
        if _WROTE_WITH.search(query):
            result = await run_tool(ui, deps, "get_researcher", {"researcher_id": int(person.id)})
            if result.failed or not isinstance(result.data, ResearcherPage):
                return None
            section = [
                f"- [{md_escape(c.label)}]({c.href}): {c.count} shared paper{'s' if c.count != 1 else ''}"
                for c in result.data.coauthors
            ] or ["No co-authors are known in this archive."]
            lines = [notice, "", f"Co-authors of **[{md_escape(person.title)}]({person.path})** in this archive:", "",
                     *section]  # fmt: skip
        else:
            result = await run_tool(ui, deps, "summarize_researcher", {"researcher_id": int(person.id)})
            if result.failed or not isinstance(result.data, ProfileSummary):
                return None
            lines = [notice, "", md_escape(result.data.assembled)]
        answer = "\n".join(lines)
        await ui.finish(answer, result.cards)
        return Answer(answer, result.cards, [], 1, sources=result.sources)
    if paper is not None and _it(query) and (_CITES.search(query) or _REFERENCES.search(query)):
        tool = "get_cited_by" if _CITES.search(query) else "get_references"
        result = await run_tool(ui, deps, tool, {"paper_id": paper.id})
        if result.failed:
            return None
        text, cited = link_citations(result.output, result.sources.by_number())
        answer = f"{notice}\n\n**{md_escape(paper.title)}**\n\n{text}"
        await ui.finish(answer, result.cards)
        return Answer(answer, result.cards, cited, 1, sources=result.sources)
    return None


async def _about_someone_or_somewhere(deps: ToolDeps, query: str, ui: TurnUI, notice: str) -> Answer | None:
    """A question naming a researcher or an institution is answered with that profile's summary assembled from
    the catalog."""
    named = named_profile(deps, query)
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
    answer = "\n".join(lines)
    await ui.finish(answer, result.cards)
    return Answer(answer, result.cards, [c.number for c in paper_cards], 1, sources=result.sources)
