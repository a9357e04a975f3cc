"""Retrieval-only mode: with no LLM configured, a small planner picks the tools by what the question was read to ask
(`assistant.reading`: a comparison, a paper by its arXiv id, a follow-up or a profile, each in `assistant.follow_ups`;
else a search, with who wrote what it names, the answer line and the best passages), and the composer
(`assistant.composer`) builds the answer from what they found."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from assistant import follow_ups
from assistant.answer_line import AnswerLine, answer_line
from assistant.composer import retrieved, said
from assistant.tools.base import CardKind, Evidence, PapersFound, PassagesFound, SourceBook, unavailable
from assistant.follow_ups import authors_of
from assistant.reading import Intent, ReadQuestion, read_question
from assistant.tools import ToolDeps
from assistant.turn import Answer, Question, TurnUI, run_tool
from pages.base import md_escape
from retrieval.search.relevance import bare, named_terms, names_its_own, says
from retrieval.vectors.index import Filters

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
    read = read_question(question, deps.focus, deps.focus_weak)  # (once: every branch reads `read`)
    for intent in read.intents:  # the first branch that finds something answers (a search always does)
        if (answer := await _BRANCHES[intent](deps, read, ui, notice)) is not None:
            return answer
    raise AssertionError("a search always answers")  # (`Intent.TOPIC` fires for every question)


async def _paper(deps: ToolDeps, read: ReadQuestion, ui: TurnUI, notice: str) -> Answer | None:
    """"What is 2006.07357 about?": the paper by the first arXiv id the question names, when it is here."""
    result = await run_tool(ui, deps, "get_paper", {"paper_id": read.arxiv_ids[0]})
    if result.failed:
        return None
    (card,) = result.cards
    answer = f"{notice}\n\nPaper [{card.number}]:\n\n{result.data.to_markdown()}"
    return await retrieved(ui, answer, result.cards, [c.number for c in result.cards if c.number],
                           tool_calls=1, sources=result.sources)  # fmt: skip


async def _searched(deps: ToolDeps, read: ReadQuestion, ui: TurnUI, notice: str) -> Answer:
    """A search for what the question asks (who wrote what it names, a fact, a topic)."""
    result = await run_tool(ui, deps, "search_papers", {"query": read.searched, "limit": 5})
    if unavailable(result):
        return await retrieved(ui, SEARCH_UNAVAILABLE, [], tool_calls=1, error=said(result), weak=True)
    if result.failed or not result.cards:
        return await retrieved(ui, f"{notice}\n\n{said(result)}", [], tool_calls=1,
                               error=said(result) if result.failed else None, weak=True)  # fmt: skip
    if isinstance(result.data, PapersFound) and result.data.weak:
        answer = "\n".join([notice, "", _nothing_answers(read.query, result)])
        return await retrieved(ui, answer, result.cards, tool_calls=1, sources=result.sources, weak=True)
    return await _found(deps, read, result, ui, notice)


async def _found(deps: ToolDeps, read: ReadQuestion, result, ui: TurnUI, notice: str) -> Answer:
    """What the search found: who wrote what the question names, the answer line, the papers on their cards, and
    the best passages of their full text."""
    query = read.query
    passages, found, sources = await _full_text_of(deps.after(result), read.searched, result.cards, ui,
                                                   more=read.fact)  # fmt: skip
    evidence, titles = _evidence(deps, result.cards, found)
    line = answer_line(query, evidence) or answer_line(query, titles)  # a title only when nothing else answers
    written = await asyncio.to_thread(_written_by, deps, read.authors_named, result.cards)  # (may search passages)
    lines = [notice, "", *written, *_answering(line, result.cards), _what_was_found(query, result), ""]
    if passages:
        lines += ["", "From their full text:", ""]
        for card in passages:
            for quote in card.quotes:
                where = f"p. {quote.page}" if quote.page is not None else "abstract"
                lines += [f"- [{card.number}, {where}] [{md_escape(card.title)}]({card.path})",
                          f"  > {md_escape(quote.text)}"]  # fmt: skip
    return await retrieved(ui, "\n".join(lines), result.cards, [c.number for c in result.cards],
                           tool_calls=2 if passages else 1, sources=sources, lead=line, quoted=passages)  # fmt: skip


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
    evidence = [replace(p, about=about.get(p.paper_id, ""), title=titles.get(p.paper_id, "")) for p in passages]
    named = []
    for card in cards:
        if (paper := papers.get(card.id)) is None:
            continue
        if paper.abstract:
            evidence.append(Evidence(paper.abstract, card.id, card.number, about=about[card.id], title=paper.title,
                                     whole=True))  # fmt: skip
        named.append(Evidence(paper.title, card.id, card.number, about=about[card.id], title=paper.title, whole=True))
    return evidence, named


def _written_by(deps: ToolDeps, names: tuple[str, ...], cards: list) -> list[str]:
    """"Who wrote SPECTER?": when the best paper is the one that named what the question `names`
    (`ReadQuestion.authors_named`), its authors from the catalog, first. That paper: its title is the name and a
    colon ("SPECTER: ..."), or its abstract or full text
    says it named it ("we call them ELMo", "It also introduces the FED dataset": `names_its_own`); not a title
    that only mentions it ("Unsupervised Evaluation of Interactive Dialog with DialoGPT" did not make DialoGPT,
    nor "ImageNet classification with deep convolutional neural networks" ImageNet). Nothing when the question
    names nothing ("who wrote the paper on ...")."""
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
    return authors_of(deps, card)


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


def _more_passages(deps: ToolDeps, query: str, found: list, known: list[Evidence]) -> list[Evidence]:
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
                more.append(Evidence(h.text, h.paper.id, numbers[h.paper.id], h.page, passage=h.number))
    return more


_BRANCHES = {
    Intent.COMPARE: follow_ups.comparison,
    Intent.WHICH_TO_COMPARE: follow_ups.which_to_compare,
    Intent.PAPER: _paper,
    Intent.WHO_WROTE_IT: follow_ups.who_wrote_it,
    Intent.COAUTHORS: follow_ups.coauthors,
    Intent.RESEARCHER: follow_ups.their_work,
    Intent.CITED_BY: follow_ups.citing_it,
    Intent.REFERENCES: follow_ups.its_references,
    Intent.PROFILE: follow_ups.about_someone_or_somewhere,
    Intent.WHO_WROTE: _searched,
    Intent.FACT: _searched,
    Intent.TOPIC: _searched,
}
